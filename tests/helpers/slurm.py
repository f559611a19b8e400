"""Helpers for the tests that submit real jobs to the local Slurm cluster (.ci/slurm-up.sh)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthgen.slurm.submit import active_jobs

SYNTHGEN = str(Path(sys.executable).parent / "synthgen")


def cluster_problem() -> str | None:
    for tool in ("sinfo", "sbatch", "squeue", "scontrol", "scancel"):
        if shutil.which(tool) is None:
            return f"Slurm client tool {tool!r} is not installed (bash .ci/slurm-up.sh sets up a local cluster)"
    ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True)
    if "UP" not in ping.stdout:
        return "no Slurm controller answers `scontrol ping` (bash .ci/slurm-up.sh starts one)"
    states = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True).stdout.split()
    if not any(s.rstrip("*") in ("idle", "mixed", "allocated", "completing") for s in states):
        return f"no usable Slurm node (sinfo states: {states or 'none'})"
    return None


def wait_finished(job_id: str, timeout_s: float = 300) -> None:
    """Until Slurm reports every task of `job_id` finished twice in a row (a blip is not an end)."""
    deadline, quiet = time.monotonic() + timeout_s, 0
    while quiet < 2:
        quiet = 0 if active_jobs([job_id]) else quiet + 1
        if time.monotonic() > deadline:
            subprocess.run(["scancel", job_id])
            pytest.fail(f"Slurm job {job_id} still running after {timeout_s} s")
        time.sleep(0.5)


# Columns that hold times (they differ between any two runs).
TIMING = re.compile(r"(^|_)(time|timestamp|elapsed|latency|duration|wall)(_|$)|_(s|ms|at)$")


def running_tasks(job_id: str) -> list[int]:
    out = subprocess.run(["squeue", "-h", "-j", job_id, "-t", "R", "-o", "%i"], capture_output=True, text=True).stdout
    return [int(m.group(1)) for m in re.finditer(r"_(\d+)\b", out)]


def cancel_a_working_task(job: str, run: Path, stage: str, settle_s: float) -> int:
    """scancel the first task of array `job` that got past wait-ready into `stage`, `settle_s` after
    that (while it works), wait for the array to end, and check that every other shard of the 4
    finished and that one did not. Returns the cancelled task's index."""
    logs = run / "slurm" / "logs"
    victim, deadline = None, time.monotonic() + 120
    while victim is None and time.monotonic() < deadline:
        for task in running_tasks(job):
            log = logs / f"synthgen-{stage}-{job}_{task}.out"
            if log.exists() and "wait-ready: ready" in log.read_text():
                victim = task
                break
        time.sleep(0.2)
    assert victim is not None, f"no task of job {job} started {stage}: {sorted(p.name for p in logs.iterdir())}"
    time.sleep(settle_s)
    subprocess.run(["scancel", f"{job}_{victim}"], check=True)
    wait_finished(job)

    from synthgen.store.layout import StageDir

    done = [i for i in range(4) if StageDir(run, stage).is_done(StageDir.shard_name(i, 4))]
    assert victim not in done, f"shard {victim} finished before scancel reached it; slow the server down"
    assert done == [i for i in range(4) if i != victim]
    assert "CANCELLED" in (logs / f"synthgen-{stage}-{job}_{victim}.out").read_text()
    return victim
