"""Settings of `synthgen export`: a run's binned problems and chains as a Hugging Face dataset folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from pydantic import Field, field_validator

from synthgen.settings.base import cli
from synthgen.settings.shared import InputSettings, RunSettings

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
    rows_per_file: int = Field(100_000, ge=100, le=10_000_000, description="rows per Parquet file at most")

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
