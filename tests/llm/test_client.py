"""LLMClient over real HTTP against the scripted server; requests are counted on the server side."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import threading
import time
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from synthgen.demo.scripted import EchoResponder
from synthgen.demo.scripted.responder import last_user_text
from synthgen.llm.client import Completion, LLMClient, ServerNotReady
from synthgen.llm.settings import LLMSettings, RoleSettings, StudentSettings, TeacherSettings

HAVE_AIOHTTP = importlib.util.find_spec("aiohttp") is not None
BACKENDS = ["httpx", pytest.param("aiohttp", marks=pytest.mark.skipif(not HAVE_AIOHTTP, reason="no aiohttp"))]


def client(server, cache_path=None, **overrides) -> LLMClient:
    """A client for `server` (a handle, or a base URL) built as the stages build theirs."""
    url = server if isinstance(server, str) else server.url
    role_fields = {k: overrides.pop(k) for k in list(overrides) if k in RoleSettings.model_fields}
    settings = SimpleNamespace(
        teacher=TeacherSettings(base_url=url, **role_fields),
        student=StudentSettings(base_url=url, **role_fields),
        max_in_flight=overrides.pop("max_in_flight", 256),
        llm=LLMSettings(**{"backoff_initial_s": 0.01, "backoff_max_s": 0.05, "http_backend": "httpx", **overrides}),
    )
    return LLMClient.from_settings(settings, cache_path=cache_path)


def dead_url() -> str:
    """A local URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def msgs(text: str) -> list[dict]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def requests_made(server) -> int:
    return server.stats()["requests"]


class Gate:
    """A responder that blocks prompts containing 'slow' until opened (or the server stops)."""

    def __init__(self) -> None:
        self.open = threading.Event()

    def respond(self, messages, n, rng_seed, params):
        if "slow" in last_user_text(messages):
            self.open.wait(30)
        return EchoResponder().respond(messages, n, rng_seed, params)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_ok_completion_fields_and_usage(serve, backend):
    server = serve()
    async with client(server, http_backend=backend) as llm:
        await llm.preflight()
        [c] = await llm.complete("teacher", msgs("hello"))
    assert c.status == "ok" and not c.cached and c.error is None and c.model == "scripted"
    assert c.content.endswith("hello") and "effort high" in c.reasoning and c.finish_reason == "stop"
    assert c.prompt_tokens > 0 and c.completion_tokens > 0 and c.latency_s > 0
    teacher = llm.usage.as_dict()["teacher"]
    assert teacher["requests"] == 1 and teacher["samples_ok"] == 1
    assert teacher["prompt_tokens"] == c.prompt_tokens and teacher["completion_tokens"] == c.completion_tokens
    assert llm.usage.as_dict()["total"]["requests"] == 1 and "requests 1" in llm.usage.summary()


@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
async def test_reasoning_read_from_either_field(serve, field):
    async with client(serve(reasoning_field=field)) as llm:
        [c] = await llm.complete("student", msgs("x"))
    assert c.reasoning.startswith("scripted reasoning (effort low)")


@pytest.mark.parametrize("fault", ["error_rate", "rate_limit_rate"])
async def test_500_and_429_are_retried_until_they_pass(serve, fault):
    server = serve(seed=1, **{fault: 0.5})
    async with client(server, max_attempts=20) as llm:
        results = await asyncio.gather(*(llm.complete("teacher", msgs(f"p{i}")) for i in range(20)))
    assert all(r[0].status == "ok" for r in results)
    usage = llm.usage.roles["teacher"]
    cause = "http_500" if fault == "error_rate" else "http_429"
    assert usage.retries > 0 and usage.errors_by_cause[cause] == usage.retries
    assert requests_made(server) == usage.requests == 20 + usage.retries


async def test_exhausted_retries_are_infra_never_raised(serve):
    server = serve(error_rate=1.0)
    async with client(server, max_attempts=3) as llm:
        results = await llm.complete("student", msgs("x"), n=2)
    assert [c.status for c in results] == ["infra", "infra"]
    assert results[0].error.startswith("http_500") and results[0].content == ""
    usage = llm.usage.roles["student"]
    assert usage.samples_infra == 2 and dict(usage.infra_by_cause) == {"http_500": 2}
    assert usage.samples_ok == usage.samples_truncated == 0
    assert requests_made(server) == 3  # one n=2 request, three attempts


