"""`synthgen slurm` on a real Slurm cluster (the one-node cluster of .ci/slurm-up.sh).

    bash .ci/slurm-up.sh && .venv/bin/python -m pytest tests/slurm/test_cluster.py

Skips with the reason when no cluster answers. Two tests:
- the real generate as a 4-shard array against a scripted server (not a model): the shards'
  union equals a single-process run; a task cancelled mid-way is the only one re-submitted, and
  afterwards the union still equals the single-process run (no duplicates, nothing lost);
- the time-limit path with a stand-in for generate: USR1 (what `--signal=B:USR1@N` sends) makes
  the task flush, requeue itself, and resume where it stopped.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from synthgen.store.layout import StageDir
from tests.helpers.slurm import SYNTHGEN, TIMING, cancel_a_working_task
from tests.helpers.slurm import wait_finished as _wait_finished

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.timeout(900)]

# Columns that may differ between two runs of the same work: wall-clock measurements only.


def _submit(cli, *args) -> tuple[str, str]:
    rc, out, err = cli(*args)
    assert rc == 0, err
    match = re.search(r"^generate: job (\d+)", out, re.M)
    assert match, out
    return match.group(1), out


def _rows(run_dir: Path):
    rows = StageDir(run_dir, "generate").read().sort("turn_id")
    # student_endpoint records where each task's student answered: every array task has a server of its own.
    return rows.drop([c for c in rows.columns if TIMING.search(c) or c == "student_endpoint"])


def _assert_same_rows(got, want) -> None:
    assert got.height == want.height and got["turn_id"].n_unique() == got.height, (got.height, want.height)
    assert got.columns == want.columns
    differing = [c for c in want.columns if not got[c].equals(want[c])]
    assert not differing, f"columns differ from the single-process run: {differing}"


# -- the real generate ------------------------------------------------------------------------------
def test_generate_array_matches_one_process_and_resubmits_only_the_cancelled_shard(cli, cluster, tmp_path, monkeypatch):
    from synthgen.demo.scripted.launch import start_scripted_server

    monkeypatch.chdir(tmp_path)
    config = tmp_path / "run.yaml"
    config.write_text(
        "seeds: {n: 8, seed: 7}\n"
        "generate: {attempts: 8, turns: 3, lineages_per_seed: 2, max_in_flight: 16, progress: false,"
        " sandbox: {workers: 1}}\n"
        f"slurm: {{executable: {SYNTHGEN}, array_parallelism: 2, generate: {{cpus_per_task: 1, time: '15:00'}},"
        " vllm: {ready_timeout_s: 60}}\n"
    )
    reference, run = tmp_path / "single", tmp_path / "array"
    rc, _, err = cli("--config", config, "seeds", "--run-dir", reference)
    assert rc == 0, err
    shutil.copytree(reference / "seeds", run / "seeds")

    # A fresh scripted server (same seed) per run, each in its own process, slow enough that a
    # task is still working when we cancel it.
    with start_scripted_server(mode="process", seed=0, latency="fixed", latency_s=1.0) as server:
        single = subprocess.run(
            [SYNTHGEN, "--config", str(config), "generate", "--run-dir", str(reference), "--base-url", server.url],
            capture_output=True,
            text=True,
        )
        assert single.returncode == 0, single.stderr[-3000:]
    want = _rows(reference)

    with start_scripted_server(mode="process", seed=0, latency="fixed", latency_s=1.0) as server:
        job, out = _submit(
            cli,
            "--config",
            config,
            "slurm",
            "generate",
            "--run-dir",
            run,
            "--num-shards",
            "4",
            "--base-url",
            server.url,
        )
        assert "(array 0-3%2: 4 shard(s))" in out
        logs, stage = run / "slurm" / "logs", StageDir(run, "generate")
        victim = cancel_a_working_task(job, run, "generate", settle_s=2.0)

        again, out = _submit(
            cli,
            "--config",
            config,
            "slurm",
            "generate",
            "--run-dir",
            run,
            "--num-shards",
            "4",
            "--base-url",
            server.url,
        )
        assert f"(array {victim}%2: 1 shard(s))" in out, out
        assert f"#SBATCH --array={victim}%2\n" in (run / "slurm" / "generate.sbatch").read_text()
        _wait_finished(again)

    assert all(stage.is_done(StageDir.shard_name(i, 4)) for i in range(4))
    for i in range(4):
        assert (logs / f"synthgen-generate-{job}_{i}.out").exists()
    _assert_same_rows(_rows(run), want)
    rc, out, _ = cli(
        "--config",
        config,
        "slurm",
        "generate",
        "--run-dir",
        run,
        "--num-shards",
        "4",
        "--base-url",
        "http://127.0.0.1:9/v1",
    )
    assert rc == 0 and "all 4 shards are finished" in out


# -- the time-limit signal, with a stand-in for generate ----------------------------------------------
STUB = '''#!{python}
"""Stand-in for `synthgen generate`: counts steps to a progress file, flushes on TERM, marks done."""
import os, signal, sys, time
from pathlib import Path
args = sys.argv[1:]
if args[:1] == ["slurm"] or "slurm" in args[:3]:
    os.execv({synthgen!r}, ["synthgen"] + args)
opt = lambda name: args[args.index(name) + 1]
stage = Path(opt("--run-dir")) / "generate"
stage.mkdir(parents=True, exist_ok=True)
name = "shard-%05d-of-%05d" % (int(opt("--shard")), int(opt("--num-shards")))
progress = stage / (name + ".progress")
done = int(progress.read_text()) if progress.exists() else 0
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
with open(stage / (name + ".log"), "a") as log:
    log.write("start at %d\\n" % done)
    while done < 24 and not stop:
        time.sleep(0.25)
        done += 1
        progress.write_text(str(done))
    if stop:
        log.write("flushed at %d\\n" % done)
        sys.exit(143)
(stage / (name + ".done")).write_text("{{}}")
'''


class _ModelsOnly(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(b'{"object": "list", "data": []}')

    def log_message(self, *args):
        pass


def _job_field(task: str, name: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", task], capture_output=True, text=True).stdout
    match = re.search(rf"\b{name}=(\S+)", out)
    return match.group(1) if match else ""


def test_time_limit_signal_flushes_requeues_and_resumes(cli, cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stub = tmp_path / "stub-synthgen"
    stub.write_text(STUB.format(python=sys.executable, synthgen=SYNTHGEN))
    stub.chmod(0o755)
    config = tmp_path / "run.yaml"
    config.write_text(f"slurm: {{executable: {stub}, generate: {{cpus_per_task: 1, time: '15:00'}}}}\n")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ModelsOnly)  # all the stand-in's wait-ready needs
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        job, _ = _submit(
            cli, "--config", config, "slurm", "generate", "--run-dir", "run", "--num-shards", "1", "--base-url", url
        )
        task = f"{job}_0"
        progress = tmp_path / "run/generate" / f"{StageDir.shard_name(0, 1)}.progress"
        deadline = time.monotonic() + 60
        while not (progress.exists() and int(progress.read_text() or 0) >= 4):
            assert time.monotonic() < deadline, "the stand-in never made progress"
            time.sleep(0.1)
        # What Slurm sends signal_grace_s before the time limit: USR1 to the batch shell only.
        subprocess.run(["scancel", "--batch", "--signal=USR1", task], check=True)
        deadline = time.monotonic() + 60
        while not (_job_field(task, "Restarts") not in ("", "0") and _job_field(task, "JobState") == "PENDING"):
            assert time.monotonic() < deadline, "the task did not requeue itself"
            time.sleep(0.2)
        # A requeued job waits (BeginTime) before it is eligible again; let it start sooner, but
        # not within the second of the kill (slurmd still holds the old credential as revoked).
        time.sleep(2)
        subprocess.run(["scontrol", "update", f"JobId={task}", "StartTime=now"], check=True)
        _wait_finished(job)
    finally:
        server.shutdown()
        server.server_close()
    stage = tmp_path / "run/generate"
    assert (stage / f"{StageDir.shard_name(0, 1)}.done").exists()
    lines = (stage / f"{StageDir.shard_name(0, 1)}.log").read_text().split("\n")
    flushed = int(lines[1].split()[-1])
    assert lines[0] == "start at 0" and 4 <= flushed < 24 and lines[2] == f"start at {flushed}", lines
    log = (tmp_path / f"run/slurm/logs/synthgen-generate-{job}_0.out").read_text()
    assert "requeueing" in log and "restart 1" in log
