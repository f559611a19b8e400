"""The HTTP layer under AsyncOpenAI: connection limits sized to the in-flight bound, cheap per request.

At hundreds of requests a second the client's own CPU decides whether a server stays full. The
openai package runs on httpx (httpx2 in recent versions) or, with `openai[aiohttp]`, on aiohttp,
which costs about a third of httpx's CPU per request; "auto" takes aiohttp when it is installed.
The pool holds max_in_flight connections, so the client's slots are the only bound.

`post_chat` sends one chat request under a deadline on its WHOLE duration: the transports' own
timeouts bound each socket operation, so a server that drips a byte every few seconds would
otherwise hold a request far past its timeout.
"""

from __future__ import annotations

import asyncio
import socket
import sys

import openai

from synthgen.llm.errors import RequestTimeout


def _httpx_module():
    """httpx or httpx2, whichever this openai version is built on."""
    from openai import _constants

    return sys.modules[type(_constants.DEFAULT_CONNECTION_LIMITS).__module__.split(".")[0]]


def make_http_client(max_in_flight: int, backend: str = "auto"):
    """An http client for AsyncOpenAI(http_client=...); backend: auto, aiohttp or httpx (LLMSettings)."""
    hx = _httpx_module()
    limits = hx.Limits(max_connections=max_in_flight, max_keepalive_connections=max_in_flight)
    if backend in ("auto", "aiohttp"):
        try:
            return openai.DefaultAioHttpClient(limits=limits)
        except (AttributeError, ImportError, RuntimeError) as exc:
            if backend == "aiohttp":
                raise RuntimeError("http_backend 'aiohttp' needs `pip install openai[aiohttp]`") from exc
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    return openai.DefaultAsyncHttpxClient(transport=hx.AsyncHTTPTransport(limits=limits, socket_options=nodelay))


async def post_chat(client: openai.AsyncOpenAI, body: dict, timeout_s: float) -> object:
    """POST /chat/completions and return the decoded JSON; RequestTimeout past `timeout_s` in all.

    The generic POST of AsyncOpenAI: the same transport, errors and auth as
    chat.completions.create, without its per-call typed-dict transform and pydantic construction
    (milliseconds of CPU a call at hundreds of calls a second)."""
    options = {"timeout": openai.Timeout(timeout_s, connect=min(timeout_s, 30.0))}
    request = client.post("/chat/completions", cast_to=object, body=body, options=options)
    return await _within(request, timeout_s, "no complete answer")


async def get_json(client: openai.AsyncOpenAI, path: str, timeout_s: float) -> object:
    """GET `path` under the base URL and return the decoded JSON, within `timeout_s` in all."""
    options = {"timeout": openai.Timeout(timeout_s, connect=timeout_s)}
    return await _within(client.get(path, cast_to=object, options=options), timeout_s, "no answer")


async def _within(request, timeout_s: float, what: str) -> object:
    try:
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(timeout_s):
                return await request
        return await asyncio.wait_for(request, timeout_s)
    except (TimeoutError, asyncio.TimeoutError):
        raise RequestTimeout(f"{what} within {timeout_s:g} s") from None


def chat_body(settings, messages: list[dict], n: int, seed: int | None = None) -> dict:
    """The JSON body of one chat request for `n` samples with a role's settings (RoleSettings)."""
    body = {"model": settings.model, "messages": messages, **settings.sampling()}
    if body["reasoning_effort"] is None:  # (vLLM: harmony reasoning effort for gpt-oss)
        del body["reasoning_effort"]
    if n > 1:
        body["n"] = n
    if seed is not None:
        body["seed"] = seed  # vLLM seeds the request's sampler: the same key samples the same text
    return body