@pytest.mark.parametrize("backend", BACKENDS)
async def test_hang_past_the_timeout_is_retried_then_infra(serve, backend):
    server = serve(hang_rate=1.0, hang_s=30)
    async with client(server, max_attempts=2, timeout_s=0.3, http_backend=backend) as llm:
        start = time.monotonic()
        [c] = await llm.complete("teacher", msgs("x"))
        elapsed = time.monotonic() - start
    assert c.status == "infra" and c.error.startswith("timeout")
    assert 0.6 <= elapsed < 5
    assert server.stats()["hangs"] == 2
    assert llm.usage.roles["teacher"].infra_by_cause == {"timeout": 1}


async def test_some_hangs_then_success(serve):
    server = serve(seed=2, hang_rate=0.3, hang_s=30)
    # Every timeout must be a hang: a limit well above a busy machine's answer time (not 0.3 s).
    async with client(server, max_attempts=10, timeout_s=2.0) as llm:
        results = await asyncio.gather(*(llm.complete("teacher", msgs(f"p{i}")) for i in range(12)))
    assert all(r[0].status == "ok" for r in results)
    assert llm.usage.roles["teacher"].errors_by_cause["timeout"] == server.stats()["hangs"] > 0


async def test_truncation_is_reported_and_not_retried(serve):
    server = serve(truncation_rate=1.0)
    async with client(server) as llm:
        [c] = await llm.complete("teacher", msgs("a long enough prompt " * 10))
        [short] = await llm.complete("student", msgs("x" * 400))
    assert c.status == "truncated" and c.finish_reason == "length"
    assert requests_made(server) == 2
    assert llm.usage.roles["teacher"].samples_truncated == 1 and llm.usage.roles["teacher"].retries == 0
    assert short.status == "truncated"


async def test_max_tokens_truncates(serve):
    async with client(serve(), max_tokens=3) as llm:
        [c] = await llm.complete("teacher", msgs("x" * 200))
    assert c.status == "truncated" and c.completion_tokens <= 3


async def test_n_is_one_request(serve):
    server = serve()
    async with client(server) as llm:
        results = await llm.complete("student", msgs("x"), n=4)
    assert len(results) == 4 and len({c.content for c in results}) == 4
    assert requests_made(server) == 1 and server.stats()["choices"] == 4
    usage = llm.usage.roles["student"]
    assert usage.samples_ok == 4 and usage.completion_tokens == sum(c.completion_tokens for c in results)


async def test_n_fallback_when_the_server_rejects_n(serve):
    server = serve(reject_n=True)
    async with client(server) as llm:
        first = await llm.complete("student", msgs("a"), n=4, key="a")
        assert [c.status for c in first] == ["ok"] * 4 and len({c.content for c in first}) == 4
        assert server.stats()["by_status"] == {"400": 1, "200": 4}
        await llm.complete("student", msgs("b"), n=3, key="b")  # remembered: no second 400
        assert server.stats()["by_status"] == {"400": 1, "200": 7}
    async with client(server, use_n=False) as llm:
        await llm.complete("student", msgs("c"), n=2)
    assert server.stats()["by_status"] == {"400": 1, "200": 9}


async def test_cache_replays_with_zero_requests(serve, tmp_path):
    server = serve()
    cache = tmp_path / "run" / "llm_cache.sqlite"
    prompts = [msgs(f"p{i}") for i in range(10)]
    async with client(server, cache) as llm:
        first = await asyncio.gather(*(llm.complete("student", p, n=2, key="k") for p in prompts))
    assert requests_made(server) == 10
    async with client(server, cache) as llm:
        again = await asyncio.gather(*(llm.complete("student", p, n=2, key="k") for p in prompts))
        other_key = await llm.complete("student", prompts[0], n=2, key="other")
    assert requests_made(server) == 11  # only the new key asked
    assert [[c.content for c in r] for r in again] == [[c.content for c in r] for r in first]
    assert all(c.cached for r in again for c in r) and not any(c.cached for c in other_key)
    assert llm.usage.roles["student"].cache_hits == 20


async def test_cache_key_covers_sampling_settings(serve, tmp_path):
    server = serve()
    cache = tmp_path / "c.sqlite"
    async with client(server, cache) as llm:
        await llm.complete("teacher", msgs("x"))
    async with client(server, cache, temperature=0.5) as llm:
        [c] = await llm.complete("teacher", msgs("x"))
    assert not c.cached and requests_made(server) == 2


