"""No job sees another job's data, one channel per test: a job carries a marker in its code, its
calls, its results, its output, its environment and its files; a later job searches for it (with
tests/helpers/memory_probe.py) and finds nothing. Each probe also proves it can see: a marker it planted
itself is found. The probes write the marker backwards, so their own job text never holds it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
import warnings

import pytest

from synthgen.sandbox import Job, SandboxPool, Status, values
from tests.helpers.memory_probe import PROBE
from tests.helpers.sandbox import get_pool, run

SECRET_CODE = (
    "import os\n"
    "SECRET = {marker!r}\n"
    "def f(x):\n"
    "    print('stdout', SECRET)\n"
    "    os.environ['LEAK_' + SECRET] = SECRET\n"
    "    return [x, SECRET, x + SECRET]\n"
)


def _marker() -> str:
    return f"leak-marker-{uuid.uuid4().hex}"


def _secret_job(marker: str) -> Job:
    """A job whose code, call, result, stdout and environment all hold `marker`."""
    return Job(SECRET_CODE.format(marker=marker), (f"f({marker!r})",), timeout_s=10.0)


def _probe(pool: SandboxPool, *calls: str, timeout_s: float = 30.0):
    result = run(pool, PROBE, *calls, timeout_s=timeout_s, memory_mb=1024)
    assert all(c.status is Status.OK for c in result.calls), result.calls
    return [values.decode(c.encoded) for c in result.calls]


def _after_secrets(pool: SandboxPool, marker: str, jobs: int | None = None) -> None:
    """Run secret jobs on every worker of the pool (several each), checking they ran."""
    for result in pool.run_many([_secret_job(marker) for _ in range(jobs or 3 * pool.workers)]):
        assert result.calls[0].status is Status.OK and marker in result.calls[0].value and marker in result.stdout


@pytest.fixture(scope="module")
def one_worker():
    get_pool("bwrap")  # skips, with the probe's reason, where bwrap cannot work
    with SandboxPool(workers=1, isolation="bwrap") as pool:
        yield pool


def test_memory_holds_no_earlier_job(pool):
    marker = _marker()
    _after_secrets(pool, marker)
    rev = marker[::-1]
    for _ in range(2 * pool.workers):
        (hits, scanned, _), planted, (control, _, _) = _probe(
            pool, f"scan_memory({rev!r})", f"plant({rev!r})", f"scan_memory({rev!r})"
        )
        assert control and scanned > 1 << 20  # the probe sees its own memory, and a planted marker in it
        assert hits == []


def test_memory_holds_none_of_many_earlier_jobs_with_one_worker(one_worker):
    marker = _marker()
    _after_secrets(one_worker, marker, jobs=40)
    rev = marker[::-1]
    ((hits, _, _),) = _probe(one_worker, f"scan_memory({rev!r})")
    (objects,) = _probe(one_worker, f"scan_objects({rev!r})")
    assert hits == [] and objects == []


def test_live_objects_hold_no_earlier_job(pool):
    marker = _marker()
    _after_secrets(pool, marker)
    rev = marker[::-1]
    found, planted, control = _probe(pool, f"scan_objects({rev!r})", f"plant({rev!r})", f"scan_objects({rev!r})")
    assert control  # the planted copy is found
    assert found == []


def test_no_job_of_either_template_sees_a_job_of_the_other(one_worker):
    # A job naming numpy is forked from the template holding it, any other from the lean one:
    # secrets run in both, then probes from both find none of them.
    marker = _marker()
    heavy_secret = Job(SECRET_CODE.format(marker=marker) + "# numpy\n", (f"f({marker!r})",), timeout_s=10.0)
    secrets = one_worker.run_many([heavy_secret, _secret_job(marker)] * 3)
    assert all(marker in r.calls[0].value for r in secrets), [r.calls for r in secrets]
    rev = marker[::-1]
    for probe in (PROBE, PROBE + "\n# numpy\n"):
        result = run(
            one_worker, probe, f"scan_memory({rev!r})", f"scan_objects({rev!r})", timeout_s=30.0, memory_mb=1024
        )
        (hits, scanned, _), objects = (values.decode(c.encoded) for c in result.calls)
        assert scanned > 1 << 20 and hits == [] and objects == []


def test_serving_loop_locals_hold_no_earlier_job(one_worker):
    marker = _marker()
    _after_secrets(one_worker, marker, jobs=3)
    ((found, walked),) = _probe(one_worker, f"scan_frames({marker[::-1]!r})")
    assert "serve" in walked  # the loop that forked this child is on its stack (and was searched)
    assert found == []


def test_environment_holds_no_earlier_job(pool):
    marker = _marker()
    _after_secrets(pool, marker)
    (found,) = _probe(pool, f"scan_environ({marker[::-1]!r})")
    assert found == []


def test_files_left_by_an_earlier_job_are_gone(pool):
    marker = _marker()
    rev = marker[::-1]
    for _ in range(2 * pool.workers):
        (left,) = _probe(pool, f"leave_file({rev!r})")
        assert "/tmp" in left
    ((found, _),) = _probe(pool, f"scan_files({rev!r})")
    _, (mine, _) = _probe(pool, f"leave_file({rev!r})", f"scan_files({rev!r})")
    assert mine  # the probe finds what its own job left
    assert found == []


def test_zygote_and_template_memory_cannot_be_opened(pool):
    ((seen, opened),) = _probe(pool, "others_memory()")
    if pool.isolation == "bwrap":
        assert len(seen) >= 3  # bwrap's init, the zygote and the template are listed in /proc
    assert opened == []


def _unsafe_pool() -> SandboxPool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "no isolation" is what this test wants
        return SandboxPool(workers=1, isolation="rlimits-only", allow_unsafe=True)


KILL_TEMPLATE = "import os, signal, time\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)\n    time.sleep(5)\n"
KILL_ZYGOTE = (
    "import os, signal, time\n"
    "def f():\n"
    "    status = open('/proc/%d/status' % os.getppid()).read()\n"
    "    zygote = int(status.split('PPid:')[1].split()[0])\n"
    "    os.kill(zygote, signal.SIGKILL)\n"
    "    time.sleep(5)\n"
)


@pytest.mark.parametrize("killer", [KILL_TEMPLATE, KILL_ZYGOTE], ids=["template", "zygote"])
def test_a_job_killing_its_template_or_zygote_is_infra_and_the_next_job_is_clean(killer):
    # Only the unsafe level lets a job see its parents (elsewhere each child is pid 1 of its own
    # pid namespace): what the pool must do when they die is the same at every level.
    with _unsafe_pool() as pool:
        marker = _marker()
        _after_secrets(pool, marker, jobs=2)
        before = pool.worker_pids()
        killed, behind = pool.run_many([Job(killer, ("f()",), timeout_s=10.0), Job("x = 6 * 7\n", ("x",))])
        assert killed.infra and behind.calls[0].encoded == "42"  # sent behind it, it still ran, once
        hits = _probe(pool, f"scan_memory({marker[::-1]!r})")[0][0]
        assert hits == [] and pool.worker_pids() != before


def test_template_killed_from_outside_is_infra_and_the_worker_restarts(one_worker):
    import psutil

    before = one_worker.worker_pids()
    future = one_worker.submit(Job("import time\ndef f():\n    time.sleep(30)\n", ("f()",), timeout_s=25.0))
    deadline = time.monotonic() + 20
    template = None
    while template is None and time.monotonic() < deadline:
        for proc in psutil.Process(before[0]).children(recursive=True):
            chain = [proc, *proc.parents()]
            if len(chain) > 2 and all("python" in p.name() for p in chain[:3]):
                template = proc.parent()  # the job's child: a python under the zygote and its shim
        time.sleep(0.05)
    assert template is not None
    template.send_signal(signal.SIGKILL)
    result = future.result(timeout=30)
    assert result.infra and "template" in result.calls[0].error
    run(one_worker, "def f():\n    return 1\n", "f()")
    assert one_worker.worker_pids() != before


def test_sandbox_cli_second_job_cannot_find_the_first(needs_bwrap):
    marker = _marker()
    lines = [
        json.dumps({"id": "secret", "code": SECRET_CODE.format(marker=marker), "calls": [f"f({marker!r})"]}),
        json.dumps(
            {
                "id": "probe",
                "code": PROBE,
                "calls": [f"scan_memory({marker[::-1]!r})", f"scan_objects({marker[::-1]!r})"],
                "timeout_s": 30,
                "memory_mb": 1024,
            }
        ),
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "synthgen", "sandbox", "--workers", "1", "--isolation", "bwrap", "-"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    secret, probe = (json.loads(line) for line in proc.stdout.splitlines())
    assert marker in secret["calls"][0]["value"]
    assert [c["status"] for c in probe["calls"]] == ["ok", "ok"]
    hits, scanned, _ = values.decode(probe["calls"][0]["encoded"])
    assert scanned > 1 << 20 and hits == []
    assert values.decode(probe["calls"][1]["encoded"]) == []
