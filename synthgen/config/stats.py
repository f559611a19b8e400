"""Settings of `synthgen stats`: how a run's numbers are summarised (nothing is written)."""

from __future__ import annotations

from pydantic import Field

from synthgen.config.common import RunSettings


class StatsSettings(RunSettings):
    section = "stats"

    buckets: int = Field(10, ge=2, le=100, description="pass-rate histogram buckets over [0, 1]")