async def test_replay_after_a_crash_asks_only_for_unfinished_work(serve, tmp_path):
    gate = Gate()
    server = serve(gate)
    cache = tmp_path / "c.sqlite"
    prompts = [msgs(f"{'slow' if i % 3 == 0 else 'fast'} {i}") for i in range(12)]  # 4 slow
    llm = client(server, cache)
    tasks = [asyncio.ensure_future(llm.complete("teacher", p)) for p in prompts]
    while sum(t.done() for t in tasks) < 8:
        await asyncio.sleep(0.01)
    for t in tasks:  # the crash: unfinished work is lost mid-request
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await llm.aclose()
    before = requests_made(server)
    assert before == 12
    gate.open.set()
    async with client(server, cache) as llm:
        results = await asyncio.gather(*(llm.complete("teacher", p) for p in prompts))
    assert requests_made(server) - before == 4
    assert sum(r[0].cached for r in results) == 8 and all(r[0].status == "ok" for r in results)


async def test_partial_n_fallback_replays_finished_samples(serve, tmp_path):
    calls = []
    release = threading.Event()

    class SecondHalfSlow:
        def respond(self, messages, n, rng_seed, params):
            calls.append(n)
            if len(calls) > 2:
                release.wait(30)
            return EchoResponder().respond(messages, n, rng_seed, params)

    server = serve(SecondHalfSlow(), reject_n=True)
    cache = tmp_path / "c.sqlite"
    llm = client(server, cache)
    task = asyncio.ensure_future(llm.complete("student", msgs("x"), n=4, key="k"))
    while (
        len(calls) < 4 or llm._cache._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] < 2
    ):  # two samples finished and cached, two hanging
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await llm.aclose()
    release.set()
    while server.stats()["in_flight"]:  # the two released handlers answer (to a closed connection) first
        await asyncio.sleep(0.01)
    ok_before = server.stats()["by_status"].get("200", 0)
    async with client(server, cache) as llm:
        results = await llm.complete("student", msgs("x"), n=4, key="k")
    assert [c.cached for c in results].count(True) == 2 and all(c.status == "ok" for c in results)
    assert server.stats()["by_status"]["200"] - ok_before == 2  # only the two missing samples


async def test_infra_failures_are_not_cached(serve, tmp_path):
    cache = tmp_path / "c.sqlite"
    async with client(serve(error_rate=1.0), cache, max_attempts=2) as llm:
        [bad] = await llm.complete("teacher", msgs("x"))
    assert bad.status == "infra"
    healthy = serve()
    async with client(healthy, cache) as llm:
        [good] = await llm.complete("teacher", msgs("x"))
    assert good.status == "ok" and not good.cached and requests_made(healthy) == 1


async def test_deterministic_under_a_seed(serve):
    async def run(server):
        async with client(server) as llm:
            results = await asyncio.gather(*(llm.complete("student", msgs(f"p{i}"), n=2) for i in range(30)))
        return [[c.content for c in r] for r in results]

    assert await run(serve(seed=4)) == await run(serve(seed=4))
    assert await run(serve(seed=4)) != await run(serve(seed=5))


async def test_in_flight_bound_holds_and_is_reached(serve):
    server = serve(latency_s=0.1)
    async with client(server, max_in_flight=8) as llm:
        await asyncio.gather(*(llm.complete("teacher", msgs(f"p{i}")) for i in range(40)))
        assert llm.in_flight == 0 and llm.queued == 0
    assert server.stats()["peak_in_flight"] == 8


async def test_a_slow_request_does_not_hold_back_fast_ones(serve):
    gate = Gate()
    server = serve(gate)
    async with client(server, max_in_flight=4) as llm:
        slow = asyncio.ensure_future(llm.complete("teacher", msgs("slow one")))
        fast = await asyncio.wait_for(
            asyncio.gather(*(llm.complete("teacher", msgs(f"fast {i}")) for i in range(30))), timeout=10
        )
        assert not slow.done() and all(r[0].status == "ok" for r in fast)
        gate.open.set()
        assert (await slow)[0].status == "ok"


async def test_a_queued_call_cancelled_gives_its_slot_back(serve):
    """A call cancelled while it waits for a slot leaves the bound as it was: the next calls still
    get every slot."""
    gate = Gate()
    server = serve(gate)
    async with client(server, max_in_flight=1) as llm:
        slow = asyncio.ensure_future(llm.complete("teacher", msgs("slow one")))
        while llm.in_flight == 0:
            await asyncio.sleep(0.01)
        waiting = asyncio.ensure_future(llm.complete("teacher", msgs("waiting")))
        queued = asyncio.ensure_future(llm.complete("teacher", msgs("queued")))
        await asyncio.sleep(0.05)
        assert llm.queued == 2
        waiting.cancel()  # cancelled while it waits for a slot
        gate.open.set()
        assert (await slow)[0].status == "ok" and (await queued)[0].status == "ok"
        await asyncio.gather(waiting, return_exceptions=True)
        assert llm._slots.free == 1 and llm.in_flight == 0
        assert (await asyncio.wait_for(llm.complete("teacher", msgs("after")), timeout=10))[0].status == "ok"


