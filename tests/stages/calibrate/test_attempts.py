"""`synthgen calibrate --keep-attempts`: the new measurement's attempts kept beside calibrate's rows,
read back with generate's by `read_attempts`, and resumed exactly after kill -9."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import polars as pl
import pytest

from synthgen.store.attempts import attempts_dir, read_attempts
from synthgen.store.layout import StageDir

KEY = ["stage", "turn_id", "attempt"]
GENERATE = ["--attempts", "8", "--turns", "2", "--lineages-per-seed", "2", "--max-seeds", "4", "--no-progress"]


def _generated(cli, seeds_run, run_dir, url, *extra):
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", url, *GENERATE, *extra)
    assert rc == 0, err
    return StageDir(run_dir, "generate").read()


def _calibrate_args(run_dir, input_dir, url):
    return ["--run-dir", run_dir, "--input-dir", input_dir, "--student-url", url, "--attempts", "8", "--no-progress"]


def test_calibrate_keeps_its_attempts_beside_generates_and_read_attempts_tells_them_apart(
    cli, seeds_run, tmp_path, scripted_server
):
    server = scripted_server()
    run_dir = tmp_path / "run"
    generated = _generated(cli, seeds_run, run_dir, server.url, "--keep-attempts", "all")
    # Calibrated in the same run, from its generate folder (which the attempts are not in), by the
    # same student: the same measurement, so only `stage` tells the two sets of attempts apart.
    args = _calibrate_args(run_dir, run_dir / "generate", server.url)
    rc, _, err = cli("calibrate", *args, "--keep-attempts", "solved")
    assert rc == 0, err
    rows = StageDir(run_dir, "calibrate").read()
    assert rows.height == generated.filter(pl.col("valid"))["problem_id"].n_unique() > 0
    both = pl.from_arrow(read_attempts(run_dir))
    assert both.select(KEY).is_unique().all()
    mine = both.filter(pl.col("stage") == "calibrate")
    assert both.filter(pl.col("stage") == "generate").height == generated.filter(pl.col("valid"))["scored"].sum()
    assert mine.height == rows["correct"].sum() > 0 and (mine["reward"] == 1.0).all()
    per_turn = mine.group_by("turn_id").len()
    assert dict(per_turn.iter_rows()) == {t: c for t, c in rows.select("turn_id", "correct").iter_rows() if c}
    joined = mine.join(rows, "turn_id", suffix="_row")
    for column in ("problem_id", "env", "student_model", "measured_by", "settings_hash"):
        assert (joined[column] == joined[f"{column}_row"]).all(), column
    # Each kept attempt solves its problem again, through the interop scorer.
    from synthgen.interop import records, scorer

    truth = {r["turn_id"]: records.ground_truth(r) for r in rows.iter_rows(named=True)}
    try:
        rewards = scorer.score([truth[t] for t in mine["turn_id"]], mine["content"].to_list())
    finally:
        scorer.shared().close()
    assert [r.value for r in rewards] == [1.0] * mine.height
    # Without --keep-attempts calibrate keeps none, and the run reads as generate's attempts alone.
    rc, _, err = cli("calibrate", *args, "--force")
    assert rc == 0, err
    assert set(pl.from_arrow(read_attempts(run_dir))["stage"]) == {"generate"}
    assert not attempts_dir(run_dir, "calibrate").parts()


@pytest.mark.slow
def test_kill_9_then_resume_keeps_the_attempts_of_an_uninterrupted_calibration(
    cli, seeds_run, tmp_path, scripted_server
):
    source = tmp_path / "source"
    _generated(cli, seeds_run, source, scripted_server().url, "--max-seeds", "8", "--lineages-per-seed", "4")
    server = scripted_server(latency="fixed", latency_s=0.05, student_strength=1.0, response_model="scripted-plus")
    reference, run_dir, problems = tmp_path / "ref", tmp_path / "killed", source / "generate"
    rc, _, err = cli("calibrate", *_calibrate_args(reference, problems, server.url), "--keep-attempts", "all")
    assert rc == 0, err
    cmd = [sys.executable, "-m", "synthgen", "calibrate", *map(str, _calibrate_args(run_dir, problems, server.url))]
    cmd += ["--keep-attempts", "all", "--max-in-flight", "4", "--max-buffer-rows", "3"]
    rows_dir = StageDir(run_dir, "calibrate")
    rng = random.Random(11)
    for _ in range(3):
        before = len(rows_dir.parts())
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and len(rows_dir.parts()) <= before and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert rows_dir.exists() and not rows_dir.done_shards(), "no kill landed mid-run"
    final = subprocess.run(cmd, capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    got, want = (pl.from_arrow(read_attempts(d)).sort(KEY) for d in (run_dir, reference))
    assert got.height == StageDir(run_dir, "calibrate").read()["scored"].sum() and got.equals(want)
