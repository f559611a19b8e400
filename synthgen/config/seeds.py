"""Settings of `synthgen seeds`: where snippets come from and how they are cut."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from synthgen.config.common import ShardedSettings


class SeedsSettings(ShardedSettings):
    section = "seeds"

    source: Literal["dir", "starcoder", "solutions"] = "dir"
    # Empty for `dir` means the running Python's standard library.
    paths: list[str] = Field(default_factory=list)
    n: int = Field(200, ge=1, description="seeds to write (over all shards)")
    min_lines: int = Field(25, ge=1)
    max_lines: int = Field(50, ge=1)
    seed: int = 0
    windows_per_file: int = Field(2, ge=1, description="random windows tried per file")
    extensions: list[str] = Field(default_factory=lambda: [".py"])
    # A window is skipped when more than this share of its lines is blank, comments or data.
    max_filler_fraction: float = Field(0.5, ge=0, le=1)
    code_column: str = "code"  # solutions files
    content_column: str = "content"  # starcoder shards

    @model_validator(mode="after")
    def _bounds(self):
        if self.min_lines > self.max_lines:
            raise ValueError(f"min_lines ({self.min_lines}) exceeds max_lines ({self.max_lines})")
        return self
