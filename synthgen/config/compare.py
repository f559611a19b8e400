"""Settings of `synthgen compare`: one HTML page comparing training runs and generate runs."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from synthgen.settings.base import Settings, cli


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
