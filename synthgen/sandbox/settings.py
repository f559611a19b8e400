"""How untrusted code runs: the sandbox's settings (synthgen.sandbox.isolation has the isolation levels)."""

from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from synthgen.settings.base import Section, Settings, cli
from synthgen.settings.shared import split_commas

# A job's limits when nothing sets them (synthgen.sandbox.results.Job reads these too).
JOB_TIMEOUT_S = 2.0
JOB_MEMORY_MB = 512
SANDBOX_LIBRARIES = ("numpy",)  # what contest solutions import (see synthgen.sandbox.isolation)


class SandboxSettings(Section):
    """How untrusted code runs."""

    model_config = ConfigDict(extra="forbid")
    workers: int | None = Field(None, ge=1, le=1024, description="sandbox worker processes (default: CPU count)")
    timeout_s: float = Field(JOB_TIMEOUT_S, gt=0, le=600, description="wall-clock limit of one sandbox job, seconds")
    memory_mb: int = Field(JOB_MEMORY_MB, ge=32, le=65536, description="memory limit of one sandbox job, MiB")
    allow_unsafe: bool = Field(False, description="accept the rlimits-only sandbox (no isolation) where bwrap fails")
    python: str | None = Field(
        None, description="the interpreter that runs untrusted code (default: /usr/bin/python3, else this one)"
    )
    libraries: Annotated[list[str], BeforeValidator(split_commas)] = Field(
        default_factory=lambda: list(SANDBOX_LIBRARIES),
        description="packages importable in the sandbox, bound read-only from this environment "
        "(or the sandbox interpreter's own copy)",
    )
    unhashed: ClassVar[frozenset[str]] = frozenset({"workers", "allow_unsafe", "python"})


class SandboxRunSettings(SandboxSettings, Settings):
    """`synthgen sandbox [FILE]`: a job line's timeout_s and memory_mb win over --timeout-s and --memory-mb."""

    section: ClassVar[str] = "sandbox"
    file: str = Field("-", json_schema_extra=cli(argument=True), description="JSON-lines jobs; - for standard input")
    isolation: Literal["auto", "bwrap"] = Field("auto", description="auto (bwrap, else allowed rlimits-only) or bwrap")
