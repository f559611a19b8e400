"""The LLM roles (teacher, student) and how the client pushes and retries (synthgen.llm.client reads them)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from synthgen.settings.base import Section, cli
from synthgen.settings.shared import seconds

_EFFORT = {"description": "gpt-oss reasoning effort sent with every request", "json_schema_extra": cli("effort")}
# Seconds, given as a number or as text such as `90s`, `10m`, `1h` (settings.shared.seconds).
Duration = Annotated[float, BeforeValidator(seconds)]
_MAX_TOKENS = {"ge": 1, "le": 1_000_000, "description": "completion tokens per answer, reasoning included"}


class RoleSettings(Section):
    """One LLM role on an OpenAI-compatible server such as vLLM. Each role is its own subclass with
    its own defaults, so a partial override (a URL, a model) never resets the rest of the role."""

    model_config = ConfigDict(extra="forbid")
    base_url: str = Field(
        "http://127.0.0.1:8000/v1",
        description="OpenAI-compatible server (e.g. vLLM's /v1)",
        json_schema_extra=cli("url"),
    )
    model: str = Field("openai/gpt-oss-120b", description="model name the server serves")
    api_key: str | None = Field(
        None,
        description="API key (default: $OPENAI_API_KEY, else 'EMPTY' as vLLM expects)",
        json_schema_extra=cli(hidden=True),
    )  # never on a command line (ps shows it)
    reasoning_effort: Literal["low", "medium", "high"] | None = Field("high", **_EFFORT)
    temperature: float = Field(1.0, ge=0, le=2, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling mass")
    max_tokens: int = Field(32768, **_MAX_TOKENS)
    send_seed: bool = Field(
        True,
        description="send a per-sample seed, so a re-sent request draws the same samples (turn off for servers "
        "that fail on seeds, such as vLLM's CPU engine)",
    )
    timeout_s: float = Field(3600.0, gt=0, description="longest one request may take, seconds (high reasoning is slow)")
    # The server address, key and timeout decide where a request goes, not what it asks for.
    # send_seed too: it makes a re-sent request reproducible, it does not change what is sampled.
    unhashed: ClassVar[frozenset[str]] = frozenset({"base_url", "api_key", "timeout_s", "send_seed"})

    def sampling(self) -> dict:
        """The settings that decide an answer (sent with every request; part of the cache key)."""
        return self.model_dump(include={"reasoning_effort", "temperature", "top_p", "max_tokens"})


class TeacherSettings(RoleSettings):
    """The teacher: gpt-oss-120b in high reasoning mode writes and mutates problems (the paper's setting)."""

    reasoning_effort: Literal["low", "medium", "high"] | None = Field("high", **_EFFORT)
    max_tokens: int = Field(32768, **_MAX_TOKENS)


class StudentSettings(RoleSettings):
    """The student: the same model in low reasoning mode attempts every problem M times."""

    reasoning_effort: Literal["low", "medium", "high"] | None = Field("low", **_EFFORT)
    max_tokens: int = Field(16384, **_MAX_TOKENS)


class LLMSettings(Section):
    """How hard the client pushes and retries; none of it changes what a request asks for."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "LLM client"
    max_attempts: int = Field(
        100, ge=1, le=10_000, description="tries per request at most (max_outage_s usually ends the retries first)"
    )
    max_outage_s: Duration = Field(
        600.0,
        ge=0,
        json_schema_extra=cli("--max-outage", as_text=True, metavar="DURATION"),
        description="how long a request keeps retrying through an outage before it is an infra failure "
        "(seconds, or 90s / 10m / 1h)",
    )
    backoff_initial_s: float = Field(1.0, ge=0, description="first retry delay, seconds")
    backoff_max_s: float = Field(60.0, ge=0, description="longest retry delay, seconds")
    use_n: bool = Field(True, description="ask for M samples in one request (n=M) where the server allows")
    probe: bool = Field(
        True,
        description="before any work, probe each role's server with tiny requests (does it honour n, return "
        "reasoning, survive a seed; its context length) and say what was found",
    )
    wait_ready_s: Duration = Field(
        0.0,
        ge=0,
        json_schema_extra=cli("--wait-ready", as_text=True, metavar="DURATION"),
        description="wait up to this long for each role's server to come up before starting (0: check once; "
        "for jobs that start their own server)",
    )
    http_backend: Literal["auto", "aiohttp", "httpx"] = Field(
        "auto", description="HTTP library under the client: auto (aiohttp when installed), aiohttp or httpx"
    )
