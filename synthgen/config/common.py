"""Settings pieces several stages share: where the run lives, the sandbox, the LLM roles."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from synthgen.config.base import ENV_NAMES, Settings, cli

DEFAULT_RUN_DIR = Path("data/runs/default")
# Upper bounds that keep one process within a machine's means (a typo of 10^8 attempts would
# otherwise block the event loop for minutes and take gigabytes); documented in the README.
MAX_ATTEMPTS = 1024
MAX_TURNS = 64
MAX_IN_FLIGHT = 65536
MAX_WORKERS = 1024


class RunSettings(Settings):
    """A stage that reads and writes under one run directory (`data/runs/<name>/<stage>/`)."""

    run_dir: Path = Field(DEFAULT_RUN_DIR, description="run directory: each stage reads and writes RUN_DIR/<stage>/")
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

    shard: int = Field(0, ge=0, description="this task's shard index", json_schema_extra=cli(envvar="SLURM_ARRAY_TASK_ID"))
    num_shards: int = Field(1, ge=1, le=100_000, description="number of shards the work is split into")
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "shard", "num_shards"})

    @model_validator(mode="after")
    def _shard_in_range(self):
        if self.shard >= self.num_shards:
            raise ValueError(f"shard {self.shard} is out of range for num_shards {self.num_shards}")
        return self


class SandboxSettings(BaseModel):
    """How untrusted code runs: see synthgen.sandbox for the isolation levels."""

    model_config = ConfigDict(extra="forbid")
    workers: int | None = Field(None, ge=1, le=MAX_WORKERS, description="sandbox worker processes (default: CPU count)")
    timeout_s: float = Field(2.0, gt=0, le=600, description="wall-clock limit of one sandbox job, seconds")
    memory_mb: int = Field(512, ge=32, le=65536, description="memory limit of one sandbox job, MiB")
    allow_unsafe: bool = Field(False, description="accept the rlimits-only sandbox where no real isolation works")
    unhashed: ClassVar[frozenset[str]] = frozenset({"workers", "allow_unsafe"})


_EFFORT = {"description": "gpt-oss reasoning effort sent with every request",
           "json_schema_extra": cli("effort")}
_MAX_TOKENS = {"ge": 1, "le": 1_000_000, "description": "completion tokens per answer, reasoning included"}


class RoleSettings(BaseModel):
    """One LLM role on an OpenAI-compatible server such as vLLM. Each role is its own subclass with
    its own defaults, so a partial override (a URL, a model) never resets the rest of the role."""

    model_config = ConfigDict(extra="forbid")
    base_url: str = Field("http://127.0.0.1:8000/v1", description="OpenAI-compatible server (e.g. vLLM's /v1)",
                          json_schema_extra=cli("url"))
    model: str = Field("openai/gpt-oss-120b", description="model name the server serves")
    api_key: str | None = Field(None, description="API key (default: $OPENAI_API_KEY, else 'EMPTY' as vLLM expects)",
                                json_schema_extra=cli(hidden=True))  # never on a command line (ps shows it)
    reasoning_effort: Literal["low", "medium", "high"] | None = Field("high", **_EFFORT)
    temperature: float = Field(1.0, ge=0, le=2, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_tokens: int = Field(32768, **_MAX_TOKENS)
    timeout_s: float = Field(3600.0, gt=0, description="longest one request may take, seconds (high reasoning is slow)")
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

    reasoning_effort: Literal["low", "medium", "high"] | None = Field("high", **_EFFORT)
    max_tokens: int = Field(32768, **_MAX_TOKENS)


class StudentSettings(RoleSettings):
    """The student: the same model in low reasoning mode attempts every problem M times."""

    reasoning_effort: Literal["low", "medium", "high"] | None = Field("low", **_EFFORT)
    max_tokens: int = Field(16384, **_MAX_TOKENS)


class LLMSettings(BaseModel):
    """How hard the client pushes and retries; none of it changes what a request asks for."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "LLM client"
    max_attempts: int = Field(
        100, ge=1, le=10_000, description="tries per request at most (max_outage_s usually ends the retries first)"
    )
    max_outage_s: float = Field(
        600.0, ge=0, json_schema_extra=cli("--max-outage", as_text=True, metavar="DURATION"),
        description="how long a request keeps retrying through an outage before it is an infra failure "
                    "(seconds, or 90s / 10m / 1h)",
    )
    backoff_initial_s: float = Field(1.0, ge=0, description="first retry delay, seconds")
    backoff_max_s: float = Field(60.0, ge=0, description="longest retry delay, seconds")
    use_n: bool = Field(True, description="ask for M samples in one request (n=M) where the server allows")
    wait_ready_s: float = Field(
        0.0, ge=0, json_schema_extra=cli("--wait-ready", as_text=True, metavar="DURATION"),
        description="wait up to this long for each role's server to come up before starting (0: check once; "
                    "for jobs that start their own server)",
    )
    http_backend: Literal["auto", "aiohttp", "httpx"] = Field(
        "auto", description="HTTP library under the client: auto (aiohttp when installed), aiohttp or httpx"
    )

    @field_validator("max_outage_s", "wait_ready_s", mode="before")
    @classmethod
    def _durations(cls, value):
        return seconds(value)


def seconds(value):
    """A duration as seconds: a number, or text such as `90`, `90s`, `10m`, `1.5h`."""
    if isinstance(value, str):
        text = value.strip().lower()
        scale = {"s": 1, "m": 60, "h": 3600}.get(text[-1:], None)
        try:
            return float(text[:-1]) * scale if scale else float(text)
        except ValueError:
            raise ValueError(f"not a duration: {value!r} (write e.g. 90, 90s, 10m or 1h)") from None
    return value


def split_commas(value):
    """`a,b` or [`a,b`, `c`] (a repeated flag) -> [a, b, c]; anything else unchanged."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [part.strip() for v in value for part in v.split(",") if part.strip()]
    return value


def check_env_names(names: list[str]) -> list[str]:
    if not names:
        raise ValueError("at least one environment is needed")
    unknown = [n for n in names if n not in ENV_NAMES]
    if unknown:
        raise ValueError(f"unknown environment {unknown[0]!r}; choose from {', '.join(ENV_NAMES)}")
    return list(dict.fromkeys(names))


class EnvListMixin(BaseModel):
    envs: list[str] = Field(default_factory=lambda: list(ENV_NAMES),
                            description="environments, comma-separated or repeated")

    @field_validator("envs", mode="before")
    @classmethod
    def _split(cls, value):
        return split_commas(value)

    @field_validator("envs")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        return check_env_names(value)
