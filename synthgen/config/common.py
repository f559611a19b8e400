"""Settings pieces several stages share: where the run lives, the sandbox, the LLM roles."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from synthgen.config.base import ENV_NAMES, Settings

DEFAULT_RUN_DIR = Path("data/runs/default")


class RunSettings(Settings):
    """A stage that reads and writes under one run directory (`data/runs/<name>/<stage>/`)."""

    run_dir: Path = DEFAULT_RUN_DIR
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir"})


class InputSettings(BaseModel):
    """A stage that reads another stage's folder, which must be finished unless said otherwise."""

    allow_partial: bool = Field(
        False,
        description="read an unfinished input stage as far as it is finished, on purpose "
        "(the console and the output's metadata say so)",
    )


class ShardedSettings(RunSettings):
    """A stage that a Slurm array splits: task `shard` of `num_shards` does every n-th item."""

    shard: int = Field(0, ge=0)
    num_shards: int = Field(1, ge=1)
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "shard", "num_shards"})

    @model_validator(mode="after")
    def _shard_in_range(self):
        if self.shard >= self.num_shards:
            raise ValueError(f"shard {self.shard} is out of range for num_shards {self.num_shards}")
        return self


class SandboxSettings(BaseModel):
    """How untrusted code runs: see synthgen.sandbox for the isolation levels."""

    model_config = ConfigDict(extra="forbid")
    workers: int | None = Field(None, ge=1, description="sandbox worker processes (default: CPU count)")
    timeout_s: float = Field(2.0, gt=0, le=600)
    memory_mb: int = Field(512, ge=32, le=65536)
    allow_unsafe: bool = False
    unhashed: ClassVar[frozenset[str]] = frozenset({"workers", "allow_unsafe"})


class RoleSettings(BaseModel):
    """One LLM role on an OpenAI-compatible server such as vLLM. Each role is its own subclass with
    its own defaults, so a partial override (a URL, a model) never resets the rest of the role."""

    model_config = ConfigDict(extra="forbid")
    base_url: str = Field("http://127.0.0.1:8000/v1", description="OpenAI-compatible server, e.g. vLLM's /v1")
    model: str = Field("openai/gpt-oss-120b", description="model name the server serves")
    api_key: str | None = Field(None, description="API key (default: $OPENAI_API_KEY, else 'EMPTY' as vLLM expects)")
    reasoning_effort: Literal["low", "medium", "high"] | None = Field("high", description="gpt-oss reasoning effort")
    temperature: float = Field(1.0, ge=0, le=2, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_tokens: int = Field(32768, ge=1, le=1_000_000, description="completion tokens per answer, reasoning included")
    timeout_s: float = Field(3600.0, gt=0, description="longest one request may take, retries not included")
    # The server address, key and timeout decide where a request goes, not what it asks for.
    unhashed: ClassVar[frozenset[str]] = frozenset({"base_url", "api_key", "timeout_s"})

    def sampling(self) -> dict:
        """The settings that decide an answer (sent with every request; part of the cache key)."""
        return {
            "reasoning_effort": self.reasoning_effort,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }


class TeacherSettings(RoleSettings):
    """The teacher: gpt-oss-120b in high reasoning mode writes and mutates problems (the paper's setting)."""

    reasoning_effort: Literal["low", "medium", "high"] | None = Field("high", description="gpt-oss reasoning effort")
    max_tokens: int = Field(32768, ge=1, le=1_000_000, description="completion tokens per answer, reasoning included")


class StudentSettings(RoleSettings):
    """The student: the same model in low reasoning mode attempts every problem M times."""

    reasoning_effort: Literal["low", "medium", "high"] | None = Field("low", description="gpt-oss reasoning effort")
    max_tokens: int = Field(16384, ge=1, le=1_000_000, description="completion tokens per answer, reasoning included")


class LLMSettings(BaseModel):
    """How hard the client pushes and retries; none of it changes what a request asks for."""

    model_config = ConfigDict(extra="forbid")
    max_attempts: int = Field(5, ge=1, le=100, description="tries per request before it is an infra failure")
    backoff_initial_s: float = Field(1.0, ge=0, description="first retry delay")
    backoff_max_s: float = Field(60.0, ge=0, description="longest retry delay")
    use_n: bool = Field(True, description="ask for M samples in one request (n=M) where the server allows")


def check_env_names(names: list[str]) -> list[str]:
    if not names:
        raise ValueError("at least one environment is needed")
    unknown = [n for n in names if n not in ENV_NAMES]
    if unknown:
        raise ValueError(f"unknown environment {unknown[0]!r}; choose from {', '.join(ENV_NAMES)}")
    return list(dict.fromkeys(names))


class EnvListMixin(BaseModel):
    envs: list[str] = Field(default_factory=lambda: list(ENV_NAMES))

    @field_validator("envs", mode="before")
    @classmethod
    def _split(cls, value):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        return value

    @field_validator("envs")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        return check_env_names(value)
