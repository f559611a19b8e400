"""Fault injection and randomness for the scripted server: latency, errors, hangs, cut answers.

Every random draw comes from a hash, never from global arrival order, so two runs against fresh
servers with the same seed behave alike even when requests race:
  - answers: (server seed, request body); the body carries the client's per-request `seed`, so a
    request re-sent after a crash gets the answer the first one would have had;
  - faults and latency: (server seed, request body, how many times that exact body arrived
    before, choice index), so a retry (same body, next occurrence) draws a fresh fault.
"""

from __future__ import annotations

import hashlib
import math
import random
import string
from dataclasses import dataclass, fields

LATENCY_KINDS = ("fixed", "lognormal")
REASONING_FIELDS = ("reasoning", "reasoning_content", "both")


@dataclass(frozen=True)
class Faults:
    """What the scripted server does besides answering. Rates are per request (errors, hangs) or
    per choice (truncation, garbage), each in [0, 1]."""

    latency: str = "fixed"  # "fixed": every request takes latency_s; "lognormal": heavy-tailed
    latency_s: float = 0.0  # the fixed latency, or the lognormal's median
    latency_sigma: float = 1.0  # lognormal shape (sigma of the log); 1.0 is a long right tail
    latency_max_s: float | None = None  # cap on one choice's latency, like a max_tokens limit
    error_rate: float = 0.0  # answer 500
    rate_limit_rate: float = 0.0  # answer 429
    hang_rate: float = 0.0  # say nothing for hang_s, then drop the connection
    hang_s: float = 3600.0
    truncation_rate: float = 0.0  # finish_reason "length" with the answer cut short
    garbage_rate: float = 0.0  # content replaced by junk text (finish_reason "stop")
    reject_n: bool = False  # answer 400 to n > 1, like servers that do not support n
    reasoning_field: str = "reasoning"  # "reasoning" (vLLM today), "reasoning_content" (older), "both"

    def __post_init__(self) -> None:
        if self.latency not in LATENCY_KINDS:
            raise ValueError(f"latency must be one of {LATENCY_KINDS}, not {self.latency!r}")
        if self.reasoning_field not in REASONING_FIELDS:
            raise ValueError(f"reasoning_field must be one of {REASONING_FIELDS}, not {self.reasoning_field!r}")
        for name in ("error_rate", "rate_limit_rate", "hang_rate", "truncation_rate", "garbage_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {value}")
        if self.latency_s < 0 or self.hang_s < 0 or self.latency_sigma < 0:
            raise ValueError("latency_s, latency_sigma and hang_s must be >= 0")
        if self.latency_max_s is not None and self.latency_max_s < 0:
            raise ValueError("latency_max_s must be >= 0")

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def draw_latency(self, rng: random.Random) -> float:
        if self.latency == "fixed" or self.latency_s == 0:
            value = self.latency_s
        else:
            value = self.latency_s * math.exp(rng.gauss(0.0, self.latency_sigma))
        if self.latency_max_s is not None:
            value = min(value, self.latency_max_s)
        return value


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from a stable hash of the parts (str() of each, joined)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def body_digest(canonical_body: str) -> str:
    return hashlib.sha256(canonical_body.encode()).hexdigest()


def estimate_tokens(text: str) -> int:
    """About four characters a token: the scripted server has no tokenizer."""
    return (len(text) + 3) // 4 if text else 0


def prompt_tokens(messages: list[dict]) -> int:
    total = 3
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        total += 4 + estimate_tokens(str(content))
    return total


def garbage_text(rng: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits + string.punctuation + "     \n"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 240)))


def cut(content: str, reasoning: str, max_chars: int) -> tuple[str, str]:
    """Cut (content, reasoning) to about max_chars in generation order: reasoning comes first."""
    if len(reasoning) >= max_chars:
        return "", reasoning[:max_chars]
    return content[: max_chars - len(reasoning)], reasoning
