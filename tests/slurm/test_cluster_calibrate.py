"""`synthgen slurm calibrate` on a real Slurm cluster (the one-node cluster of .ci/slurm-up.sh).

    bash .ci/slurm-up.sh && .venv/bin/python -m pytest tests/slurm/test_cluster_calibrate.py

A demo run's bins re-measured by a stronger scripted student as a 4-shard array: a task
cancelled mid-way is the only one re-submitted, it resumes from its rows on disk, and the shards'
union equals a single-process calibration (no problem measured twice, none lost).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from synthgen.store.layout import StageDir
from tests.helpers.slurm import SYNTHGEN, TIMING, cancel_a_working_task
from tests.helpers.slurm import wait_finished as _wait_finished

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.timeout(900)]


def _rows(run_dir: Path):
    rows = StageDir(run_dir, "calibrate").read().sort("turn_id")
    return rows.drop([c for c in rows.columns if TIMING.search(c)])


def _submit(cli, config: Path, run: Path, url: str) -> tuple[str, str]:
    rc, out, err = cli(
        "--config", config, "slurm", "calibrate", "--run-dir", run, "--calibrate-num-shards", "4", "--base-url", url
    )
    assert rc == 0, err
    match = re.search(r"^calibrate: job (\d+)", out, re.M)
    assert match, out
    return match.group(1), out


def test_calibrate_array_matches_one_process_and_resubmits_only_the_cancelled_shard(
    cli, cluster, demo_run, tmp_path, monkeypatch
):
    from synthgen.demo.scripted.launch import start_scripted_server

    monkeypatch.chdir(tmp_path)
    config = tmp_path / "run.yaml"
    config.write_text(
        f"calibrate: {{input_dir: {demo_run / 'bin'}, attempts: 8, max_in_flight: 1, progress: false,"
        " sandbox: {workers: 1}}\n"
        f"slurm: {{executable: {SYNTHGEN}, calibrate: {{cpus_per_task: 1, time: '15:00', array_parallelism: 2}},"
        " vllm: {ready_timeout_s: 60}}\n"
    )
    reference, run = tmp_path / "single", tmp_path / "array"
    # One scripted server (a stronger student; not a model) for both, slow enough that a task is
    # still working when we cancel it. Its answers depend on the request only, never on the order.
    with start_scripted_server(
        mode="process", seed=0, latency="fixed", latency_s=1.0, student_strength=2.0, response_model="strong"
    ) as server:
        single = subprocess.run(
            [SYNTHGEN, "--config", str(config), "calibrate", "--run-dir", str(reference), "--student-url", server.url],
            capture_output=True,
            text=True,
        )
        assert single.returncode == 0, single.stderr[-3000:]

        job, out = _submit(cli, config, run, server.url)
        assert "(array 0-3%2: 4 shard(s))" in out
        logs, stage = run / "slurm" / "logs", StageDir(run, "calibrate")
        victim = cancel_a_working_task(job, run, "calibrate", settle_s=3.0)

        again, out = _submit(cli, config, run, server.url)
        assert f"(array {victim}%2: 1 shard(s))" in out, out
        assert f"#SBATCH --array={victim}%2\n" in (run / "slurm" / "calibrate.sbatch").read_text()
        _wait_finished(again)
        resumed = (logs / f"synthgen-calibrate-{again}_{victim}.out").read_text()

    assert all(stage.is_done(StageDir.shard_name(i, 4)) for i in range(4))
    got, want = _rows(run), _rows(reference)
    assert got.height == want.height and got["problem_id"].n_unique() == got.height, (got.height, want.height)
    assert got.columns == want.columns
    differing = [c for c in want.columns if not got[c].equals(want[c])]
    assert not differing, f"columns differ from the single-process run: {differing}"
    assert set(got["student_model"]) == {"strong"} and got["prior_pass_rate"].null_count() == 0
    assert "calibrate shard" in resumed and "exited with status 0" in resumed
    rc, out, _ = cli("--config", config, "slurm", "calibrate", "--run-dir", run, "--calibrate-num-shards", "4")
    assert rc == 0 and "all 4 shards are finished" in out
