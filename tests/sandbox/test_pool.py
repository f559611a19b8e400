"""Pool behaviour: order, concurrency, determinism check, health (crashed workers), clean shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from synthgen.sandbox import Job, SandboxPool, Status, values
from tests.helpers.sandbox import assert_serves, statuses

SQUARE = "def f(x):\n    return x * x\n"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _tree(pids) -> set[int]:
    out = set()
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            out |= {pid} | {c.pid for c in proc.children(recursive=True)}
        except psutil.NoSuchProcess:
            pass
    return out


def _wait_gone(pids, timeout=10.0) -> set[int]:
    deadline = time.monotonic() + timeout
    left = set(pids)
    while left and time.monotonic() < deadline:
        left = {p for p in left if _alive(p)}
        time.sleep(0.05)
    return left


def test_verdicts_and_isolation_are_reported(bwrap_pool):
    job = Job(
        SQUARE,
        ("f(3)", "f(4)", "f('a')", "f(2.0)"),
        (values.from_literal("9"), values.from_literal("15"), None, values.from_literal("4")),
    )
    r = bwrap_pool.run_sync(job)
    assert r.isolation == "bwrap"
    assert statuses(r) == ["ok", "ok", "exception", "ok"]
    assert [c.match for c in r.calls] == [True, False, None, False]  # 4.0 is not 4
    assert r.calls[0].value == "9" and "TypeError" in r.calls[2].error


def test_run_many_keeps_order_and_uses_all_workers(bwrap_pool):
    code = "import time\ndef f(x):\n    t = time.time()\n    time.sleep(0.2)\n    return [x, t, time.time()]\n"
    results = bwrap_pool.run_many([Job(code, (f"f({i})",)) for i in range(6)])
    spans = [values.decode(r.calls[0].encoded) for r in results]
    assert [s[0] for s in spans] == list(range(6))
    overlapping = [(a, b) for a in spans for b in spans if a[0] < b[0] and a[1] < b[2] and b[1] < a[2]]
    assert overlapping  # some jobs ran at the same time: more than one worker was busy


async def test_many_concurrent_async_callers(bwrap_pool):
    async def one(i):
        return i, await bwrap_pool.run(Job(SQUARE, (f"f({i})",)))

    results = await asyncio.gather(*(one(i) for i in range(40)))
    assert all(r.calls[0].encoded == str(i * i) for i, r in results)


async def test_determinism_check_uses_two_hash_seeds(bwrap_pool):
    unordered = "def f():\n    return list({'apple', 'banana', 'cherry', 'date', 'elder', 'fig', 'grape'})\n"
    a, b = await bwrap_pool.run_twice_for_determinism(Job(unordered, ("f()",)))
    assert a.calls[0].status is Status.OK and b.calls[0].status is Status.OK
    assert not a.same_outcome(b)  # set order depends on the string hash seed
    a, b = await bwrap_pool.run_twice_for_determinism(Job(SQUARE, ("f(5)", "f('x')")))
    assert a.same_outcome(b)


def test_same_seed_gives_reproducible_results(bwrap_pool):
    code = "import random\ndef f():\n    return [list({'a', 'b', 'c', 'd', 'e'}), random.random()]\n"
    results = bwrap_pool.run_many([Job(code, ("f()",)) for _ in range(6)])
    assert len({r.calls[0].encoded for r in results}) == 1


def test_crashed_idle_worker_is_replaced(bwrap_pool):
    assert_serves(bwrap_pool)
    victim = bwrap_pool.worker_pids("main")[0]
    os.kill(victim, signal.SIGKILL)
    assert _wait_gone([victim]) == set()
    deadline = time.monotonic() + 10
    while victim in bwrap_pool.worker_pids() and time.monotonic() < deadline:
        time.sleep(0.01)  # until the pool has noticed (a job sent meanwhile would get infra)
    for _ in range(2 * bwrap_pool.workers):
        assert_serves(bwrap_pool)
    assert victim not in bwrap_pool.worker_pids()
    assert len(bwrap_pool.worker_pids("main")) == bwrap_pool.workers


def test_worker_killed_mid_job_gives_infra_not_a_wrong_answer(needs_bwrap):
    with SandboxPool(workers=1, isolation="bwrap") as pool:
        assert_serves(pool)
        future = pool.submit(
            Job("import time\ndef f():\n    time.sleep(30)\n", ("f()",), (values.encode(1),), timeout_s=30)
        )
        queued = pool.submit(Job(SQUARE, ("f(3)",)))  # sent ahead to the same zygote, behind the sleeper
        time.sleep(0.5)
        os.kill(pool.worker_pids()[0], signal.SIGKILL)
        r = future.result(timeout=10)
        assert statuses(r) == ["infra"] and r.infra and r.calls[0].match is None and not r.all_passed
        assert queued.result(timeout=30).calls[0].encoded == "9"  # it never ran there: re-queued, not lost
        assert_serves(pool)


def test_workers_that_cannot_start_give_infra_instead_of_hanging(needs_bwrap):
    with SandboxPool(workers=1, isolation="bwrap") as pool:
        assert_serves(pool)
        pool._plan.python = "/nonexistent/python3"  # every replacement will fail to start
        victim = pool.worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while victim in pool.worker_pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        results = [pool.submit(Job(SQUARE, ("f(2)",))).result(timeout=30) for _ in range(2)]
        assert all(statuses(r) == ["infra"] for r in results)
        assert "cannot start" in results[-1].calls[0].error


def test_close_leaves_no_processes_behind(needs_bwrap):
    pool = SandboxPool(workers=2, isolation="bwrap")
    future = pool.submit(Job("def f():\n    while True:\n        pass\n", ("f()",), timeout_s=30))
    assert_serves(pool)
    tree = _tree(pool.worker_pids())
    assert len(tree) >= 2 * 3  # bwrap, its init, the shim, the zygote (and a job child)
    pool.close()
    assert statuses(future.result(timeout=1)) == ["infra"]
    assert _wait_gone(tree) == set()
    with pytest.raises(RuntimeError):
        pool.submit(Job(SQUARE, ("f(1)",)))


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_host_process_death_leaves_no_orphans(how, needs_bwrap):
    script = textwrap.dedent("""
        import sys, time
        from synthgen.sandbox import SandboxPool, Job
        pool = SandboxPool(workers=2, isolation="bwrap")
        with pool:
            pool.run_many([Job("def f():\\n    return 1\\n", ("f()",))] * 4)
            future = pool.submit(Job("def f():\\n    while True:\\n        pass\\n", ("f()",), timeout_s=60))
            print(" ".join(map(str, pool.worker_pids())), flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=os.getcwd(), text=True)
    try:
        line = proc.stdout.readline()
        tree = _tree(int(p) for p in line.split())
        assert len(tree) >= 2 * 3  # at least bwrap, its init and the zygote per worker
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _wait_gone(tree) == set()