async def test_256_requests_are_in_flight_at_once(serve):
    """The property, not a timing: the server holds every request until 256 are there at once."""
    everyone = threading.Barrier(256, timeout=120)

    class HoldUntilAllArrive:
        def respond(self, messages, n, rng_seed, params):
            everyone.wait()  # raises BrokenBarrierError (a 500) if 256 never arrive together
            return EchoResponder().respond(messages, n, rng_seed, params)

    server = serve(HoldUntilAllArrive())
    async with client(server, max_in_flight=256, max_attempts=1) as llm:
        results = await asyncio.gather(*(llm.complete("student", msgs(f"p{i}")) for i in range(256)))
    assert all(r[0].status == "ok" for r in results)
    assert server.stats()["peak_in_flight"] == 256


async def test_preflight_names_what_is_wrong(serve):
    url = dead_url()
    async with client(url, http_backend="aiohttp" if HAVE_AIOHTTP else "httpx") as llm:
        with pytest.raises(ServerNotReady, match=f"nothing answered at {url}.*connection refused"):
            await llm.preflight()
    async with client(serve(models=("a/model", "b/model")), model="some/other-model") as llm:
        expected = "serves 'a/model', 'b/model', not the configured model 'some/other-model'"
        with pytest.raises(ServerNotReady, match=expected):
            await llm.preflight()


async def test_preflight_checks_each_role_server(serve):
    good = serve()
    settings = SimpleNamespace(
        teacher=TeacherSettings(base_url=good.url),
        student=StudentSettings(base_url=dead_url()),
        llm=LLMSettings(http_backend="httpx"),
        max_in_flight=4,
    )
    async with LLMClient.from_settings(settings) as llm:
        with pytest.raises(ServerNotReady, match="^student: nothing answered"):
            await llm.preflight()


async def test_preflight_waits_for_a_server_that_starts_later(serve):
    url = dead_url()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    starter = threading.Timer(1.0, lambda: serve(port=port))
    starter.start()
    try:
        async with client(url) as llm:
            await llm.preflight(wait_s=60)
            [c] = await llm.complete("teacher", msgs("up now"))
    finally:
        starter.join()
    assert c.status == "ok"


async def test_api_key_falls_back_to_env_then_empty(serve, monkeypatch):
    server = serve()
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    async with client(server) as llm:
        assert llm._client(llm.roles["teacher"]).api_key == "from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    async with client(server) as llm:
        assert llm._client(llm.roles["teacher"]).api_key == "EMPTY"
    async with client(server, api_key="given") as llm:
        assert llm._client(llm.roles["teacher"]).api_key == "given"


async def test_unknown_role_and_zero_samples(serve):
    async with client(serve()) as llm:
        assert await llm.complete("student", msgs("x"), n=0) == []
        with pytest.raises(KeyError):
            await llm.complete("critic", msgs("x"))


def test_settings_are_checked():
    with pytest.raises(ValidationError):
        LLMSettings(http_backend="carrier-pigeon")
    with pytest.raises(ValidationError):
        LLMSettings(max_outage_s=-1)
    with pytest.raises(ValueError):
        LLMClient(TeacherSettings(), StudentSettings(), max_in_flight=0)


# -- infrastructure failures: labelled by kind, retried within a time bound, never final ----------


@pytest.mark.parametrize("backend", BACKENDS)
async def test_refused_connection_is_labelled_connection_refused(backend):
    async with client(dead_url(), http_backend=backend, max_attempts=3) as llm:
        [c] = await llm.complete("teacher", msgs("x"))
    assert c.status == "infra" and c.error.startswith("connection_refused: ")
    usage = llm.usage.roles["teacher"]
    assert dict(usage.infra_by_cause) == {"connection_refused": 1}
    assert usage.errors_by_cause == {"connection_refused": 3} and usage.requests == 3


