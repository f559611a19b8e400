"""Usage accounting for the LLM client: requests, tokens, failures by kind, cache hits, per role.

`Usage.as_dict()` goes into a stage's stats JSON; `Usage.summary()` is one line for progress.
Counts are of what this process sent and received: cache replays are counted as hits only, so
tokens here are tokens paid for in this run, counted as the Completions carry them
(synthgen.llm.response: a request's prompt once).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, fields

from synthgen.llm.errors import describe, error_kind
from synthgen.llm.response import Completion, unanswered


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
        for completion in completions:
            if completion.status == "truncated":
                self.samples_truncated += 1
            else:
                self.samples_ok += 1

    def give_up(self, n: int, exc: BaseException, elapsed: float, first: str | None = None) -> list[Completion]:
        """Count `n` samples given up on `exc` (infrastructure, by its kind) and return them as such;
        `first`: the failure the server died of, when the last one (refused) is its consequence."""
        kind = error_kind(exc)
        self.samples_infra += n
        self.infra_by_cause[kind] += n
        error = describe(exc)
        if first:
            error = f"{error} (the server died after answering {first})"
        return unanswered("infra", n, error, elapsed)

    def add(self, other: RoleUsage) -> None:
        for f in fields(self):  # counts and Counters alike
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class Usage:
    roles: defaultdict[str, RoleUsage] = field(default_factory=lambda: defaultdict(RoleUsage))

    def role(self, name: str) -> RoleUsage:
        return self.roles[name]

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
