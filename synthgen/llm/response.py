"""Chat-completion answers as `Completion`s, checked strictly, their text made safe; and `Usage`.

Anything a 200 answer may get wrong (not a JSON object, choices missing or more than asked for,
bad indices, a choice without a message, token counts that are not non-negative integers, text
that is not a string) raises `BadResponse`, which the client retries and finally reports as infra.
Every string taken from the answer passes through `safe_text`: no lone surrogate leaves the client.
Token account, so that sums over samples are per-request truths: a request's prompt tokens go on
its first sample (0 on the others); its completion tokens are shared by answer length.

`Usage` counts requests, tokens, failures by kind and cache hits per role: `as_dict()` goes into a
stage's stats JSON, `summary()` is one line for progress. It counts what this process sent and
received (cache replays only as hits), tokens as the Completions carry them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields

from synthgen.llm.errors import BadResponse, describe, error_kind
from synthgen.text import safe_text


@dataclass
class Completion:
    status: str  # "ok" | "truncated" | "infra" | "prompt_too_long" (the prompt plus max_tokens is over the context)
    content: str
    reasoning: str
    finish_reason: str | None
    prompt_tokens: int  # the request's prompt tokens on its first sample, 0 on the others
    completion_tokens: int  # for n > 1, the request's total apportioned by answer length
    latency_s: float
    cached: bool = False
    error: str | None = None  # "<kind>: <message>" for infra (kinds: synthgen.llm.errors)
    model: str = ""  # the model name the server reported in its answer


_FIELDS = frozenset(f.name for f in fields(Completion))
_TEXT_FIELDS = ("content", "reasoning", "finish_reason", "error", "model")


def from_cache(stored: dict) -> Completion:
    """A cached sample as a Completion (older cache entries may lack newer fields)."""
    values = {k: v for k, v in stored.items() if k in _FIELDS}
    for name in _TEXT_FIELDS:  # entries written before text was sanitised may hold surrogates
        if isinstance(values.get(name), str):
            values[name] = safe_text(values[name])
    return Completion(**{**values, "cached": True})


def unanswered(status: str, n: int, error: str, elapsed: float) -> list[Completion]:
    """n samples without an answer: "infra" (given up), or "prompt_too_long" (a result, not a failure)."""
    return [Completion(status, "", "", None, 0, 0, elapsed, error=safe_text(error)) for _ in range(n)]


def parse_completions(response, n: int, latency: float) -> tuple[list[Completion], int, int]:
    """(Completions in sample order, prompt tokens, completion tokens) of one answer; BadResponse if
    malformed. Fewer than n choices, indexed 0..k-1, are the first k samples of a server that
    ignores n (transformers serve, llama.cpp, Ollama): they come back as they are, k < n."""
    if not isinstance(response, dict) or not isinstance(response.get("choices"), list):
        raise BadResponse(f"not a chat completion: {str(response)[:200]!r}")
    choices = _ordered_choices(response["choices"], n)
    prompt, total = _usage(response.get("usage"))
    texts = [_choice_text(choice) for choice in choices]
    model = response.get("model")
    model = safe_text(model) if isinstance(model, str) else ""
    weights = [max(1, len(c) + len(r)) for c, r, _ in texts]
    shares = [total * w // sum(weights) for w in weights]
    shares[weights.index(max(weights))] += total - sum(shares)
    completions = [
        Completion(
            status="truncated" if finish == "length" else "ok",
            content=content,
            reasoning=reasoning,
            finish_reason=finish,
            prompt_tokens=prompt if i == 0 else 0,
            completion_tokens=share,
            latency_s=latency,
            model=model,
        )
        for i, ((content, reasoning, finish), share) in enumerate(zip(texts, shares))
    ]
    return completions, prompt, total


def _ordered_choices(choices: list, n: int) -> list[dict]:
    if not 1 <= len(choices) <= n:
        raise BadResponse(f"expected {n} choices, got {len(choices)}")
    by_index: dict[int, dict] = {}
    for choice in choices:
        if not isinstance(choice, dict):
            raise BadResponse("a choice that is not an object")
        index = choice.get("index", 0 if len(choices) == 1 else None)
        if type(index) is not int or not 0 <= index < len(choices) or index in by_index:
            raise BadResponse(f"choice index {index!r} is not a distinct integer in [0, {len(choices)})")
        by_index[index] = choice
    return [by_index[i] for i in range(len(choices))]


def _usage(usage) -> tuple[int, int]:
    if usage is None:
        return 0, 0
    if not isinstance(usage, dict):
        raise BadResponse(f"usage is not an object: {usage!r:.100}")
    counts = [0 if usage.get(name) is None else usage[name] for name in ("prompt_tokens", "completion_tokens")]
    for name, value in zip(("prompt_tokens", "completion_tokens"), counts):
        if type(value) is not int or value < 0:
            raise BadResponse(f"usage.{name} is not a token count: {value!r:.100}")
    return counts[0], counts[1]


def _choice_text(choice: dict) -> tuple[str, str, str | None]:
    message = choice.get("message")
    if not isinstance(message, dict):
        raise BadResponse("a choice without a message")
    content = message.get("content")
    # vLLM's reasoning parser: "reasoning" today, "reasoning_content" in older versions.
    reasoning = message.get("reasoning") or message.get("reasoning_content")
    finish = choice.get("finish_reason")
    for name, value in (("content", content), ("reasoning", reasoning), ("finish_reason", finish)):
        if value is not None and not isinstance(value, str):
            raise BadResponse(f"{name} is not a string: {value!r:.100}")
    return safe_text(content or ""), safe_text(reasoning or ""), (safe_text(finish) if finish is not None else None)


@dataclass
class RoleUsage:
    requests: int = 0  # HTTP requests sent, retries included
    samples_ok: int = 0  # completions received with finish_reason other than "length"
    samples_truncated: int = 0  # finish_reason "length": a formatting failure, not retried
    samples_infra: int = 0  # samples given up after the last attempt (or a non-retryable error)
    samples_refused: int = 0  # refused for their length (prompt + max_tokens over the context): results
    infra_by_cause: Counter = field(default_factory=Counter)  # final infra samples by error kind
    errors_by_cause: Counter = field(default_factory=Counter)  # every failed attempt by error kind
    retries: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # summed over successful requests

    def as_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("infra_by_cause", "errors_by_cause"):
            out[name] = dict(sorted(out[name].items()))
        out["latency_s"] = round(self.latency_s, 3)
        return out

    def account(self, completions: list[Completion], prompt: int, total: int, latency: float) -> None:
        """Count one answered request: its tokens, its latency and each sample's outcome."""
        self.prompt_tokens += prompt
        self.completion_tokens += total
        self.latency_s += latency
        truncated = sum(c.status == "truncated" for c in completions)
        self.samples_truncated += truncated
        self.samples_ok += len(completions) - truncated

    def give_up(self, n: int, exc: BaseException, elapsed: float, first: str | None = None) -> list[Completion]:
        """Count `n` samples given up on `exc` (infrastructure, by its kind) and return them as such;
        `first`: the failure the server died of, when the last one (refused) is its consequence."""
        self.samples_infra += n
        self.infra_by_cause[error_kind(exc)] += n
        died = f" (the server died after answering {first})" if first else ""
        return unanswered("infra", n, describe(exc) + died, elapsed)

    def add(self, other: RoleUsage) -> None:
        for f in fields(self):  # counts and Counters alike
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class Usage:
    roles: defaultdict[str, RoleUsage] = field(default_factory=lambda: defaultdict(RoleUsage))

    def total(self) -> RoleUsage:
        total = RoleUsage()
        for usage in self.roles.values():
            total.add(usage)
        return total

    def as_dict(self) -> dict:
        out = {name: usage.as_dict() for name, usage in sorted(self.roles.items())}
        out["total"] = self.total().as_dict()
        return out

    def summary(self) -> str:
        t = self.total()
        infra = ",".join(f"{k}={v}" for k, v in sorted(t.infra_by_cause.items())) or "0"
        return (
            f"requests {t.requests} | tokens in {t.prompt_tokens} out {t.completion_tokens} | "
            f"ok {t.samples_ok} truncated {t.samples_truncated} infra {infra} | "
            f"retries {t.retries} cache hits {t.cache_hits}"
        )
