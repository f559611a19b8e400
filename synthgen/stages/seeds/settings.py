"""Settings of `synthgen seeds`: where snippets come from and how they are cut."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from synthgen.settings.base import cli
from synthgen.settings.shared import ShardedSettings


class SeedsSettings(ShardedSettings):
    section = "seeds"

    source: Literal["dir", "starcoder", "solutions", "completions"] = Field(
        "dir",
        json_schema_extra=cli(argument=True),
        description="where snippets come from: dir (source trees), starcoder (Parquet with a text column), "
        "solutions (JSONL/Parquet, whole solutions) or completions (a training output's solved completions, "
        "whole: train with --save-completions solved)",
    )
    paths: list[str] = Field(
        default_factory=list,
        json_schema_extra=cli(argument=True),
        description="folders or files to read (dir: default this Python's standard library)",
    )
    n: int = Field(200, ge=1, le=100_000_000, description="seeds to write, over all shards")
    min_lines: int = Field(25, ge=1, description="shortest snippet in lines (dir, starcoder)")
    max_lines: int = Field(
        50, ge=1, description="longest snippet in lines (dir, starcoder; solutions and completions are whole)"
    )
    seed: int = Field(0, description="random seed: same seed, same snippets")
    windows_per_file: int = Field(2, ge=1, le=1000, description="random windows tried per file")
    extensions: list[str] = Field(default_factory=lambda: [".py"], description="file extensions read by dir")
    max_filler_fraction: float = Field(
        0.5, ge=0, le=1, description="skip a window when more than this share of its lines is blank, comments or data"
    )
    code_column: str = Field("code", description="solutions: the column holding the code")
    content_column: str = Field("content", description="starcoder: the column holding the text")

    @model_validator(mode="after")
    def _bounds(self):
        if self.min_lines > self.max_lines:
            raise ValueError(f"min_lines ({self.min_lines}) exceeds max_lines ({self.max_lines})")
        return self
