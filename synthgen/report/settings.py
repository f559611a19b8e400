"""Settings of `synthgen report` (one self-contained HTML page about a run) and `synthgen compare`
(one page comparing training runs and generate runs)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from synthgen.settings.base import Settings, cli
from synthgen.settings.shared import RunSettings


class ReportSettings(RunSettings):
    section = "report"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "output"})

    run_dir: Path = Field(
        ...,
        description="the run directory (the one holding seeds/, generate/, filter/, ...); unfinished stages "
        "are shown as far as they are written, and marked so",
        json_schema_extra=cli(argument=True),
    )
    output: Path | None = Field(None, description="the HTML file to write (default: RUN_DIR/report.html)")
    examples: int = Field(6, ge=0, le=100, description="example problems shown, spread over bins and environments")
    chains: int = Field(3, ge=0, le=50, description="example chains shown (hard -> medium -> easy)")
    seed: int = Field(0, description="which examples are picked")


class CompareSettings(Settings):
    section = "compare"
    unhashed: ClassVar[frozenset[str]] = frozenset({"inputs", "output"})

    inputs: list[Path] = Field(
        ...,
        description="training outputs (`train --output`), run directories (generate, filter; a run's own "
        "train/ too), or folders holding them",
        json_schema_extra=cli(argument=True, metavar="RUN_OR_OUTPUT..."),
    )
    output: Path = Field(Path("compare.html"), description="the HTML file to write")
    band: Literal["range", "std"] = Field(
        "range",
        description="the shading around the mean of runs that differ only in seed: range (min to max) or std "
        "(one standard deviation)",
    )
