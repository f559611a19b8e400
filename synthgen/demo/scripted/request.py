"""A chat request as the scripted server reads it: the body checked the way vLLM checks it, so that
a bad request is a 400 with the reason, as a real server answers."""

from __future__ import annotations

import json

MAX_N = 1024


def parse_chat_body(raw: bytes, reject_n: bool = False) -> tuple[dict, list, int]:
    """(body, messages, n) of a chat request; ValueError says why it is a 400."""
    body = json.loads(raw or b"null")
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    messages, n = body.get("messages"), body.get("n")
    n = 1 if n is None else n
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_N:
        raise ValueError(f"n must be an integer in [1, {MAX_N}]")
    if body.get("stream"):
        raise ValueError("the scripted server does not stream")
    if reject_n and n > 1:
        raise ValueError("n > 1 is not supported by this server (scripted --reject-n)")
    return body, messages, n
