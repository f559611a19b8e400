"""The pluggable "brain" of the scripted server: what it answers, separate from how it serves.

The server (synthgen.demo.scripted.server) handles HTTP, faults and the response shape; a responder
only turns a chat request into `n` replies (ScriptedReply, from synthgen.demo.scripted.reply).
`BankResponder` (synthgen.demo.scripted.bank) plays teacher and student for the four environments;
`EchoResponder` here is a trivial stand-in for tests of the transport. Neither is a language model.
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

from synthgen.demo.scripted.reply import ScriptedReply

__all__ = [
    "RESPONDER_NAMES",
    "EchoResponder",
    "Responder",
    "ScriptedReply",
    "default_responder",
    "last_user_text",
    "make_responder",
]


@runtime_checkable
class Responder(Protocol):
    """A responder with `seeded_per_sample = True` is asked for a seeded n-request's samples one at
    a time (n = 1, seed + i), so its answers do not depend on how a client split the request (vLLM's
    rule); without it, `respond` gets the whole request and may answer by index within it."""

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list[ScriptedReply]:
        """Return exactly `n` replies. `rng_seed` is derived by the server from (server seed,
        request body), so the same request gets the same replies (the client puts a per-sample
        `seed` in the body to tell samples apart). `params` holds the request's other fields
        (model, reasoning_effort, temperature, top_p, max_tokens, seed, ...)."""
        ...


def last_user_text(messages: list[dict]) -> str:
    """The text of the last user message ("" if none); list-of-parts content is joined."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content", "")
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


class EchoResponder:
    """Answers each sample with the last user message and a seeded tag that tells samples apart."""

    seeded_per_sample = True

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list[ScriptedReply]:
        text = last_user_text(messages)
        effort = params.get("reasoning_effort") or "none"
        replies = []
        for i in range(n):
            tag = random.Random(f"{rng_seed}:{i}").randrange(1_000_000)
            replies.append(
                ScriptedReply(
                    content=f"echo[{tag:06d}]: {text}",
                    reasoning=f"scripted reasoning (effort {effort}) for sample {i}",
                )
            )
        return replies


def default_responder(seed: int = 0, learning_curve: float = 0.0, strength: float = 0.0) -> Responder:
    """`BankResponder(seed)` when synthgen.demo.scripted.bank exists, else `EchoResponder()`.

    Only a missing bank module falls back; an import error inside the bank is raised, so a broken
    bank is never silently replaced by echo answers.
    """
    try:
        from synthgen.demo.scripted.bank import BankResponder  # type: ignore[import-not-found]
    except ModuleNotFoundError as exc:
        if exc.name not in ("synthgen.demo.scripted.bank",):
            raise
        return EchoResponder()
    return _bank(BankResponder, seed, learning_curve, strength)


def _bank(cls, seed: int, learning_curve: float, strength: float) -> Responder:
    extra = {"learning_curve": learning_curve} if learning_curve else {}
    return cls(seed, strength=strength, **extra) if strength else cls(seed, **extra)


RESPONDER_NAMES = ("auto", "bank", "echo")


def make_responder(name: str, seed: int = 0, learning_curve: float = 0.0, strength: float = 0.0) -> Responder:
    """By name: "auto" (the bank when installed, else echo), "bank" or "echo"; the bank's student
    may follow a learning curve (synthgen.demo.scripted.curve)."""
    if name == "auto":
        return default_responder(seed, learning_curve, strength)
    if name == "echo":
        return EchoResponder()
    if name == "bank":
        from synthgen.demo.scripted.bank import BankResponder  # type: ignore[import-not-found]

        return _bank(BankResponder, seed, learning_curve, strength)
    raise ValueError(f"responder must be one of {RESPONDER_NAMES}, not {name!r}")
