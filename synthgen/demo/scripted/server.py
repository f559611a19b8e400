"""The scripted OpenAI-compatible server: real HTTP, scripted answers, injectable faults. NOT a model.

It speaks the subset of vLLM's API that synthgen uses: POST /v1/chat/completions (with `n`),
GET /v1/models, GET /health, with the response shape vLLM gives for gpt-oss (the reasoning text
in `message.reasoning`, or `reasoning_content` for older versions, `finish_reason`, `usage`).
GET /stats is scripted-only: request counts by status, in-flight peak, summed latency (tests and
the benchmark read it). The answers come from a Responder (synthgen.demo.scripted.responder).

Every knob is a field of synthgen.demo.scripted.settings.ScriptedServerSettings; synthgen.demo.scripted.launch
starts it (`synthgen scripted-server`, or `start_scripted_server` in-process).
Each answer reports `"model": "scripted"` (rows record what answered), while /v1/models lists the
names it was started with, so a client configured for gpt-oss passes its preflight.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import socket
import sys
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass, field

from aiohttp import web

from synthgen.demo.scripted.faults import (
    cut,
    derive_seed,
    draw_latency,
    draw_request_fault,
    estimate_tokens,
    garbage_text,
    malform,
    prompt_tokens,
)
from synthgen.demo.scripted.responder import Responder, ScriptedReply
from synthgen.demo.scripted.settings import ScriptedServerSettings

MAX_LATENCIES = 1_000_000  # per-request latencies kept for /stats (a bench replays them)
MAX_N = 1024
ACCESS_LOG = logging.getLogger("synthgen.scripted.access")  # --log-requests: one line a request on stderr
ACCESS_LOG.propagate = False  # its own handler only: a root handler (train's basicConfig) would print it twice


def parse_chat_body(raw: bytes, reject_n: bool = False) -> tuple[dict, list, int]:
    """(body, messages, n) of a chat request, checked the way vLLM checks it; ValueError says why it is a 400."""
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


def body_digest(body: dict) -> str:
    """A request body's digest, whatever the order of its keys."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class ServerStats:
    """What GET /stats reports (tests and the benchmark read it)."""

    requests: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    # What the requests asked for, so a test can check what a real run would send a real server.
    by_sampling: Counter[str] = field(default_factory=Counter)
    choices: int = 0
    hangs: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    latency_sum_s: float = 0.0
    latencies_s: list[float] = field(default_factory=list)  # each request's drawn latency, in arrival order (capped)


def _on_daemon_thread(fn, *args) -> asyncio.Future:
    """fn(*args) on a daemon thread: it may block (a test's gate), yet never keep the interpreter from exiting."""
    done: Future = Future()

    def run() -> None:
        if done.set_running_or_notify_cancel():  # not if the request was cancelled first
            try:
                done.set_result(fn(*args))
            except StopIteration as exc:  # an asyncio future refuses StopIteration and would never settle
                done.set_exception(RuntimeError(f"responder raised {exc!r}"))
            except Exception as exc:
                done.set_exception(exc)

    threading.Thread(target=run, daemon=True, name="scripted-responder").start()
    return asyncio.wrap_future(done)  # settles on the loop, unless it was cancelled or the loop closed