async def test_an_outage_ends_on_the_time_bound_not_the_count():
    async with client(dead_url(), max_attempts=10_000, max_outage_s=1.0, backoff_max_s=0.1) as llm:
        start = time.monotonic()
        [c] = await llm.complete("teacher", msgs("x"))
        elapsed = time.monotonic() - start
    assert c.status == "infra" and c.error.startswith("connection_refused")
    assert elapsed >= 1.0 and 1 < llm.usage.roles["teacher"].requests < 10_000


async def test_a_server_restart_in_the_middle_is_ridden_out(serve, tmp_path):
    """The server goes away with requests outstanding and comes back on the same port."""
    first = serve(latency_s=0.2)
    port = first.port
    cache = tmp_path / "c.sqlite"
    async with client(first, cache, max_attempts=10_000, max_outage_s=60, backoff_max_s=0.2) as llm:
        pending = [asyncio.ensure_future(llm.complete("student", msgs(f"p{i}"), n=2, key=f"k{i}")) for i in range(20)]
        while llm.in_flight == 0:
            await asyncio.sleep(0.01)
        first.stop()
        await asyncio.sleep(1.5)  # an outage: every try meets a refused connection
        second = serve(port=port)
        results = await asyncio.gather(*pending)
    assert all(c.status == "ok" for r in results for c in r)
    errors = llm.usage.roles["student"].errors_by_cause
    assert errors["connection_refused"] > 0 and second.stats()["requests"] > 0


async def test_malformed_answers_come_back_infra_never_raised(serve):
    for fault in ("truncated_body_rate", "bad_usage_rate", "bad_index_rate"):
        server = serve(**{fault: 1.0})
        async with client(server, max_attempts=3) as llm:
            results = await llm.complete("student", msgs("x"), n=3)
            [single] = await llm.complete("teacher", msgs("y"))
        assert [c.status for c in results] == ["infra"] * 3 and single.status == "infra", fault
        assert results[0].error.startswith("bad_response: ") and single.error.startswith("bad_response: "), fault
        assert llm.usage.total().errors_by_cause == {"bad_response": 6}, fault
        assert server.stats()["by_status"] == {"200-malformed": 6}


@pytest.mark.parametrize("backend", BACKENDS)
async def test_malformed_answers_are_retried_until_one_is_whole(serve, backend):
    server = serve(seed=3, truncated_body_rate=0.3, bad_usage_rate=0.3, bad_index_rate=0.3)
    async with client(server, max_attempts=50, http_backend=backend) as llm:
        results = await asyncio.gather(*(llm.complete("student", msgs(f"p{i}"), n=2) for i in range(25)))
    assert all(c.status == "ok" for r in results for c in r)
    usage = llm.usage.roles["student"]
    assert usage.errors_by_cause["bad_response"] == server.stats()["by_status"]["200-malformed"] > 0


class _Canned:
    """A responder whose answer the test chooses."""

    def __init__(self, content: str, reasoning: str = "") -> None:
        self.content, self.reasoning = content, reasoning

    def respond(self, messages, n, rng_seed, params):
        from synthgen.demo.scripted import ScriptedReply

        return [ScriptedReply(self.content, self.reasoning) for _ in range(n)]


