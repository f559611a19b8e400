"""Settings of `synthgen import`: real code-contest problem sets -> a problems folder `train` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import cli
from synthgen.settings.shared import RunSettings, split_commas


class ImportSandboxSettings(SandboxSettings):
    timeout_s: float = Field(6.0, gt=0, le=600, description="wall clock of one test, seconds")


class ImportSettings(RunSettings):
    section = "import"

    paths: list[str] = Field(
        default_factory=list,
        description="problem-set files (JSON, JSONL, JSONL.gz, Parquet) or folders of them",
        json_schema_extra=cli(argument=True, metavar="FILES..."),
    )
    format: Literal["auto", "lcb", "apps", "codecontests"] = Field(
        "auto", description="the layout of the rows: lcb, apps (APPS / TACO), codecontests, or auto (from the columns)"
    )
    name: str | None = Field(None, description="name of the set in the problems' turn ids (default: the first file's)")
    output: Path | None = Field(None, description="the problems folder written (default RUN_DIR/real)")
    check_solutions: bool = Field(
        True, description="run the given reference solutions on their tests; a problem none of them passes is rejected"
    )
    solutions_tried: int = Field(3, ge=1, le=100, description="reference solutions tried per problem at most")
    include_generated: bool = Field(False, description="CodeContests: add the generated tests to the hidden ones")
    max_tests: int | None = Field(None, ge=1, description="keep at most this many tests per problem (public first)")
    max_problems: int | None = Field(None, ge=1, description="import at most this many problems (the first ones)")
    sandbox: ImportSandboxSettings = Field(default_factory=ImportSandboxSettings)

    @field_validator("paths", mode="before")
    @classmethod
    def _split(cls, value):
        return split_commas(value)

    def output_dir(self) -> Path:
        return Path(self.output) if self.output else Path(self.run_dir) / "real"
