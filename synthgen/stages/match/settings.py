"""Settings of `synthgen match`: subsample one problem set to another's pass-rate histogram."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field

from synthgen.settings.base import cli
from synthgen.settings.shared import RunSettings


class MatchSettings(RunSettings):
    section = "match"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "output"})

    source: Path = Field(
        ...,
        description="the problem set to subsample (any folder `train --data` reads: RUN_DIR/filter, a bin, ...)",
        json_schema_extra=cli(argument=True),
    )
    like: Path = Field(..., description="the problem set whose pass-rate histogram to match (per environment)")
    output: Path = Field(..., description="the folder to write the matched set to (one Parquet file, match.json)")
    attempts: int = Field(
        32, ge=1, le=1024, description="attempts behind a pass rate: the histogram has attempts + 1 buckets"
    )
    seed: int = Field(0, description="which problems of a bucket are kept")
