"""Settings of the scripted server (`synthgen scripted-server`): address, answers and injected faults.

One declaration for every knob: the server, `start_scripted_server` and the CLI command (whose
flags derive from it) all take this model. Rates are per request (errors, hangs, malformed bodies)
or per choice (truncation, garbage), each in [0, 1].
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, Field

from synthgen.settings.base import Settings, cli

Rate = Annotated[float, Field(ge=0.0, le=1.0)]


class ScriptedServerSettings(Settings):
    """The scripted OpenAI-compatible server (scripted answers, NOT a model) and its faults."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_assignment=False)
    section: ClassVar[str] = "scripted_server"

    host: str = Field("127.0.0.1", description="address to listen on")
    port: int = Field(8000, ge=0, le=65535, description="port to listen on (0 picks a free one; the URL is printed)")
    seed: int = Field(0, description="seed: the same seed and requests give the same answers and faults")
    models: tuple[str, ...] = Field(
        ("openai/gpt-oss-120b",),
        min_length=1,
        description="model names that /v1/models lists (repeatable)",
        json_schema_extra=cli("--model"),
    )
    response_model: str = Field(
        "scripted", description="the model name each answer reports (it is not a model: 'scripted')"
    )
    responder: Literal["auto", "bank", "echo"] = Field(
        "auto", description="what answers: auto (the problem bank), bank or echo"
    )
    learning_curve: float = Field(
        0.0,
        ge=0,
        description="the bank student's gain in difficulty levels per 100 policy steps: a request whose body "
        "names a `policy_step` is answered as if its problem were that much easier (0: no learning)",
    )
    student_strength: float = Field(
        0.0,
        ge=-5,
        le=5,
        description="the bank student's strength in difficulty levels: every problem is answered as if it "
        "were this many levels easier (negative: harder); a second server with another strength is another "
        "student for `synthgen calibrate`",
    )
    latency: Literal["fixed", "lognormal"] = Field(
        "fixed", description="latency distribution: fixed, or lognormal (heavy-tailed)"
    )
    latency_s: float = Field(0.0, ge=0, description="the fixed latency, or the lognormal's median, in seconds")
    latency_sigma: float = Field(1.0, ge=0, description="lognormal shape: sigma of the log-latency")
    latency_max_s: float | None = Field(None, ge=0, description="cap on one answer's latency, in seconds")
    latency_per_choice: float = Field(
        0.0,
        ge=0,
        description="growth of a request's latency with n: its slowest choice's latency x (1 + this x (n - 1)), "
        "as a batch of n = M samples decodes slower than one",
    )
    error_rate: Rate = Field(0.0, description="share of requests answered with HTTP 500")
    rate_limit_rate: Rate = Field(0.0, description="share of requests answered with HTTP 429")
    hang_rate: Rate = Field(0.0, description="share of requests that say nothing for hang_s, then drop the connection")
    hang_s: float = Field(3600.0, ge=0, description="how long a hung request stays silent, in seconds")
    truncation_rate: Rate = Field(0.0, description='share of answers cut short (finish_reason "length")')
    garbage_rate: Rate = Field(0.0, description="share of answers whose content is replaced by junk text")
    truncated_body_rate: Rate = Field(0.0, description="share of 200 answers whose JSON body is cut in the middle")
    bad_usage_rate: Rate = Field(0.0, description="share of 200 answers whose usage token counts are not numbers")
    bad_index_rate: Rate = Field(0.0, description="share of 200 answers whose choice index is a string")
    log_requests: bool = Field(
        False, description='print one access-log line per request on stderr ("POST /v1/chat/completions HTTP/1.1" 200)'
    )
    reject_n: bool = Field(False, description="answer 400 to n > 1, like servers that do not support n")
    ignore_n: bool = Field(
        False, description="answer one choice whatever n asks for, like transformers serve, llama.cpp and Ollama"
    )
    ignore_reasoning_effort: bool = Field(
        False, description="return no reasoning text whatever reasoning_effort asks for, like transformers serve"
    )
    max_model_len: int | None = Field(
        None,
        ge=1,
        description="a context length, stated in /v1/models as vLLM does: max_tokens above it, or prompt plus "
        "max_tokens above it, is answered 400 with vLLM's message",
    )
    crash_on_seed: bool = Field(
        False,
        description="a request carrying a seed kills the engine: it and every later request are answered 500, "
        "like vLLM's CPU engine",
    )
    reasoning_field: Literal["reasoning", "reasoning_content", "both"] = Field(
        "reasoning",
        description="where the reasoning text goes: reasoning (vLLM today), reasoning_content (older), both",
    )
