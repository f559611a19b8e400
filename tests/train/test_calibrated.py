"""`train --data RUN/calibrate`: a calibrated set trains as one split with its new pass rates, an
unfinished one is refused, and the bins `synthgen bin` derives from it train under a curriculum."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from synthgen.store.layout import StageDir
from synthgen.train.data import CALIBRATED_SPLIT, load_problem_rows

pytest.importorskip("trl")

pytestmark = [pytest.mark.slow, pytest.mark.train]

ROOT = Path(__file__).resolve().parents[2]
RECIPE = str(ROOT / "recipes" / "tiny-cpu.yaml")


@pytest.fixture(scope="module")
def calibrated(demo_run, tmp_path_factory) -> Path:
    """A demo run's bins re-measured by a scripted student one level stronger: RUN/calibrate."""
    from synthgen.cli.app import app, run_guarded
    from synthgen.demo.scripted.launch import start_scripted_server

    run = tmp_path_factory.mktemp("calibrated") / "run"
    with start_scripted_server(student_strength=1.0, response_model="scripted-plus") as server:
        args = ["calibrate", "--run-dir", str(run), "--input-dir", str(demo_run / "bin"), "--no-progress"]
        assert run_guarded(app, [*args, "--student-url", server.url, "--attempts", "8"]) == 0
    return run


def _train(data: Path, model: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "synthgen", "train", "--data", str(data), "--model", str(model)]
    cmd += ["--recipe", RECIPE, "--max-steps", "2", "--save-completions", "all", "--output", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def test_a_calibrated_set_trains_as_one_split_with_its_new_pass_rates(calibrated, tiny_model, tmp_path):
    measured = StageDir(calibrated, "calibrate").read()
    rows = load_problem_rows([calibrated / "calibrate"])
    new = dict(measured.select("problem_id", "pass_rate").iter_rows())
    assert {r["difficulty"] for r in rows} == {CALIBRATED_SPLIT} and len(rows) == measured.height
    assert all(r["pass_rate"] == new[r["problem_id"]] for r in rows)  # the new measurement, not the prior one
    assert any(a != b for a, b in measured.select("pass_rate", "prior_pass_rate").iter_rows())
    out = tmp_path / "out"
    proc = _train(calibrated / "calibrate", tiny_model, out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["bins"] == {CALIBRATED_SPLIT: measured.height} and summary["global_step"] == 2
    logged = pl.read_parquet(out / "completions" / "*.parquet")
    assert set(logged["difficulty"]) == {CALIBRATED_SPLIT} and sorted(set(logged["round"])) == [0, 1]
    assert set(logged["problem_id"]) <= set(new)


def test_an_unfinished_calibration_is_refused_naming_its_stage(cli, calibrated, tiny_model, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(calibrated, copy)
    (copy / "calibrate" / f"{StageDir.shard_name(0, 1)}.done").unlink()  # as if killed before its end
    rc, _, err = cli("train", "--data", copy / "calibrate", "--model", tiny_model, "--recipe", RECIPE)
    assert rc == 2 and "not finished" in err and "`synthgen calibrate`" in err, err
    assert len(err.strip().splitlines()) == 1


def test_the_bins_derived_from_a_calibration_train_under_a_curriculum(cli, calibrated, tiny_model, tmp_path):
    run = tmp_path / "rebinned"
    rc, _, err = cli("bin", "--run-dir", run, "--input-dir", calibrated / "calibrate")
    assert rc == 0, err
    binned = StageDir(run, "bin").read()
    new_bins = dict(binned.select("problem_id", "difficulty").iter_rows())
    counts = dict(binned["difficulty"].value_counts().iter_rows())
    assert any(a != b for a, b in binned.select("difficulty", "prior_difficulty").iter_rows())
    # A schedule over the bins the new pass rates made: the larger one first, then the other.
    first, second = sorted(counts, key=lambda b: (-counts[b], b))[:2]
    schedule = tmp_path / "two-bins.yaml"
    schedule.write_text(yaml.safe_dump({"length": 2, "steps": {0: {first: 1}, 1: {second: 1}}}))
    out = tmp_path / "out"
    proc = _train(run / "bin", tiny_model, out, "--curriculum", str(schedule))
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["bins"] == counts
    logged = pl.read_parquet(out / "completions" / "*.parquet")
    for round_, want in ((0, first), (1, second)):
        drawn = logged.filter(pl.col("round") == round_)
        assert drawn.height and set(drawn["difficulty"]) == {want}
        assert {new_bins[p] for p in drawn["problem_id"]} == {want}  # the bin of the new pass rate
