"""The HTTP layer under AsyncOpenAI: connection limits sized to the in-flight bound, cheap per request.

At hundreds of requests a second the client's own CPU decides whether a server stays full. The
openai package runs on httpx (httpx2 in recent versions) or, with `openai[aiohttp]`, on aiohttp:
  - "aiohttp" (openai.DefaultAioHttpClient) costs about a third of httpx's CPU per request;
  - "httpx" here spreads connections over several pools, because an httpx pool scans all of its
    connections on every request event (milliseconds a request at hundreds of connections);
  - "auto" takes aiohttp when it is installed, else httpx.
Each pool may hold max_in_flight connections, so no request ever waits for a connection: the
client's semaphore is the only bound.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import sys

import openai

HTTP_BACKENDS = ("auto", "aiohttp", "httpx")


def _httpx_module():
    """httpx or httpx2, whichever this openai version is built on."""
    from openai import _constants

    return sys.modules[type(_constants.DEFAULT_CONNECTION_LIMITS).__module__.split(".")[0]]


def make_http_client(max_in_flight: int, backend: str = "auto"):
    """An http client for AsyncOpenAI(http_client=...); backend is one of HTTP_BACKENDS."""
    hx = _httpx_module()
    limits = hx.Limits(max_connections=max_in_flight, max_keepalive_connections=max_in_flight)
    if backend in ("auto", "aiohttp"):
        try:
            return openai.DefaultAioHttpClient(limits=limits)
        except (AttributeError, ImportError, RuntimeError) as exc:
            if backend == "aiohttp":
                raise RuntimeError("http_backend 'aiohttp' needs `pip install openai[aiohttp]`") from exc
    elif backend != "httpx":
        raise ValueError(f"http_backend must be one of {HTTP_BACKENDS}, not {backend!r}")
    shards = max(1, min(16, max_in_flight // 16))
    verify = _ssl_context()
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]

    class ShardedTransport(hx.AsyncBaseTransport):
        def __init__(self) -> None:
            self._pools = [
                hx.AsyncHTTPTransport(limits=limits, verify=verify, socket_options=nodelay) for _ in range(shards)
            ]
            self._next = itertools.cycle(self._pools)

        async def handle_async_request(self, request):
            return await next(self._next).handle_async_request(request)

        async def aclose(self) -> None:
            for pool in self._pools:
                await pool.aclose()

    return openai.DefaultAsyncHttpxClient(transport=ShardedTransport())


def _ssl_context() -> ssl.SSLContext:
    """One context for all pools (loading CA certificates costs ~0.1 s each time)."""
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        return ssl.create_default_context()
