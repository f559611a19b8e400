"""The project's only OpenAI-compatible client: keeps a vLLM server full and never pays twice.

    async with LLMClient.from_settings(settings, cache_path=run_dir / "cache" / "llm.sqlite") as llm:
        await llm.preflight(settings.llm.wait_ready_s)   # every role's server up, serving its model
        [answer] = await llm.complete("teacher", messages, key=problem_id)
        attempts = await llm.complete("student", messages, n=8, key=problem_id)

- `max_in_flight` slots bound requests in flight, handed out by `priority` (PrioritySlots); a
  call holds one only while its HTTP request runs, never through a retry's backoff.
- Failures are retried by kind (synthgen.llm.errors) until `max_attempts` tries or `max_outage_s`,
  then come back as status "infra", error "<kind>: <message>": never raised, never a wrong answer,
  never cached. `finish_reason == "length"` is status "truncated": a result, not retried.
- Student sampling asks once with `n = M`; a server that refuses n > 1 (400) or answers fewer
  choices gets the rest asked one by one, and is remembered for its endpoint.
- With a cache path every ok or truncated answer is stored on arrival and replayed by a re-run;
  with a caller `key`, sample i carries the seed base_seed(key) + i however its request is split
  (synthgen.llm.cache), unless the role's `send_seed` is off (vLLM's CPU engine crashes on seeds).
- One LLMClient per process and event loop: it holds one AsyncOpenAI per (base_url, api key).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import openai
from pydantic import BaseModel

from synthgen.errors import UserError
from synthgen.llm.cache import RequestCache, base_seed, cache_key, sample_runs
from synthgen.llm.errors import (
    ATTEMPT_ERRORS,
    ServerConfigError,
    config_line,
    describe,
    error_kind,
    is_final_refusal,
    is_retryable,
    refusal_kind,
    retry_policy,
    server_message,
)
from synthgen.llm.http import chat_body, make_http_client, post_chat
from synthgen.llm.preflight import ServerNotReady, check_server, fit_context, probe_server
from synthgen.llm.response import Completion, Usage, from_cache, parse_completions, unanswered
from synthgen.llm.settings import LLMSettings, RoleSettings

__all__ = ["Completion", "LLMClient", "ServerNotReady", "Usage", "base_seed"]


class PrioritySlots:
    """`size` slots; `await acquire(priority)` waits for one (higher priority first), `release()` frees it.

    The turn loop keeps many more units of work active than there are slots, and which waiter gets
    the next free slot decides how a run ends. Serving first the request whose unit has the most
    requests still ahead (longest remaining first, the list-scheduling rule for a short makespan)
    moves every unit along at about the same pace, so the server stays full until the last requests
    instead of draining on a few late lineages. Equal priorities are served in arrival order."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.free = size
        self._waiters: list[tuple[float, int, asyncio.Future]] = []  # (-priority, arrival, future)
        self._arrival = itertools.count()

    async def acquire(self, priority: float = 0.0) -> None:
        if self.free > 0:  # (a free slot means nobody waits: release hands slots to waiters first)
            self.free -= 1
            return
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (-priority, next(self._arrival), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as the caller gave up: pass it on
            raise

    def release(self) -> None:
        """Free a slot, handing it to the most urgent live waiter."""
        self.free += 1
        while self.free > 0 and self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():  # (a cancelled waiter is skipped here rather than searched for)
                self.free -= 1
                future.set_result(None)


class LLMClient(contextlib.AbstractAsyncContextManager):
    """Async client for the teacher and student roles; use as `async with LLMClient.from_settings(...) as llm`."""

    def __init__(
        self,
        teacher: RoleSettings,
        student: RoleSettings,
        llm: LLMSettings | None = None,
        *,
        max_in_flight: int = 256,
        cache_path: Path | None = None,
        labels: dict[str, str] | None = None,
        notify=None,
    ):
        self.roles = {"teacher": teacher, "student": student}
        # How messages and flags name each role: eval's one role is "model" (--model-max-tokens).
        self.labels = {"teacher": "teacher", "student": "student", **(labels or {})}
        # One line for what the operator should know as it happens (n ignored, the first retry of
        # each kind); stderr unless the caller routes it (the turn loop prints it above progress).
        self.notify = notify or (lambda line: print(line, file=sys.stderr, flush=True))
        self._noticed: set = set()
        self.llm = llm or LLMSettings()
        self.max_in_flight = max_in_flight
        self.usage = Usage()
        self.in_flight = 0  # HTTP requests running now
        self.queued = 0  # requests waiting for a slot
        self._slots = PrioritySlots(max_in_flight)
        self._clients: dict[tuple[str, str], openai.AsyncOpenAI] = {}
        self._n_supported: dict[tuple[str, str], bool] = {}
        self._cache = RequestCache(cache_path) if cache_path is not None else None
        self._flight_area = 0.0
        self._flight_t = time.monotonic()
        # Per base URL: it has answered in this run; the server's message of its last 5xx (cleared
        # by an answer); and, once it refuses connections after such a 5xx, that message: the
        # server died of it, and every request given up there names it (not only "refused").
        self._answered: set[str] = set()
        self._last_5xx: dict[str, str] = {}
        self._died: dict[str, str] = {}

    @classmethod
    def from_settings(cls, settings, cache_path: Path | None = None, **more) -> LLMClient:
        """From a turn loop's settings (synthgen.turns.settings): roles, client settings, in-flight bound."""
        more = {"max_in_flight": settings.max_in_flight, "cache_path": cache_path, **more}
        return cls(settings.teacher, settings.student, settings.llm, **more)

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def in_flight_area(self) -> float:
        """Integral of in_flight over time (request-seconds) since the client was made."""
        now = time.monotonic()
        return self._flight_area + self.in_flight * (now - self._flight_t)

    async def preflight(
        self, wait_s: float = 0, samples: dict[str, int] | None = None, fit_max_tokens: bool = False
    ) -> None:
        """Check every role's server (synthgen.llm.preflight; for up to wait_s seconds), then, unless
        `llm.probe` is off, probe each and say one line per role. `fit_max_tokens` (the demo's
        defaults) fits a max_tokens the user did not set to the stated context. `samples`: samples
        each role asks for per prompt (default: teacher 1, student 2)."""
        pages: dict[tuple[str, str], object] = {}
        probed: set[int] = set()
        samples = {"teacher": 1, "student": 2, **(samples or {})}
        for name, settings in self.roles.items():  # every server up and serving before any probe
            endpoint = (settings.base_url, settings.model)
            if endpoint not in pages:
                pages[endpoint] = await check_server(self._client(settings), self.labels[name], settings, wait_s)
            self._answered.add(settings.base_url)
        if self.llm.probe or fit_max_tokens:  # (without the probe, the first request's 400 says it)
            fit_context([(self.labels[n], r) for n, r in self.roles.items()], pages, fit_max_tokens, self.notify)
        seed_done: dict = {}
        for name, settings in self.roles.items():
            endpoint, label = (settings.base_url, settings.model), self.labels[name]
            if not self.llm.probe or id(settings) in probed:
                continue
            probed.add(id(settings))
            n = samples.get(name, 1) if self.llm.use_n else 1
            flags = self._seed_flags(settings.base_url)
            n, line = await probe_server(self._client(settings), label, settings, pages[endpoint], n, flags, seed_done)
            if n in ("ignored", "refused"):  # known up front: no request is spent finding it out again
                self._n_supported[endpoint] = False
                self._noticed.add(("n", endpoint))
            self.notify(line)

    def _seed_flags(self, base_url: str) -> str:
        """The flags that stop every role on `base_url` from sending seeds (one seed kills it for all)."""
        names = [n for n, r in self.roles.items() if r.base_url == base_url and r.send_seed]
        return " ".join(dict.fromkeys(f"--no-{self.labels[n]}-send-seed" for n in names))

    async def complete(
        self, role: str, messages: list[dict], n: int = 1, *, key: str = "", priority: float = 0.0
    ) -> list[Completion]:
        """`n` samples for one prompt, in sample order; failures come back as status "infra".
        While every slot is taken, the waiting call with the highest `priority` goes next."""
        settings = self.roles[role]
        usage = self.usage.roles[role]
        results: list[Completion | None] = [None] * n
        keys: list[str] = []
        if self._cache is not None:
            sampling = settings.sampling()
            keys = [cache_key(settings.model, messages, sampling, i, key) for i in range(n)]
            hits = self._cache.get_many(keys)
            for i, k in enumerate(keys):
                if k in hits:
                    results[i] = from_cache(hits[k])
                    usage.cache_hits += 1
        missing = [i for i in range(n) if results[i] is None]
        if missing:
            await self._fill(role, settings, messages, missing, keys, results, key, priority)
        return results  # type: ignore[return-value]

    def _client(self, settings: RoleSettings) -> openai.AsyncOpenAI:
        api_key = settings.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        ident = (settings.base_url, api_key)
        if ident not in self._clients:
            self._clients[ident] = openai.AsyncOpenAI(
                base_url=settings.base_url,
                api_key=api_key,
                max_retries=0,  # tenacity retries, with our accounting
                timeout=openai.Timeout(settings.timeout_s, connect=min(settings.timeout_s, 30.0)),
                http_client=make_http_client(self.max_in_flight, self.llm.http_backend),
            )
        return self._clients[ident]

    @contextlib.asynccontextmanager
    async def _slot(self, priority: float):
        """One of max_in_flight request slots, held while one HTTP request runs."""
        self.queued += 1
        try:
            await self._slots.acquire(priority)
        finally:
            self.queued -= 1
        self._flight(+1)
        try:
            yield
        finally:
            self._flight(-1)
            self._slots.release()

    def _flight(self, delta: int) -> None:
        now = time.monotonic()
        self._flight_area += self.in_flight * (now - self._flight_t)
        self._flight_t = now
        self.in_flight += delta

    async def _fill(self, role, settings, messages, missing, keys, results, key: str = "", priority=0.0) -> None:
        """Ask for the missing samples, each run of consecutive indices in one request (synthgen.llm.cache)."""
        base = base_seed(key) if settings.send_seed else None
        runs = sample_runs(missing)
        if len(runs) == 1:  # most calls: no gather, no task of its own (tens of us a call)
            await self._fill_run(role, settings, messages, runs[0], keys, results, base, priority)
            return
        await asyncio.gather(
            *(self._fill_run(role, settings, messages, run, keys, results, base, priority) for run in runs)
        )

    async def _fill_run(self, role, settings, messages, run, keys, results, base, priority) -> None:
        endpoint = (settings.base_url, settings.model)
        rest = run
        if len(run) > 1 and self.llm.use_n and self._n_supported.get(endpoint, True):
            seed = None if base is None else base + run[0]
            got = await self._request(role, settings, messages, len(run), seed, priority)
            if got is not None:
                self._store_answer(keys, list(zip(run, got)), results)
                if len(got) == len(run):
                    return
                rest = run[len(got) :]  # fewer choices than n: keep them, ask for the rest one by one
                how = f"answered {len(got)} choice{'s' if len(got) != 1 else ''} for n={len(run)} (it ignores n)"
            else:
                how = "refused n > 1"
            self._n_supported[endpoint] = False
            self._notice(
                ("n", endpoint),
                f"{self.labels[role]}: the server at {settings.base_url} {how}; "
                "asking one request per sample from now on (--no-llm-use-n says so up front)",
            )

        # One request per sample (n unsupported); each is cached on arrival.
        async def one(i: int) -> None:
            got = await self._request(role, settings, messages, 1, None if base is None else base + i, priority)
            self._store_answer(keys, [(i, got[0])], results)  # type: ignore[index]

        if len(rest) == 1:  # most calls: no task of its own (one less task and loop turn a call)
            await one(rest[0])
        else:
            await asyncio.gather(*(one(i) for i in rest))

    def _notice(self, what, line: str) -> None:
        """Say `line` once per `what` (the operator needs it once, not a thousand times)."""
        if what not in self._noticed:
            self._noticed.add(what)
            self.notify(line)

    def _store_answer(self, keys: list[str], samples: list[tuple[int, Completion]], results: list) -> None:
        """Keep one answer's samples, and cache them in one commit (see RequestCache.put_many)."""
        for i, completion in samples:
            results[i] = completion
        if self._cache is not None:
            stored = [(keys[i], asdict(c) | {"cached": False}) for i, c in samples if c.status != "infra"]
            if stored:
                self._cache.put_many(stored)

    def _body(self, settings: RoleSettings, messages: list[dict], n: int, seed: int | None = None) -> dict:
        """The request body (a subclass may add fields: the online student names its policy step)."""
        return chat_body(settings, messages, n, seed)

    async def _request(
        self, role: str, settings: RoleSettings, messages: list[dict], n: int, seed: int | None = None, priority=0.0
    ) -> list[Completion] | None:
        """One chat request for n samples, retried; None when the server refuses n > 1 (a 400)."""
        usage = self.usage.roles[role]
        body = self._body(settings, messages, n, seed)
        start = time.monotonic()
        try:
            async for attempt in retry_policy(self.llm):
                with attempt:
                    retry = attempt.retry_state.attempt_number > 1
                    completions, prompt, total, latency = await self._attempt(role, settings, body, n, retry, priority)
        except ATTEMPT_ERRORS as exc:
            kind = refusal_kind(exc, settings.max_tokens)
            if kind == "config":
                raise ServerConfigError(config_line(self.labels[role], settings, exc)) from None
            if kind == "prompt_too_long":  # this prompt, not the server: a result, never retried
                usage.samples_refused += n
                return unanswered(
                    "prompt_too_long", n, f"prompt_too_long: {server_message(exc)}", time.monotonic() - start
                )
            if n > 1 and is_final_refusal(exc):
                return None  # maybe n is not supported: the caller falls back to single requests
            return usage.give_up(n, exc, time.monotonic() - start, self._died.get(settings.base_url))
        usage.account(completions, prompt, total, latency)
        return completions

    async def _attempt(self, role: str, settings: RoleSettings, body: dict, n: int, retry: bool, priority):
        """One HTTP try within a slot: (completions, prompt tokens, completion tokens, latency)."""
        usage = self.usage.roles[role]
        async with self._slot(priority):
            usage.requests += 1
            usage.retries += retry
            t0 = time.monotonic()
            try:
                response = await post_chat(self._client(settings), body, settings.timeout_s)
                latency = time.monotonic() - t0
                completions, prompt, total = parse_completions(response, n, latency)
            except ATTEMPT_ERRORS as exc:
                kind = error_kind(exc)
                usage.errors_by_cause[kind] += 1
                self._watch_failure(role, settings, exc, kind)
                if is_retryable(exc) and self.llm.max_attempts > 1:
                    self._notice(
                        ("retry", kind),
                        f"{self.labels[role]}: {describe(exc)}; retrying (the first retry of this kind; "
                        f"requests keep retrying for up to --max-outage {self.llm.max_outage_s:g} s)",
                    )
                raise
        url = settings.base_url
        self._answered.add(url)
        self._last_5xx.pop(url, None)
        self._died.pop(url, None)
        return completions, prompt, total, latency

    def _watch_failure(self, role: str, settings: RoleSettings, exc: BaseException, kind: str) -> None:
        """A server that answered, then failed with 5xx, then refuses connections has died (vLLM's
        engine crashing takes its API server down a moment later): say so at once, with the
        server's own message, and keep that first cause for the requests given up there."""
        url = settings.base_url
        if isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
            self._last_5xx[url] = describe(exc)
        elif kind == "connection_refused" and url in self._answered and url in self._last_5xx:
            self._died.setdefault(url, self._last_5xx[url])
            self._notice(
                ("died", url),
                f"{self.labels[role]}: the server at {url} died: it answered {self._last_5xx[url]}, and now refuses "
                f"connections; restart it (its log says why): requests keep retrying for up to --max-outage "
                f"{self.llm.max_outage_s:g} s",
            )


def probe_settings(settings: BaseModel) -> list[str]:
    """`config show --probe`: the preflight lines of a command's settings, from synchronous code;
    UserError for what would stop a run. The roles are the settings' typed fields, matched below:
    eval's one `model` (n samples per problem), or a teacher and a student (`attempts` samples,
    generate's `single_turn` K for the teacher; the demo's `base_url` for roles without their own)."""
    match settings:
        case BaseModel(model=RoleSettings() as model, llm=LLMSettings() as llm):
            teacher = student = model
            labels, samples = {"teacher": "model", "student": "model"}, {"teacher": 2}
        case BaseModel(
            teacher=RoleSettings() as teacher,
            student=RoleSettings() as student,
            llm=LLMSettings() as llm,
            attempts=int(attempts),
        ):
            labels, samples = None, {"teacher": 1, "student": attempts}
        case _:
            raise UserError(f"--probe: {type(settings).__name__} names no teacher and student, nor a model")
    match settings:  # a single-turn run asks the teacher for that many samples at once
        case BaseModel(single_turn=int(single)) if single:
            samples["teacher"] = single
    match settings:  # the demo's one server, unless a role names its own
        case BaseModel(base_url=str(shared)) if shared:
            teacher, student = (
                r if "base_url" in r.model_fields_set else r.model_copy(update={"base_url": shared})
                for r in (teacher, student)
            )
    lines: list[str] = []

    async def probe() -> None:
        async with LLMClient(
            teacher, student, llm.model_copy(update={"probe": True}), labels=labels, notify=lines.append
        ) as client:
            await client.preflight(0, samples)

    asyncio.run(probe())
    return lines