def test_closing_while_workers_start_leaves_nothing_behind(needs_bwrap):
    """bwrap killed mid-start-up leaves a child waiting forever unless its whole group is killed."""
    dirs = []
    for delay in (0.0, 0.005, 0.01, 0.02, 0.04, 0.08):
        pool = SandboxPool(workers=2, isolation="bwrap")
        dirs.append(pool._plan.sandbox_dir)
        time.sleep(delay)
        pool.close()
    deadline = time.monotonic() + 10
    while (left := _processes_mentioning(dirs)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left


def _processes_mentioning(words) -> list[int]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.info["status"] != psutil.STATUS_ZOMBIE and any(w in cmdline for w in words):
            found.append(proc.pid)
    return found


def test_leftovers_of_a_killed_host_are_cleaned_at_the_next_start(needs_bwrap):
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer exists (as the host killed with SIGKILL)
    stale_dir = f"/tmp/synthgen-sandbox-{dead.pid}-testleft"
    os.makedirs(stale_dir, exist_ok=True)
    # what bwrap looks like when blocked in its start-up: argv[0] "bwrap", the folder in its arguments
    stuck = subprocess.Popen(
        ["bash", "-c", f"exec -a bwrap {sys.executable} -c 'import time; time.sleep(60)' --ro-bind {stale_dir} /sb"]
    )
    deadline = time.monotonic() + 10
    while psutil.Process(stuck.pid).cmdline()[:1] != ["bwrap"] and time.monotonic() < deadline:
        time.sleep(0.01)  # until bash has exec'd
    try:
        with SandboxPool(workers=1, isolation="bwrap") as pool:
            assert_serves(pool)
        assert stuck.wait(timeout=10) == -signal.SIGKILL
        assert not os.path.exists(stale_dir)
    finally:
        if stuck.poll() is None:
            stuck.kill()


def test_subclasses_of_str_and_int_reach_the_child_as_plain_values(bwrap_pool):
    # The wire to the zygote is marshal, which takes exact types only; JSON took these.
    import enum

    class Text(str):
        def __str__(self):
            return "not the text"

    class Megabytes(enum.IntEnum):
        HALF_GIB = 512

    job = Job(Text("def f(x):\n    return x * 2\n"), (Text("f(21)"),), timeout_s=5.0, memory_mb=Megabytes.HALF_GIB)
    assert type(job.code) is str and type(job.calls[0]) is str and type(job.memory_mb) is int
    assert job.code == "def f(x):\n    return x * 2\n"
    result = bwrap_pool.run_sync(job)
    assert [c.status for c in result.calls] == [Status.OK] and result.calls[0].encoded == "42"
