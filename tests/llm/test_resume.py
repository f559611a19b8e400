"""Exact resume at every cache commit: sample i of a keyed request is drawn with seed base + i
however the request is split, so a re-run after a kill draws exactly the samples the uninterrupted
run drew (the scripted server honours vLLM's rule: n = k with seed s gives the samples that seeds
s..s+k-1 give alone)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3

import pytest

from synthgen.llm.client import base_seed
from tests.llm.test_client import client, msgs, requests_made

# A generate-like and a chain-like workload: per turn one teacher answer, then M student answers
# asked with n = M (chain: two tries of a step, the second one only after the first).
GENERATE = [("teacher", f"lineage {i} turn {t}", 1, f"L{i}:t{t}") for i in range(4) for t in (1, 2)] + [
    ("student", f"problem {i} {t}", 8, f"L{i}:t{t}") for i in range(4) for t in (1, 2)
]
CHAIN = [("teacher", f"chain {c} try {k}", 1, f"C{c}:t{k}") for c in range(3) for k in (1, 2)] + [
    ("student", f"step {c} {k}", 6, f"C{c}:t{k}") for c in range(3) for k in (1, 2)
]


async def _run(server, cache, calls, **settings) -> list[list[str]]:
    async with client(server, cache, max_in_flight=4, **settings) as llm:
        answers = await asyncio.gather(*(llm.complete(role, msgs(text), n, key=key) for role, text, n, key in calls))
    assert all(c.status == "ok" for a in answers for c in a)
    return [[c.content for c in a] for a in answers]


def _killed_at(cache, commit: int, target) -> None:
    """The cache as a kill -9 right after its `commit`-th commit leaves it: the first commits only."""
    shutil.copy(cache, target)
    with sqlite3.connect(target) as db:
        db.execute("DELETE FROM samples WHERE rowid > ?", (commit,))


def test_base_seed_fits_31_bits_and_needs_a_key():
    base = base_seed("L0:t1")
    assert 0 <= base < 2**30
    assert base_seed("") is None


async def test_the_scripted_server_seeds_sample_i_of_an_n_request_with_seed_plus_i(serve):
    server = serve()
    async with client(server) as llm:
        body = llm._body(llm.roles["student"], msgs("x"), 4, seed=100)
        whole = await llm._request("student", llm.roles["student"], msgs("x"), 4, 100)
        alone = [(await llm._request("student", llm.roles["student"], msgs("x"), 1, 100 + i))[0] for i in range(4)]
        tail = await llm._request("student", llm.roles["student"], msgs("x"), 2, 102)
    assert body["seed"] == 100 and body["n"] == 4
    assert [c.content for c in whole] == [c.content for c in alone] and len({c.content for c in whole}) == 4
    assert [c.content for c in tail] == [c.content for c in alone[2:]]


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["generate", "chain"])
async def test_a_kill_at_every_cache_commit_resumes_to_the_uninterrupted_samples(serve, tmp_path, workload):
    calls = GENERATE if workload == "generate" else CHAIN
    server = serve()
    reference_cache = tmp_path / "reference.sqlite"
    reference = await _run(server, reference_cache, calls)
    commits = sum(n for _, _, n, _ in calls)
    with sqlite3.connect(reference_cache) as db:
        assert db.execute("SELECT COUNT(*), MAX(rowid) FROM samples").fetchone() == (commits, commits)
    for commit in range(commits):  # a kill after 0, 1, ..., commits - 1 commits
        cache = tmp_path / f"killed-{commit}.sqlite"
        _killed_at(reference_cache, commit, cache)
        before = requests_made(server)
        assert await _run(server, cache, calls) == reference, f"kill after commit {commit}"
        assert requests_made(server) - before <= len(calls)  # one request per unfinished answer
        cache.unlink()


@pytest.mark.slow
async def test_resume_is_exact_also_against_a_server_that_ignores_n(serve, tmp_path):
    honours = serve()
    ignores = serve(ignore_n=True)
    reference = await _run(honours, None, GENERATE)
    cache = tmp_path / "c.sqlite"
    assert await _run(ignores, cache, GENERATE) == reference  # the same samples, one request each
    assert requests_made(ignores) == sum(n for _, _, n, _ in GENERATE)
    for commit in (1, 5, 13, 30):
        killed = tmp_path / f"k{commit}.sqlite"
        _killed_at(cache, commit, killed)
        assert await _run(honours, killed, GENERATE) == reference


@pytest.mark.parametrize("backend", ["httpx", "auto"])
async def test_a_timed_out_request_closes_its_connection_so_the_server_can_stop(backend):
    """A server that never answers sees the connection closed once the client's timeout passes
    (vLLM aborts a request whose client went away)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    closed = threading.Event()

    def never_answer() -> None:
        conn, _ = listener.accept()
        conn.settimeout(20)
        try:
            while conn.recv(65536):  # the request, then nothing: b"" once the client closes
                pass
            closed.set()
        except OSError:
            pass
        finally:
            conn.close()

    thread = threading.Thread(target=never_answer, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/v1"
    async with client(url, timeout_s=0.5, max_attempts=1, http_backend=backend) as llm:
        [answer] = await llm.complete("teacher", msgs("x"), key="k")
        assert answer.status == "infra" and answer.error.startswith("timeout: no complete answer within 0.5 s")
        await asyncio.to_thread(closed.wait, 10)  # before the client itself is closed
        assert closed.is_set()
    listener.close()
