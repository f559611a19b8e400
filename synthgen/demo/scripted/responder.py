"""The pluggable "brain" of the scripted server: what it answers, separate from how it serves.

The server (synthgen.demo.scripted.server) handles HTTP, faults and the response shape; a responder
only turns a chat request into `n` replies (ScriptedReply). `BankResponder` (synthgen.demo.scripted.bank)
plays teacher and student for the four environments; `EchoResponder` here is a trivial stand-in for
tests of the transport. Neither is a language model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol


@dataclass
class ScriptedReply:
    """One choice of a chat completion: the visible answer and the reasoning text."""

    content: str
    reasoning: str = ""


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


def content_text(message: dict) -> str:
    """A message's text; list-of-parts content is joined."""
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def last_user_text(messages: list[dict]) -> str:
    """The text of the last user message ("" if none)."""
    return next((content_text(m) for m in reversed(messages) if m.get("role") == "user"), "")


class EchoResponder:
    """Answers each sample with the last user message and a seeded tag that tells samples apart."""

    seeded_per_sample = True

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list[ScriptedReply]:
        text = last_user_text(messages)
        effort = params.get("reasoning_effort") or "none"
        tags = [random.Random(f"{rng_seed}:{i}").randrange(1_000_000) for i in range(n)]
        return [
            ScriptedReply(f"echo[{tag:06d}]: {text}", f"scripted reasoning (effort {effort}) for sample {i}")
            for i, tag in enumerate(tags)
        ]