def _http_server(handle_connection) -> tuple[str, threading.Event]:
    """A raw HTTP server on a free port that gives each connection to `handle_connection(sock)`."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=handle_connection, args=(conn, done), daemon=True).start()
        listener.close()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", done


def _drip(conn: socket.socket, done: threading.Event) -> None:
    """Read the request, then send a 200 whose 1000-byte body comes one byte every 0.2 s."""
    with conn:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
        for _ in range(1000):
            if done.wait(0.2):
                return
            try:
                conn.sendall(b" ")
            except OSError:
                return


@pytest.mark.parametrize("backend", BACKENDS)
async def test_timeout_bounds_the_whole_request_against_a_dripping_server(backend):
    url, done = _http_server(_drip)
    try:
        async with client(url, timeout_s=1.0, max_attempts=2, http_backend=backend) as llm:
            start = time.monotonic()
            [c] = await llm.complete("teacher", msgs("x"))
            elapsed = time.monotonic() - start
    finally:
        done.set()
    # Each read gets a byte within 0.2 s, so only a bound on the whole request ends it (the body
    # alone would take 200 s).
    assert c.status == "infra" and c.error.startswith("timeout: ")
    assert elapsed < 30 and llm.usage.roles["teacher"].errors_by_cause == {"timeout": 2}


# -- text, provenance and accounting -----------------------------------------------------------


async def test_lone_surrogates_come_back_escaped_and_cache_cleanly(serve, tmp_path):
    server = serve(_Canned("answer \ud800 end", "think \udfff"))
    cache = tmp_path / "c.sqlite"
    async with client(server, cache) as llm:
        [c] = await llm.complete("teacher", msgs("x"))
    assert c.status == "ok" and c.content == "answer \\ud800 end" and c.reasoning == "think \\udfff"
    c.content.encode("utf-8")
    async with client(server, cache) as llm:
        [again] = await llm.complete("teacher", msgs("x"))
    assert again.cached and again.content == c.content and requests_made(server) == 1


async def test_cache_entries_from_before_are_read_safely(serve, tmp_path):
    from synthgen.llm.cache import RequestCache, cache_key

    server = serve()
    cache = tmp_path / "c.sqlite"
    role = TeacherSettings(base_url=server.url)
    old = {
        "status": "ok",
        "content": "old \ud800",
        "reasoning": "",
        "finish_reason": "stop",
        "prompt_tokens": 3,
        "completion_tokens": 2,
        "latency_s": 0.1,
        "cached": False,
        "error": None,
    }  # no `model`: older format
    store = RequestCache(cache)
    store.put_many([(cache_key(role.model, msgs("x"), role.sampling(), 0, ""), old)])
    store.close()
    async with client(server, cache) as llm:
        [c] = await llm.complete("teacher", msgs("x"))
    assert c.cached and c.content == "old \\ud800" and c.model == "" and requests_made(server) == 0


async def test_prompt_tokens_count_once_per_request(serve):
    server = serve()
    async with client(server) as llm:
        samples = await llm.complete("student", msgs("a prompt of some length"), n=4)
    assert samples[0].prompt_tokens > 0 and [c.prompt_tokens for c in samples[1:]] == [0, 0, 0]
    usage = llm.usage.roles["student"]
    assert usage.prompt_tokens == sum(c.prompt_tokens for c in samples)
    assert usage.completion_tokens == sum(c.completion_tokens for c in samples)
    assert all(c.model == "scripted" for c in samples)


async def test_single_requests_each_carry_their_own_prompt(serve):
    server = serve(reject_n=True)
    async with client(server) as llm:
        samples = await llm.complete("student", msgs("x"), n=3)
    assert all(c.prompt_tokens > 0 for c in samples)  # three requests, three prompts paid
    assert llm.usage.roles["student"].prompt_tokens == sum(c.prompt_tokens for c in samples)


def test_parse_rejects_each_malformed_shape():
    from synthgen.llm.errors import BadResponse
    from synthgen.llm.response import parse_completions

    def answer(choices, usage=None):
        return {"model": "m", "choices": choices, "usage": usage or {"prompt_tokens": 5, "completion_tokens": 4}}

    def choice(i, content="a"):
        return {"index": i, "message": {"content": content}, "finish_reason": "stop"}

    bad = [
        {"choices": None},
        "not an object",
        answer([]),  # no choice at all
        answer([choice(0), choice(1), choice(2)]),  # more choices than asked for
        answer([choice(1)]),  # one choice for n = 2, but not the first sample
        answer([choice(0), choice(0)]),  # duplicate index
        answer([choice("0"), choice(1)]),  # a string index
        answer([choice(0), {"index": 1, "finish_reason": "stop"}]),  # no message
        answer([choice(0), choice(1, content=["parts"])]),  # content not a string
        answer([choice(0), choice(1)], {"prompt_tokens": "5", "completion_tokens": 4}),
        answer([choice(0), choice(1)], {"prompt_tokens": 5, "completion_tokens": -1}),
        answer([choice(0), choice(1)], ["usage"]),
    ]
    for response in bad:
        with pytest.raises(BadResponse):
            parse_completions(response, 2, 0.1)
    good, prompt, total = parse_completions(answer([choice(1, "bb"), choice(0, "a")]), 2, 0.1)
    assert [c.content for c in good] == ["a", "bb"] and (prompt, total) == (5, 4)
    assert [c.prompt_tokens for c in good] == [5, 0] and sum(c.completion_tokens for c in good) == 4
    # A server that ignores n answers one choice: the first sample, kept as it is.
    [first], _, _ = parse_completions(answer([choice(0, "only")]), 2, 0.1)
    assert first.content == "only" and first.status == "ok"
    [c], _, _ = parse_completions(
        {"choices": [{"index": 0, "message": {"content": None, "reasoning_content": "r"}, "finish_reason": "length"}]},
        1,
        0.1,
    )
    assert c == Completion("truncated", "", "r", "length", 0, 0, 0.1)
