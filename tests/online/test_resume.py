"""kill -9 during an online run, then `--resume`: the same pool and schedule as a run never interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from tests.helpers.online import online_settings

pytest.importorskip("trl")

pytestmark = [pytest.mark.slow, pytest.mark.train]

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).with_name("online_worker.py")
GAIN = "10"
STEPS = 14
TABLES = ("problems", "turns", "events", "draws", "buffer", "controller")


def command(cfg: Path) -> list[str]:
    return [sys.executable, str(WORKER), str(cfg), GAIN]


def environment() -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}


def write(settings: dict, path: Path) -> Path:
    path.write_text(json.dumps(settings))
    return path


def run(cfg: Path) -> None:
    proc = subprocess.run(command(cfg), capture_output=True, text=True, env=environment(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]


def log_of(out: Path) -> dict[str, pl.DataFrame]:
    frames = {}
    for name in TABLES:
        frame = pl.read_parquet(out / "online" / name / "*.parquet")
        frames[name] = frame.sort(frame.columns)
    return frames


def test_kill_9_then_resume_continues_with_the_same_pool_and_schedule(
    tmp_path, online_run_dir, tiny_policy, curve_server
):
    def settings(out: Path, **extra) -> dict:
        base = online_settings(
            online_run_dir,
            out,
            tiny_policy,
            curve_server.url,
            steps=STEPS,
            buffer={"capacity": 6},
            worker={"budget": 3, "log_every": 1},
        )
        return {**base, **extra}

    full = tmp_path / "full"
    run(write(settings(full), tmp_path / "full.json"))

    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        command(write(settings(killed), tmp_path / "killed.json")),
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    marker = killed / "checkpoint-4" / "online_state.json"
    deadline = time.monotonic() + 500
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before it could be killed: {proc.stderr.read()[-2000:]}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (killed / f"checkpoint-{STEPS}").exists()  # it was stopped in the middle

    run(write(settings(killed, resume=True), tmp_path / "resume.json"))

    a, b = log_of(full), log_of(killed)
    for name in TABLES:
        assert a[name].equals(b[name]), name
    final_a = json.loads((full / f"checkpoint-{STEPS}" / "online_state.json").read_text())
    final_b = json.loads((killed / f"checkpoint-{STEPS}" / "online_state.json").read_text())
    assert final_a["pool"] == final_b["pool"]
    summary = json.loads((killed / "train_summary.json").read_text())
    assert summary["resumed_from"].endswith(tuple(f"checkpoint-{s}" for s in range(4, STEPS, 2)))


def test_two_processes_with_torchrun_share_one_pool(tmp_path, online_run_dir, tiny_policy, curve_server):
    import socket

    out = tmp_path / "out"
    settings = online_settings(
        online_run_dir, out, tiny_policy, curve_server.url, steps=6, buffer={"capacity": 6}, worker={"budget": 3}
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    torchrun = Path(sys.executable).parent / "torchrun"
    cmd = [
        str(torchrun),
        "--nproc_per_node",
        "2",
        "--master_port",
        str(port),
        *command(write(settings, tmp_path / "s.json"))[1:],
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=environment(), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "online" / "summary.json").read_text())
    # The worker ran on the main process; both processes applied its outcomes and drew the same
    # problems, so no prompt group mixed problems (2 processes x 16 completions: 4 prompts a round).
    assert summary["split_groups"] == 0 and summary["late_rounds"] == 0 and summary["problems"] > 6
    draws = pl.read_parquet(out / "online" / "draws" / "*.parquet")
    assert draws.group_by("round").len()["len"].unique().to_list() == [4]
