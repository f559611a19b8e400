"""The project's only OpenAI-compatible client: keeps a vLLM server full and never pays twice.

    async with LLMClient(ClientConfig(teacher=RoleConfig(), student=RoleConfig(reasoning_effort="low")),
                         cache_path=run_dir / "llm_cache.sqlite") as llm:
        await llm.wait_ready("teacher")
        [answer] = await llm.complete("teacher", messages, key=problem_id)
        attempts = await llm.complete("student", messages, n=8, key=problem_id)

- A semaphore bounds requests in flight (`max_in_flight`); each call takes a slot only while its
  HTTP request runs, so a slow request never holds back fast ones (no batch barriers), and a
  retry's backoff sleep gives the slot back.
- Transport errors, timeouts, 429 and 5xx are retried with tenacity (exponential backoff with
  jitter, `max_attempts`); the openai client's own retries are off. After the last attempt the
  samples come back with status "infra", never raised and never a wrong answer.
- `finish_reason == "length"` is status "truncated": a result (a formatting failure), not retried.
- Student sampling asks once with `n = M`; if the server rejects n > 1 with a 400, the client
  sends M single requests and remembers that for the endpoint.
- With a cache path, every ok or truncated sample is stored as soon as it arrives
  (synthgen.llm_cache); a re-run replays them with zero requests.
- With a caller `key`, each request carries a sampling `seed` derived from (key, sample index)
  (vLLM gives sample i of an n-request seed + i), so a request re-sent after a crash asks for
  the same sample. Without a key no seed is sent.
- One LLMClient per process and event loop: it holds one AsyncOpenAI per (base_url, api key).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import openai
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from synthgen.errors import UserError
from synthgen.llm_cache import RequestCache, cache_key
from synthgen.llm_http import HTTP_BACKENDS, make_http_client
from synthgen.llm_usage import RoleUsage, Usage

__all__ = ["ClientConfig", "Completion", "LLMClient", "RoleConfig", "ServerNotReady", "Usage"]


@dataclass(frozen=True)
class RoleConfig:
    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "openai/gpt-oss-120b"
    api_key: str | None = None  # None -> $OPENAI_API_KEY -> "EMPTY" (what vLLM expects without --api-key)
    reasoning_effort: str | None = "high"
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 32768
    timeout_s: float = 3600.0  # read timeout of one request: high reasoning can run many minutes

    def sampling(self) -> dict:
        """The settings that decide an answer (part of the cache key)."""
        return {
            "reasoning_effort": self.reasoning_effort,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }


@dataclass(frozen=True)
class ClientConfig:
    teacher: RoleConfig = field(default_factory=RoleConfig)
    student: RoleConfig = field(default_factory=lambda: RoleConfig(reasoning_effort="low"))
    max_in_flight: int = 256
    max_attempts: int = 5
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    use_n: bool = True
    http_backend: str = "auto"  # "auto" (aiohttp when installed) | "aiohttp" | "httpx"

    def __post_init__(self) -> None:
        if self.max_in_flight < 1 or self.max_attempts < 1:
            raise ValueError("max_in_flight and max_attempts must be >= 1")
        if self.http_backend not in HTTP_BACKENDS:
            raise ValueError(f"http_backend must be one of {HTTP_BACKENDS}, not {self.http_backend!r}")


@dataclass
class Completion:
    status: str  # "ok" | "truncated" | "infra"
    content: str
    reasoning: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int  # for n > 1, the request's total apportioned by answer length
    latency_s: float
    cached: bool = False
    error: str | None = None  # "<cause>: <message>" for infra

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ServerNotReady(UserError):
    """The server did not answer /models in time, or does not serve the configured model."""


class _BadResponse(Exception):
    """A 200 answer that is not a usable chat completion (retried like a 5xx)."""


_RETRY_STATUS = {408, 409, 425, 429}


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, (openai.APIConnectionError, _BadResponse, openai.APIResponseValidationError)):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    return False


def _cause(exc: BaseException) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIStatusError):
        return f"http_{exc.status_code}"
    if isinstance(exc, (_BadResponse, openai.APIResponseValidationError)):
        return "bad_response"
    return type(exc).__name__


class LLMClient:
    """Async client for the teacher and student roles; use as `async with LLMClient(...) as llm`."""

    def __init__(self, config: ClientConfig, cache_path: Path | None = None):
        self.config = config
        self.usage = Usage()
        self.in_flight = 0  # HTTP requests running now
        self.queued = 0  # requests waiting for a slot
        self._sem = asyncio.Semaphore(config.max_in_flight)
        self._clients: dict[tuple[str, str], openai.AsyncOpenAI] = {}
        self._n_supported: dict[tuple[str, str], bool] = {}
        self._cache = RequestCache(cache_path) if cache_path is not None else None
        self._flight_area = 0.0
        self._flight_t = time.monotonic()

    async def __aenter__(self) -> "LLMClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    # -- public ---------------------------------------------------------------------------------
    def role_config(self, role: str) -> RoleConfig:
        if role == "teacher":
            return self.config.teacher
        if role == "student":
            return self.config.student
        raise ValueError(f"unknown role {role!r} (teacher or student)")

    def in_flight_area(self) -> float:
        """Integral of in_flight over time (request-seconds) since the client was made."""
        now = time.monotonic()
        return self._flight_area + self.in_flight * (now - self._flight_t)

    async def complete(self, role: str, messages: list[dict], n: int = 1, *, key: str = "") -> list[Completion]:
        """`n` samples for one prompt, in sample order; failures come back as status "infra"."""
        if n < 0:
            raise ValueError("n must be >= 0")
        rc = self.role_config(role)
        usage = self.usage.role(role)
        results: list[Completion | None] = [None] * n
        keys: list[str] = []
        if self._cache is not None:
            sampling = rc.sampling()
            keys = [cache_key(rc.model, messages, sampling, i, key) for i in range(n)]
            hits = self._cache.get_many(keys)
            for i, k in enumerate(keys):
                if k in hits:
                    results[i] = Completion(**{**hits[k], "cached": True})
                    usage.cache_hits += 1
        missing = [i for i in range(n) if results[i] is None]
        if missing:
            await self._fill(role, rc, messages, missing, keys, results, key)
        return results  # type: ignore[return-value]

    async def wait_ready(self, role: str = "teacher", timeout_s: float = 600, poll_s: float = 2.0) -> None:
        """Poll GET {base_url}/models until the server answers and lists the configured model."""
        rc = self.role_config(role)
        client = self._client(rc)
        deadline = time.monotonic() + timeout_s
        last: Exception | None = None
        while True:
            try:
                page = await client.models.list(timeout=openai.Timeout(10.0, connect=5.0))
            except openai.APIError as exc:
                last = exc
            else:
                served = [m.id for m in page.data]
                if served and rc.model not in served:
                    raise ServerNotReady(f"{rc.base_url} serves {served}, not the configured model {rc.model!r}")
                return
            if time.monotonic() + poll_s > deadline:
                raise ServerNotReady(
                    f"no OpenAI-compatible server answered at {rc.base_url.rstrip('/')}/models "
                    f"within {timeout_s:g} s (last error: {last})"
                )
            await asyncio.sleep(poll_s)

    # -- internals ------------------------------------------------------------------------------
    def _client(self, rc: RoleConfig) -> openai.AsyncOpenAI:
        api_key = rc.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        ident = (rc.base_url, api_key)
        if ident not in self._clients:
            self._clients[ident] = openai.AsyncOpenAI(
                base_url=rc.base_url,
                api_key=api_key,
                max_retries=0,  # tenacity retries, with our accounting
                timeout=openai.Timeout(rc.timeout_s, connect=min(rc.timeout_s, 30.0)),
                http_client=make_http_client(self.config.max_in_flight, self.config.http_backend),
            )
        return self._clients[ident]

    async def _acquire(self) -> None:
        self.queued += 1
        try:
            await self._sem.acquire()
        finally:
            self.queued -= 1

    def _flight(self, delta: int) -> None:
        now = time.monotonic()
        self._flight_area += self.in_flight * (now - self._flight_t)
        self._flight_t = now
        self.in_flight += delta

    async def _fill(self, role, rc, messages, missing, keys, results, key: str = "") -> None:
        endpoint = (rc.base_url, rc.model)
        if len(missing) > 1 and self.config.use_n and self._n_supported.get(endpoint, True):
            got = await self._request(role, rc, messages, len(missing), request_seed(key, missing[0]))
            if got is not None:
                self._n_supported[endpoint] = True
                for i, completion in zip(missing, got):
                    self._store(keys, i, completion, results)
                return
        # One request per sample (n unsupported, or rejected just now); each is cached on arrival.
        async def one(i: int) -> None:
            [completion] = await self._request(role, rc, messages, 1, request_seed(key, i))  # type: ignore[misc]
            self._store(keys, i, completion, results)

        await asyncio.gather(*(one(i) for i in missing))
        if len(missing) > 1 and any(results[i].status != "infra" for i in missing):  # type: ignore[union-attr]
            self._n_supported[endpoint] = False

    def _store(self, keys: list[str], i: int, completion: Completion, results: list) -> None:
        results[i] = completion
        if self._cache is not None and completion.status != "infra":
            self._cache.put(keys[i], asdict(completion) | {"cached": False})

    def _body(self, rc: RoleConfig, messages: list[dict], n: int, seed: int | None = None) -> dict:
        body: dict = {
            "model": rc.model,
            "messages": messages,
            "temperature": rc.temperature,
            "top_p": rc.top_p,
            "max_tokens": rc.max_tokens,
        }
        if n > 1:
            body["n"] = n
        if rc.reasoning_effort is not None:
            body["reasoning_effort"] = rc.reasoning_effort  # vLLM: harmony reasoning effort for gpt-oss
        if seed is not None:
            body["seed"] = seed  # vLLM seeds the request's sampler: the same key samples the same text
        return body

    async def _request(
        self, role: str, rc: RoleConfig, messages: list[dict], n: int, seed: int | None = None
    ) -> list[Completion] | None:
        """One chat request for n samples, retried; None when the server rejects n > 1.

        The slot is taken before anything else: thousands of calls queued at once then cost
        almost nothing until their turn, and the first requests reach the server sooner."""
        await self._acquire()
        held = True
        usage = self.usage.role(role)
        start = time.monotonic()
        try:
            client = self._client(rc)
            body = self._body(rc, messages, n, seed)
            options = {"timeout": openai.Timeout(rc.timeout_s, connect=min(rc.timeout_s, 30.0))}
            retrying = AsyncRetrying(
                stop=stop_after_attempt(self.config.max_attempts),
                wait=wait_exponential_jitter(
                    initial=self.config.backoff_initial_s,
                    max=self.config.backoff_max_s,
                    jitter=self.config.backoff_initial_s,
                ),
                retry=retry_if_exception(_retryable),
                reraise=True,
            )
            async for attempt in retrying:
                with attempt:
                    if attempt.retry_state.attempt_number > 1:
                        usage.retries += 1
                    if not held:  # a retry: the slot was given back during the backoff sleep
                        await self._acquire()
                        held = True
                    self._flight(+1)
                    t0 = time.monotonic()
                    try:
                        usage.requests += 1
                        # The generic POST of AsyncOpenAI: same transport, errors and auth as
                        # chat.completions.create, without its per-call typed-dict transform and
                        # pydantic construction (milliseconds of CPU a call at hundreds per second).
                        response = await client.post("/chat/completions", cast_to=object, body=body, options=options)
                        latency = time.monotonic() - t0
                        completions = _parse(response, n, latency)
                    except (openai.APIError, _BadResponse) as exc:
                        usage.errors_by_cause[_cause(exc)] += 1
                        raise
                    finally:
                        self._flight(-1)
                        self._sem.release()
                        held = False
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if n > 1:
                return None  # maybe n is not supported: the caller falls back to single requests
            return _infra(usage, n, exc, time.monotonic() - start)
        except (openai.APIError, _BadResponse) as exc:
            return _infra(usage, n, exc, time.monotonic() - start)
        finally:
            if held:
                self._sem.release()
        _account(usage, response, completions, latency)
        return completions


def request_seed(key: str, sample: int) -> int | None:
    """A sampling seed per (caller key, first sample index): distinct turns that happen to send the
    same messages still draw distinct samples, and a replayed request draws the same ones."""
    if not key:
        return None
    digest = hashlib.sha256(f"{key}#{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1  # a non-negative 31-bit int, safe for every server


def _parse(response, n: int, latency: float) -> list[Completion]:
    if not isinstance(response, dict) and hasattr(response, "model_dump"):
        response = response.model_dump()
    if not isinstance(response, dict) or not isinstance(response.get("choices"), list):
        raise _BadResponse(f"not a chat completion: {str(response)[:200]!r}")
    choices = sorted(response["choices"], key=lambda c: c.get("index", 0) if isinstance(c, dict) else 0)
    if len(choices) != n:
        raise _BadResponse(f"expected {n} choices, got {len(choices)}")
    usage = response.get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    total = int(usage.get("completion_tokens") or 0)
    texts = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise _BadResponse("a choice without a message")
        # vLLM's reasoning parser: "reasoning" today, "reasoning_content" in older versions.
        reasoning = message.get("reasoning") or message.get("reasoning_content") or ""
        texts.append((str(message.get("content") or ""), str(reasoning), choice.get("finish_reason")))
    weights = [max(1, len(c) + len(r)) for c, r, _ in texts]
    shares = [total * w // sum(weights) for w in weights]
    shares[weights.index(max(weights))] += total - sum(shares)
    return [
        Completion(
            status="truncated" if finish == "length" else "ok",
            content=content,
            reasoning=reasoning,
            finish_reason=finish,
            prompt_tokens=prompt,
            completion_tokens=share,
            latency_s=latency,
        )
        for (content, reasoning, finish), share in zip(texts, shares)
    ]


def _account(usage: RoleUsage, response, completions: list[Completion], latency: float) -> None:
    tokens = response.get("usage") or {} if isinstance(response, dict) else {}
    usage.prompt_tokens += int(tokens.get("prompt_tokens") or 0)
    usage.completion_tokens += int(tokens.get("completion_tokens") or 0)
    usage.latency_s += latency
    for completion in completions:
        if completion.status == "truncated":
            usage.samples_truncated += 1
        else:
            usage.samples_ok += 1


def _infra(usage: RoleUsage, n: int, exc: BaseException, elapsed: float) -> list[Completion]:
    cause = _cause(exc)
    usage.samples_infra += n
    usage.infra_by_cause[cause] += n
    message = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
    return [
        Completion("infra", "", "", None, 0, 0, elapsed, error=f"{cause}: {message}")
        for _ in range(n)
    ]
