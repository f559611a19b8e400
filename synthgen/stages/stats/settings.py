"""Settings of `synthgen stats`: how a run's numbers are summarised (nothing is written)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from synthgen.settings.base import cli
from synthgen.settings.shared import RunSettings
from synthgen.stages.plan.settings import ThroughputSettings


class StatsSettings(ThroughputSettings, RunSettings):
    section = "stats"

    run_dir: Path = Field(
        ...,
        description="the run directory (the one holding seeds/, generate/, filter/, ...)",
        json_schema_extra=cli(argument=True),
    )
    as_json: bool = Field(False, description="print the numbers as JSON (for scripts)", json_schema_extra=cli("--json"))
    buckets: int = Field(10, ge=2, le=100, description="pass-rate histogram buckets over [0, 1]")
