"""How untrusted code runs: the sandbox's settings (synthgen.sandbox has the isolation levels)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

MAX_WORKERS = 1024


class SandboxSettings(BaseModel):
    """How untrusted code runs: see synthgen.sandbox for the isolation levels."""

    model_config = ConfigDict(extra="forbid")
    workers: int | None = Field(None, ge=1, le=MAX_WORKERS, description="sandbox worker processes (default: CPU count)")
    timeout_s: float = Field(2.0, gt=0, le=600, description="wall-clock limit of one sandbox job, seconds")
    memory_mb: int = Field(512, ge=32, le=65536, description="memory limit of one sandbox job, MiB")
    allow_unsafe: bool = Field(False, description="accept the rlimits-only sandbox where no real isolation works")
    unhashed: ClassVar[frozenset[str]] = frozenset({"workers", "allow_unsafe"})
