"""Settings of `synthgen export`: a run's binned problems and chains as a Hugging Face dataset folder, or
as the files of another trainer (verl, verifiers, TRL) or an SFT set of solved attempts (`--format`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, Field, field_validator, model_validator

from synthgen.settings.base import cli
from synthgen.settings.shared import InputSettings, RunSettings, split_commas

# A Hub repository id as `huggingface_hub` accepts it, with the owner required (a bare name would
# land in whichever account the token belongs to, which is rarely what a script means).
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}\Z")


class ExportSettings(InputSettings, RunSettings):
    section = "export"
    # Nothing here shapes the problems themselves; the card records the stages' own hashes.
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "out", "push_to_hub", "private", "allow_partial"})

    run_dir: Path = Field(
        ...,
        description="the run directory to export (it needs a finished bin stage; chain is added when present)",
        json_schema_extra=cli(argument=True),
    )
    out: Path = Field(
        ...,
        description="the dataset folder to write; an earlier export there is replaced whole, any other "
        "non-empty folder is refused",
        json_schema_extra=cli(argument=True),
    )
    push_to_hub: str | None = Field(
        None,
        description="also upload the folder to this Hugging Face dataset repository (OWNER/NAME, created if "
        "missing); needs a login (`hf auth login` or HF_TOKEN)",
        json_schema_extra=cli(metavar="OWNER/NAME"),
    )
    private: bool = Field(False, description="create the Hub repository as private (with --push-to-hub)")
    license: str = Field(
        "other",
        description="license identifier written into the card (e.g. apache-2.0); the default 'other' says "
        "that the terms of your seeds and models decide",
    )
    pretty_name: str | None = Field(None, description="the dataset's title in the card (default: from the run name)")
    rows_per_file: int = Field(
        100_000, ge=100, le=10_000_000, description="rows per Parquet file at most (--format hf)"
    )
    format: Literal["hf", "verl", "verifiers", "trl", "sft"] = Field(
        "hf",
        description="what OUT holds: hf, a dataset folder of synthgen's own columns, one config per environment "
        "and bin; verl, train/test Parquet for verl (prompt, reward_model, extra_info); verifiers, an "
        "installable verifiers environment package; trl, train/test Parquet for a TRL GRPOTrainer; sft, solved "
        "student attempts as chat messages (needs a run that kept attempts: --keep-attempts solved)",
        json_schema_extra=cli(metavar="hf|verl|verifiers|trl|sft"),
    )
    test_fraction: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="hold out about this share of the problems as the test split, per bin, whole lineages and "
        "chains at a time (not with --format hf)",
    )
    test_bins: Annotated[list[str], BeforeValidator(split_commas)] = Field(
        default_factory=list,
        description="put the problems of these bins in the test split, the rest in train; a chain goes where "
        "its hard start goes (comma-separated; not with --format hf)",
        json_schema_extra=cli(metavar="BIN,..."),
    )
    seed: int = Field(0, ge=0, description="seed of the --test-fraction draw (the same seed gives the same split)")
    max_attempts_per_problem: int = Field(
        4, ge=1, le=1024, description="--format sft: solved attempts per problem at most (lowest attempt indices)"
    )

    @model_validator(mode="after")
    def _split_and_format(self):
        if self.test_fraction is not None and self.test_bins:
            raise ValueError("--test-fraction and --test-bins are two ways to split: give one of them")
        if self.format == "hf" and (self.test_fraction is not None or self.test_bins):
            raise ValueError(
                "--format hf has one config per environment and bin and no test split; "
                "--test-fraction and --test-bins go with --format verl, verifiers, trl or sft"
            )
        if self.push_to_hub and self.format == "verifiers":  # every other format's folder is a plain dataset
            raise ValueError(
                f"--format {self.format} writes a Python package, not a dataset: install it with pip instead of "
                "--push-to-hub"
            )
        return self

    @field_validator("push_to_hub")
    @classmethod
    def _repo_id(cls, value: str | None) -> str | None:
        if value is not None and not _REPO_ID.match(value):
            raise ValueError(f"not a Hub repository id: {value!r} (write OWNER/NAME)")
        return value

    @field_validator("license")
    @classmethod
    def _license(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", value):
            raise ValueError(f"not a license identifier: {value!r} (lower case, e.g. apache-2.0, cc-by-4.0, other)")
        return value
