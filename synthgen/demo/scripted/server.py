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

import copy
import hashlib
import json
import random
import socket
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class ScriptedHTTPServer(ThreadingHTTPServer):
    """One thread per connection (HTTP/1.1 keep-alive); the state below is shared under a lock."""

    daemon_threads = True
    request_queue_size = 2048  # a burst of hundreds of new connections must not overflow the backlog

    def __init__(self, responder: Responder, settings: ScriptedServerSettings):
        super().__init__((settings.host, settings.port), ScriptedHandler)
        self.responder = responder
        self.settings = settings
        self.engine_dead = False  # crash_on_seed: a seeded request arrived
        self.started = int(time.time())
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.connections: set[socket.socket] = set()
        self.occurrences: Counter[str] = Counter()
        self.counts = ServerStats()

    def stats(self) -> dict:
        with self.lock:
            return {name: copy.copy(value) for name, value in vars(self.counts).items()}

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client that went away (killed, timed out) is not the server's error
        super().handle_error(request, client_address)

    def stop(self) -> None:
        """Stop accepting, wake sleeping handlers, close open connections."""
        self.stopping.set()
        self.shutdown()
        with self.lock:
            conns = list(self.connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()


class ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 30  # idle keep-alive connections are closed after this (uvicorn uses 5 s)
    server: ScriptedHTTPServer

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.lock:
            self.server.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format, *args) -> None:  # noqa: A002 - quiet unless asked: one line a request is noise
        if self.server.settings.log_requests:
            super().log_message(format, *args)

    # -- plumbing -------------------------------------------------------------------------------
    def _send(self, status: int, payload: object, headers: dict | None = None) -> None:
        """Send `payload` as JSON, or as it is if it is already bytes (a malformed body)."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if self.server.settings.log_requests:
            self.log_request(status)
        try:
            self.send_response_only(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except OSError:  # the client went away (timed out): nothing to tell it
            self.close_connection = True

    def _count(self, status: int | str) -> None:
        with self.server.lock:
            self.server.counts.by_status[str(status)] += 1

    def _error(self, status: int, message: str, kind: str, headers: dict | None = None, counted: bool = True) -> None:
        """An error answer, counted in /stats unless no request reached the model (a 404)."""
        if counted:
            self._count(status)
        payload = {"error": {"message": message, "type": kind, "param": None, "code": status}}
        self._send(status, payload, headers)

    # -- routes ---------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/health":
            self._send(200, {})
        elif path in ("/v1/models", "/models"):
            settings = self.server.settings
            stated = {} if settings.max_model_len is None else {"max_model_len": settings.max_model_len}  # as vLLM
            model = {"object": "model", "created": self.server.started, "owned_by": "synthgen-scripted", **stated}
            self._send(200, {"object": "list", "data": [{"id": m, **model} for m in settings.models]})
        elif path == "/stats":
            self._send(200, self.server.stats())
        else:
            self._error(404, f"no route {self.path}", "NotFoundError", counted=False)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.split("?", 1)[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {self.path}", "NotFoundError", counted=False)
            return
        server = self.server
        with server.lock:
            server.counts.requests += 1
            server.counts.in_flight += 1
            server.counts.peak_in_flight = max(server.counts.peak_in_flight, server.counts.in_flight)
        try:
            self._chat(raw)
        finally:
            with server.lock:
                server.counts.in_flight -= 1

    def _chat(self, raw: bytes) -> None:
        """Answer one chat request: check it, maybe inject a fault, answer (maybe malformed)."""
        server, settings = self.server, self.server.settings
        try:
            body, messages, n = parse_chat_body(raw, settings.reject_n)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            self._error(400, str(exc), "BadRequestError")
            return
        if self._refused(body, messages):
            return
        n = 1 if settings.ignore_n else n  # ignore_n: answered as if n were not there
        digest = body_digest(body)
        sampling = f"effort={body.get('reasoning_effort')} n={n} max_tokens={body.get('max_tokens')}"
        with server.lock:
            server.counts.by_sampling[sampling] += 1
            occurrence = server.occurrences[digest]
            server.occurrences[digest] += 1
        request_seed = derive_seed(settings.seed, digest, occurrence)
        if self._injected_fault(random.Random(request_seed)):
            return
        calls = self._calls(body, n, digest)
        try:
            # Answers depend on the body alone (which carries the client's per-request `seed`), so a
            # request re-sent after a crash gets the answer the first one would have; only faults
            # use the occurrence count, so that a retry can draw a fresh fault.
            replies = [
                reply
                for call_digest, params, k in calls
                for reply in server.responder.respond(messages, k, derive_seed(settings.seed, call_digest), params)
            ]
            if len(replies) != n or not all(isinstance(r, ScriptedReply) for r in replies):
                raise TypeError(f"responder returned {len(replies)} replies for n={n}")
        except Exception as exc:  # a responder bug: say so loudly, as a 500
            print(f"scripted server: responder failed: {exc!r}", file=sys.stderr)
            self._error(500, f"responder failed: {exc!r}", "InternalServerError")
            return
        # A seeded choice draws its faults as its own n = 1 request would: its digest, index 0.
        draws = [(d, 0) for d, _, _ in calls] if len(calls) == n else [(digest, i) for i in range(n)]
        choices, completion_tokens, latency = self._choices(replies, body, draws, occurrence)
        with server.lock:
            if len(server.counts.latencies_s) < MAX_LATENCIES:
                server.counts.latencies_s.append(latency)
        if latency > 0 and server.stopping.wait(latency):
            self.close_connection = True  # shutting down
            return
        response = self._response(messages, choices, completion_tokens, request_seed, occurrence)
        broken = malform(settings, random.Random(derive_seed(request_seed, "malform")), response)
        with server.lock:  # counted before the answer leaves, so a client never sees stale stats
            server.counts.choices += n
            server.counts.latency_sum_s += latency
            server.counts.by_status["200" if broken is None else "200-malformed"] += 1
        self._send(200, response if broken is None else broken)

    def _refused(self, body: dict, messages: list) -> bool:
        """The refusals of a real server's modes (a dead engine, the context length); True if sent."""
        server, settings = self.server, self.server.settings
        if settings.crash_on_seed and body.get("seed") is not None:
            server.engine_dead = True
        if server.engine_dead:
            self._error(500, "EngineCore encountered an issue (scripted --crash-on-seed)", "EngineDeadError")
            return True
        limit = settings.max_model_len
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        if limit is None or not isinstance(max_tokens, int):
            return False
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
            return False
        self._error(400, message, "BadRequestError")
        return True

    def _injected_fault(self, rng: random.Random) -> bool:
        """Hang, 429 or 500 instead of an answer, as the fault rates draw; True if one was sent."""
        server = self.server
        fault = draw_request_fault(server.settings, rng)
        if fault == "hang":
            with server.lock:
                server.counts.hangs += 1
            server.stopping.wait(server.settings.hang_s)
            self._count("hang")
            self.close_connection = True  # drop the connection without an answer
        elif fault == "429":
            self._error(429, "scripted rate limit", "RateLimitError", {"Retry-After": "1"})
        elif fault == "500":
            self._error(500, "scripted internal error", "InternalServerError")
        return fault is not None

    def _calls(self, body: dict, n: int, digest: str) -> list[tuple[str, dict, int]]:
        """(digest, params, n) of each call to the responder. With an integer `seed`, choice i is
        answered as the same request with n = 1 and seed + i would be (vLLM's rule for n > 1 with a
        seed), so however a client splits an n-request, each sample comes out the same. Without a
        seed, or for a responder that answers by index within the request (`seeded_per_sample` not
        set: a test's fixed rule), one call answers all n, told apart by their index alone."""
        seed, params = body.get("seed"), {k: v for k, v in body.items() if k != "messages"}
        per_sample = getattr(self.server.responder, "seeded_per_sample", False)
        if not per_sample or not isinstance(seed, int) or isinstance(seed, bool):
            return [(digest, params, n)]
        single = {k: v for k, v in body.items() if k != "n"}
        return [(body_digest({**single, "seed": seed + i}), {**params, "n": 1, "seed": seed + i}, 1) for i in range(n)]

    def _choices(self, replies, body: dict, draws: list[tuple[str, int]], occurrence: int):
        """(choices, completion tokens, latency): per-choice garbage, truncation and latency draws."""
        settings = self.server.settings
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
            "model": self.server.settings.response_model,
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
        settings = self.server.settings
        fields = (
            ("reasoning", "reasoning_content") if settings.reasoning_field == "both" else (settings.reasoning_field,)
        )
        message.update(dict.fromkeys(fields, None if settings.ignore_reasoning_effort else reasoning or None))
        return {"index": index, "message": message, "logprobs": None, "finish_reason": finish, "stop_reason": None}
