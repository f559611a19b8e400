"""Settings of `synthgen demo`: the whole pipeline, small, on built-in defaults."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field

from synthgen.llm.settings import LLMSettings, StudentSettings, TeacherSettings
from synthgen.settings.shared import MAX_ATTEMPTS, MAX_TURNS, EnvListMixin, RunSettings


class DemoSettings(EnvListMixin, RunSettings):
    section = "demo"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "base_url", "progress", "llm"})

    run_dir: Path = Field(Path("data/runs/demo"), description="where the run's stages are written")
    seeds: int = Field(32, ge=1, le=100_000, description="seeds taken from the standard library")
    turns: int = Field(6, ge=1, le=MAX_TURNS, description="teacher turns per lineage")
    attempts: int = Field(32, ge=1, le=MAX_ATTEMPTS, description="student attempts per problem")
    seed: int = Field(0, description="random seed")
    base_url: str | None = Field(
        None,
        description="a real OpenAI-compatible server (e.g. vLLM) for both roles (--teacher-url/--student-url "
        "win over it); default: start the scripted stand-in server",
    )
    teacher: TeacherSettings = Field(default_factory=TeacherSettings)
    student: StudentSettings = Field(default_factory=StudentSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    progress: bool = Field(True, description="show live progress")