def _send(status: int, payload: object, headers: dict | None = None) -> web.Response:
    """`payload` as JSON, or as it is if it is already bytes (a malformed body)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return web.Response(status=status, body=body, content_type="application/json", headers=headers)


class ScriptedServer:
    """The routes and their shared state, served by aiohttp on one event loop (so the counts need no lock)."""

    def __init__(self, responder: Responder, settings: ScriptedServerSettings):
        self.responder = responder
        self.settings = settings
        self.engine_dead = False  # crash_on_seed: a seeded request arrived
        self.started = int(time.time())
        self.occurrences: Counter[str] = Counter()
        self.counts = ServerStats()

    async def start(self) -> tuple[web.AppRunner, int]:
        """Listen on the settings' address: the runner (whose cleanup stops it) and the port it got."""
        app = web.Application(client_max_size=2**31)
        app.router.add_route("*", "/{path:.*}", self.route)
        if self.settings.log_requests and not ACCESS_LOG.handlers:
            ACCESS_LOG.addHandler(logging.StreamHandler(sys.stderr))
            ACCESS_LOG.setLevel(logging.INFO)
        log = ACCESS_LOG if self.settings.log_requests else None  # quiet unless asked: a line a request is noise
        # Idle keep-alive connections close after 30 s (uvicorn: 5 s); a stop cancels handlers that still run.
        runner = web.AppRunner(
            app, keepalive_timeout=30, shutdown_timeout=0.1, access_log=log, access_log_format='%a - - %t "%r" %s -'
        )
        await runner.setup()
        # One socket, bound here: TCPSite would bind "localhost" as ::1 and 127.0.0.1 on two free ports.
        sock = socket.socket(socket.AF_INET6 if ":" in self.settings.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as http.server: a restart gets its port back
        try:
            sock.bind((self.settings.host, self.settings.port))  # its OSError says what the OS said, as http.server's
        except OSError:
            sock.close()
            raise
        await web.SockSite(runner, sock, backlog=2048).start()  # a burst of new connections must fit the backlog
        return runner, sock.getsockname()[1]

    def _count(self, status: int | str) -> None:
        self.counts.by_status[str(status)] += 1

    def _error(self, status: int, message: str, kind: str, headers: dict | None = None, counted: bool = True):
        """An error answer, counted in /stats unless no request reached the model (a 404)."""
        if counted:
            self._count(status)
        return _send(status, {"error": {"message": message, "type": kind, "param": None, "code": status}}, headers)

    async def route(self, request: web.Request) -> web.StreamResponse:
        path, method = request.path.rstrip("/"), request.method
        if method == "GET" and path == "/health":
            return _send(200, {})
        if method == "GET" and path in ("/v1/models", "/models"):
            settings = self.settings
            stated = {} if settings.max_model_len is None else {"max_model_len": settings.max_model_len}  # as vLLM
            model = {"object": "model", "created": self.started, "owned_by": "synthgen-scripted", **stated}
            return _send(200, {"object": "list", "data": [{"id": m, **model} for m in settings.models]})
        if method == "GET" and path == "/stats":
            return _send(200, vars(self.counts))
        if method != "POST" or path not in ("/v1/chat/completions", "/chat/completions"):
            return self._error(404, f"no route {request.path_qs}", "NotFoundError", counted=False)
        raw = await request.read()
        counts = self.counts
        counts.requests += 1
        counts.in_flight += 1
        counts.peak_in_flight = max(counts.peak_in_flight, counts.in_flight)
        try:
            return await self._chat(request, raw)
        finally:
            counts.in_flight -= 1

    async def _chat(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        """Answer one chat request: check it, maybe inject a fault, answer (maybe malformed)."""
        settings = self.settings
        try:
            body, messages, n = parse_chat_body(raw, settings.reject_n)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            return self._error(400, str(exc), "BadRequestError")
        refused = self._refused(body, messages)
        if refused is not None:
            return refused
        n = 1 if settings.ignore_n else n  # ignore_n: answered as if n were not there
        digest = body_digest(body)
        self.counts.by_sampling[f"effort={body.get('reasoning_effort')} n={n} max_tokens={body.get('max_tokens')}"] += 1
        occurrence = self.occurrences[digest]
        self.occurrences[digest] += 1
        request_seed = derive_seed(settings.seed, digest, occurrence)
        fault = draw_request_fault(settings, random.Random(request_seed))
        if fault == "hang":  # say nothing for hang_s, then drop the connection without an answer
            self.counts.hangs += 1
            await asyncio.sleep(settings.hang_s)
            self._count("hang")
            raise asyncio.CancelledError  # aiohttp then drops the connection (if still there), logging nothing
        if fault == "429":
            return self._error(429, "scripted rate limit", "RateLimitError", {"Retry-After": "1"})
        if fault == "500":
            return self._error(500, "scripted internal error", "InternalServerError")
        calls = self._calls(body, n, digest)
        try:
            # Answers depend on the body alone (which carries the client's per-request `seed`), so a
            # request re-sent after a crash gets the answer the first one would have; only faults
            # use the occurrence count, so that a retry can draw a fresh fault.
            replies = [
                reply
                for call_digest, params, k in calls
                for reply in await _on_daemon_thread(
                    self.responder.respond, messages, k, derive_seed(settings.seed, call_digest), params
                )
            ]
            if len(replies) != n or not all(isinstance(r, ScriptedReply) for r in replies):
                raise TypeError(f"responder returned {len(replies)} replies for n={n}")
        except Exception as exc:  # a responder bug: say so loudly, as a 500
            print(f"scripted server: responder failed: {exc!r}", file=sys.stderr)
            return self._error(500, f"responder failed: {exc!r}", "InternalServerError")
        # A seeded choice draws its faults as its own n = 1 request would: its digest, index 0.
        draws = [(d, 0) for d, _, _ in calls] if len(calls) == n else [(digest, i) for i in range(n)]
        choices, completion_tokens, latency = self._choices(replies, body, draws, occurrence)
        if len(self.counts.latencies_s) < MAX_LATENCIES:
            self.counts.latencies_s.append(latency)
        await asyncio.sleep(latency)
        response = self._response(messages, choices, completion_tokens, request_seed, occurrence)
        broken = malform(settings, random.Random(derive_seed(request_seed, "malform")), response)
        self.counts.choices += n  # counted before the answer leaves, so a client never sees stale stats
        self.counts.latency_sum_s += latency
        self.counts.by_status["200" if broken is None else "200-malformed"] += 1
        return _send(200, response if broken is None else broken)

    def _refused(self, body: dict, messages: list) -> web.Response | None:
        """The refusals of a real server's modes (a dead engine, the context length), if any."""
        settings = self.settings
        if settings.crash_on_seed and body.get("seed") is not None:
            self.engine_dead = True
        if self.engine_dead:
            return self._error(500, "EngineCore encountered an issue (scripted --crash-on-seed)", "EngineDeadError")
        limit = settings.max_model_len
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        if limit is None or not isinstance(max_tokens, int):
            return None
        prompt = prompt_tokens(messages)
        if max_tokens > limit:
            message = (
                f"max_tokens={max_tokens} cannot be greater than max_model_len={limit}. "
                "Please request fewer output tokens."
            )
        elif prompt + max_tokens > limit:
            message = (
                f"This model's maximum context length is {limit} tokens. However, you requested "
                f"{prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in the completion). "
                "Please reduce the length of the messages or completion."
            )
        else:
            return None
        return self._error(400, message, "BadRequestError")

    def _calls(self, body: dict, n: int, digest: str) -> list[tuple[str, dict, int]]:
        """(digest, params, n) of each call to the responder. With an integer `seed`, choice i is
        answered as the same request with n = 1 and seed + i would be (vLLM's rule for n > 1 with a
        seed), so however a client splits an n-request, each sample comes out the same. Without a
        seed, or for a responder that answers by index within the request (`seeded_per_sample` not
        set: a test's fixed rule), one call answers all n, told apart by their index alone."""
        seed, params = body.get("seed"), {k: v for k, v in body.items() if k != "messages"}
        per_sample = getattr(self.responder, "seeded_per_sample", False)
        if not per_sample or not isinstance(seed, int) or isinstance(seed, bool):
            return [(digest, params, n)]
        single = {k: v for k, v in body.items() if k != "n"}
        return [(body_digest({**single, "seed": seed + i}), {**params, "n": 1, "seed": seed + i}, 1) for i in range(n)]

    def _choices(self, replies, body: dict, draws: list[tuple[str, int]], occurrence: int):
        """(choices, completion tokens, latency): per-choice garbage, truncation and latency draws."""
        settings = self.settings
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        choices, completion_tokens, latency = [], 0, 0.0
        for index, (reply, (digest, draw)) in enumerate(zip(replies, draws)):
            crng = random.Random(derive_seed(settings.seed, digest, occurrence, draw))
            latency = max(latency, draw_latency(settings, crng))
            content, reasoning, finish = reply.content, reply.reasoning, "stop"
            garbage, truncate, where = crng.random(), crng.random(), crng.random()
            if garbage < settings.garbage_rate:
                content = garbage_text(crng)
            if truncate < settings.truncation_rate:
                total = len(content) + len(reasoning)
                content, reasoning = cut(content, reasoning, int(total * where * 0.9))
                finish = "length"
            if max_tokens and estimate_tokens(reasoning) + estimate_tokens(content) > max_tokens:
                content, reasoning = cut(content, reasoning, 4 * int(max_tokens))
                finish = "length"
            completion_tokens += max(1, estimate_tokens(reasoning) + estimate_tokens(content))
            choices.append(self._choice(index, content, reasoning, finish))
        latency *= 1.0 + settings.latency_per_choice * (len(replies) - 1)
        return choices, completion_tokens, latency

    def _response(self, messages, choices, completion_tokens: int, request_seed: int, occurrence: int) -> dict:
        """The chat.completion object; its `model` says what answered: the scripted server."""
        prompt = prompt_tokens(messages)
        return {
            "id": f"chatcmpl-{uuid.UUID(int=derive_seed(request_seed, 'id') << 64 | occurrence).hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.settings.response_model,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt + completion_tokens,
                "prompt_tokens_details": None,
            },
            "prompt_logprobs": None,
        }

    def _choice(self, index: int, content: str, reasoning: str, finish: str) -> dict:
        message: dict = {"role": "assistant", "content": content, "refusal": None, "tool_calls": []}
        settings = self.settings
        fields = (
            ("reasoning", "reasoning_content") if settings.reasoning_field == "both" else (settings.reasoning_field,)
        )
        message.update(dict.fromkeys(fields, None if settings.ignore_reasoning_effort else reasoning or None))
        return {"index": index, "message": message, "logprobs": None, "finish_reason": finish, "stop_reason": None}
