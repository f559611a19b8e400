"""Helpers for the tests that submit real jobs to the local Slurm cluster (.ci/slurm-up.sh)."""

from __future__ import annotations

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
