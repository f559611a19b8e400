"""Settings of `synthgen demo`: the whole pipeline, small, on built-in defaults."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field

from synthgen.config.common import EnvListMixin, RunSettings


class DemoSettings(EnvListMixin, RunSettings):
    section = "demo"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "base_url", "progress"})

    run_dir: Path = Path("data/runs/demo")
    seeds: int = Field(32, ge=1, description="seeds from the standard library")
    turns: int = Field(6, ge=1)
    attempts: int = Field(32, ge=1)
    seed: int = 0
    # None: start the scripted server on a free local port. A URL: use that server (e.g. vLLM).
    base_url: str | None = None
    teacher_model: str = "openai/gpt-oss-120b"
    student_model: str = "openai/gpt-oss-120b"
    progress: bool = True
