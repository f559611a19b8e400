"""Fault injection and randomness for the scripted server: latency, errors, hangs, cut or broken answers.

Every random draw comes from a hash, never from global arrival order, so two runs against fresh
servers with the same seed behave alike even when requests race:
  - answers: (server seed, request body); the body carries the client's per-request `seed`, so a
    request re-sent after a crash gets the answer the first one would have had;
  - faults and latency: (server seed, request body, how many times that exact body arrived
    before, choice index), so a retry (same body, next occurrence) draws a fresh fault.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import string

from synthgen.demo.scripted.responder import content_text
from synthgen.demo.scripted.settings import ScriptedServerSettings


def draw_latency(settings: ScriptedServerSettings, rng: random.Random) -> float:
    """One choice's latency: fixed, or lognormal around latency_s; capped by latency_max_s."""
    if settings.latency == "fixed" or settings.latency_s == 0:
        value = settings.latency_s
    else:
        value = settings.latency_s * math.exp(rng.gauss(0.0, settings.latency_sigma))
    if settings.latency_max_s is not None:
        value = min(value, settings.latency_max_s)
    return value


def draw_request_fault(settings: ScriptedServerSettings, rng: random.Random) -> str | None:
    """What happens to a whole request instead of an answer: "hang", "429", "500" or None."""
    draws = (rng.random(), rng.random(), rng.random())  # all three, so one rate does not shift the others
    rates = (settings.hang_rate, settings.rate_limit_rate, settings.error_rate)
    return next((fault for fault, u, rate in zip(("hang", "429", "500"), draws, rates) if u < rate), None)


def malform(settings: ScriptedServerSettings, rng: random.Random, response: dict) -> bytes | None:
    """The body of a broken 200 answer, or None for a well-formed one. Three ways a proxy or a
    server bug breaks an answer: the JSON cut in the middle, token counts that are not numbers,
    a choice index that is a string."""
    cut_body, bad_usage, bad_index = rng.random(), rng.random(), rng.random()
    if cut_body < settings.truncated_body_rate:
        raw = json.dumps(response).encode()
        return raw[: max(1, int(len(raw) * (0.1 + 0.8 * rng.random())))]
    if bad_usage < settings.bad_usage_rate:
        response = {**response, "usage": {**response["usage"], "prompt_tokens": "many", "completion_tokens": "lots"}}
        return json.dumps(response).encode()
    if bad_index < settings.bad_index_rate:
        choices = [{**c, "index": str(c["index"])} for c in response["choices"]]
        return json.dumps({**response, "choices": choices}).encode()
    return None


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from a stable hash of the parts (str() of each, joined)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts (SHA-256; independent of PYTHONHASHSEED)."""
    return derive_seed(*parts) / 2**64


def pick(seq, *parts: object):
    return seq[int(unit(*parts) * len(seq))]


def estimate_tokens(text: str) -> int:
    """About four characters a token: the scripted server has no tokenizer."""
    return (len(text) + 3) // 4 if text else 0


def prompt_tokens(messages: list[dict]) -> int:
    return 3 + sum(4 + estimate_tokens(content_text(m)) for m in messages)


def garbage_text(rng: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits + string.punctuation + "     \n"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 240)))


def cut(content: str, reasoning: str, max_chars: int) -> tuple[str, str]:
    """Cut (content, reasoning) to about max_chars in generation order: reasoning comes first."""
    if len(reasoning) >= max_chars:
        return "", reasoning[:max_chars]
    return content[: max_chars - len(reasoning)], reasoning
