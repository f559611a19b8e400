"""LLMClient over real HTTP against the scripted server; requests are counted on the server side."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time

import pytest

from synthgen.llm import ClientConfig, Completion, LLMClient, RoleConfig, ServerNotReady, _BadResponse, _parse
from synthgen.scripted import EchoResponder
from synthgen.scripted.responder import last_user_text

HAVE_AIOHTTP = importlib.util.find_spec("aiohttp") is not None
BACKENDS = ["httpx", pytest.param("aiohttp", marks=pytest.mark.skipif(not HAVE_AIOHTTP, reason="no aiohttp"))]


def client(server, cache_path=None, **overrides) -> LLMClient:
    role_fields = {k: overrides.pop(k) for k in list(overrides) if k in RoleConfig.__dataclass_fields__}
    teacher = RoleConfig(base_url=server.url, **role_fields)
    student = RoleConfig(base_url=server.url, **{"reasoning_effort": "low", **role_fields})
    settings = {"backoff_initial_s": 0.01, "backoff_max_s": 0.05, "http_backend": "httpx", **overrides}
    return LLMClient(ClientConfig(teacher=teacher, student=student, **settings), cache_path=cache_path)


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
        await llm.wait_ready("teacher", timeout_s=5)
        [c] = await llm.complete("teacher", msgs("hello"))
    assert c.status == "ok" and c.ok and not c.cached and c.error is None
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
    usage = llm.usage.role("teacher")
    cause = "http_500" if fault == "error_rate" else "http_429"
    assert usage.retries > 0 and usage.errors_by_cause[cause] == usage.retries
    assert requests_made(server) == usage.requests == 20 + usage.retries


async def test_exhausted_retries_are_infra_never_raised(serve):
    server = serve(error_rate=1.0)
    async with client(server, max_attempts=3) as llm:
        results = await llm.complete("student", msgs("x"), n=2)
    assert [c.status for c in results] == ["infra", "infra"]
    assert results[0].error.startswith("http_500") and results[0].content == ""
    usage = llm.usage.role("student")
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
    assert llm.usage.role("teacher").infra_by_cause == {"timeout": 1}


async def test_some_hangs_then_success(serve):
    server = serve(seed=2, hang_rate=0.3, hang_s=30)
    async with client(server, max_attempts=10, timeout_s=0.3) as llm:
        results = await asyncio.gather(*(llm.complete("teacher", msgs(f"p{i}")) for i in range(12)))
    assert all(r[0].ok for r in results)
    assert llm.usage.role("teacher").errors_by_cause["timeout"] == server.stats()["hangs"] > 0


async def test_truncation_is_reported_and_not_retried(serve):
    server = serve(truncation_rate=1.0)
    async with client(server) as llm:
        [c] = await llm.complete("teacher", msgs("a long enough prompt " * 10))
        [short] = await llm.complete("student", msgs("x" * 400))
    assert c.status == "truncated" and c.finish_reason == "length"
    assert requests_made(server) == 2
    assert llm.usage.role("teacher").samples_truncated == 1 and llm.usage.role("teacher").retries == 0
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
    usage = llm.usage.role("student")
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
    assert llm.usage.role("student").cache_hits == 20


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
    assert sum(r[0].cached for r in results) == 8 and all(r[0].ok for r in results)


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
    while len(calls) < 4 or len(llm._cache) < 2:  # two samples finished and cached, two hanging
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await llm.aclose()
    release.set()
    ok_before = server.stats()["by_status"].get("200", 0)
    async with client(server, cache) as llm:
        results = await llm.complete("student", msgs("x"), n=4, key="k")
    assert [c.cached for c in results].count(True) == 2 and all(c.ok for c in results)
    assert server.stats()["by_status"]["200"] - ok_before == 2  # only the two missing samples


async def test_infra_failures_are_not_cached(serve, tmp_path):
    cache = tmp_path / "c.sqlite"
    async with client(serve(error_rate=1.0), cache, max_attempts=2) as llm:
        [bad] = await llm.complete("teacher", msgs("x"))
    assert bad.status == "infra"
    healthy = serve()
    async with client(healthy, cache) as llm:
        [good] = await llm.complete("teacher", msgs("x"))
    assert good.ok and not good.cached and requests_made(healthy) == 1


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
        assert not slow.done() and all(r[0].ok for r in fast)
        gate.open.set()
        assert (await slow)[0].ok


async def test_sustains_256_concurrent_requests(serve):
    server = serve(latency_s=0.5)
    async with client(server, max_in_flight=300) as llm:
        start = time.monotonic()
        results = await asyncio.gather(*(llm.complete("student", msgs(f"p{i}")) for i in range(300)))
        elapsed = time.monotonic() - start
    assert all(r[0].ok for r in results)
    assert server.stats()["peak_in_flight"] >= 256 and elapsed < 6


async def test_wait_ready_errors_name_the_url(serve):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    role = RoleConfig(base_url=f"http://127.0.0.1:{port}/v1")
    async with LLMClient(ClientConfig(teacher=role, student=role, http_backend="httpx")) as llm:
        with pytest.raises(ServerNotReady, match=f"127.0.0.1:{port}/v1/models"):
            await llm.wait_ready("teacher", timeout_s=0.5, poll_s=0.1)
    async with client(serve(), model="some/other-model") as llm:
        with pytest.raises(ServerNotReady, match="not the configured model"):
            await llm.wait_ready("student", timeout_s=5)


async def test_api_key_falls_back_to_env_then_empty(serve, monkeypatch):
    server = serve()
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    async with client(server) as llm:
        assert llm._client(llm.config.teacher).api_key == "from-env"
    monkeypatch.delenv("OPENAI_API_KEY")
    async with client(server) as llm:
        assert llm._client(llm.config.teacher).api_key == "EMPTY"
    async with client(server, api_key="given") as llm:
        assert llm._client(llm.config.teacher).api_key == "given"


async def test_unknown_role_and_zero_samples(serve):
    async with client(serve()) as llm:
        assert await llm.complete("student", msgs("x"), n=0) == []
        with pytest.raises(ValueError):
            await llm.complete("critic", msgs("x"))


def test_parse_rejects_malformed_answers():
    with pytest.raises(_BadResponse):
        _parse({"choices": None}, 1, 0.1)
    with pytest.raises(_BadResponse):
        _parse({"choices": [{"index": 0, "message": {"content": "a"}, "finish_reason": "stop"}]}, 2, 0.1)
    [c] = _parse(
        {"choices": [{"index": 0, "message": {"content": None, "reasoning_content": "r"}, "finish_reason": "length"}]},
        1,
        0.1,
    )
    assert c == Completion("truncated", "", "r", "length", 0, 0, 0.1)


def test_client_config_is_checked():
    with pytest.raises(ValueError, match="http_backend"):
        ClientConfig(http_backend="carrier-pigeon")
    with pytest.raises(ValueError):
        ClientConfig(max_in_flight=0)
