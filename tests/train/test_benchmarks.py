"""Training-time evaluation on every benchmark `synthgen eval` has: LiveCodeBench, Math500 and
AIME2024 logged during a CPU run, each with its own samples and k on the budget the user sets."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.train import write_benchmarks

ROOT = Path(__file__).resolve().parents[2]


def test_budget_is_the_papers_unless_the_user_sets_one():
    from synthgen.evals.train_hook import budget
    from synthgen.train.settings import PeriodicEvalSettings

    paper = PeriodicEvalSettings(benchmarks="lcb,math500,aime2024")
    assert [budget(b, paper) for b in paper.benchmarks] == [(20, [1, 10]), (10, [1, 5]), (64, [1, 5])]
    small = PeriodicEvalSettings(benchmarks="math500,aime2024", benchmark_samples="math500=2,aime2024=6")
    assert [budget(b, small) for b in small.benchmarks] == [(2, [1]), (6, [1, 5])]


@pytest.mark.parametrize(
    "args, words",
    [
        (("--eval-benchmarks", "gsm8k"), "unknown training benchmark 'gsm8k'"),
        (("--eval-benchmarks", "lcb", "--eval-benchmark-samples", "math500=x"), "write NAME=N"),
        (("--eval-benchmarks", "lcb", "--eval-benchmark-samples", "mbpp=2"), "mbpp=2"),
    ],
)
def test_bad_benchmark_flags_are_one_line(cli, binned_dir, tmp_path, args, words):
    rc, _, err = cli("train", "--data", binned_dir, "--model", tmp_path, "--eval-every", "1", *args)
    assert rc == 2 and words in err and err.count("\n") == 1, err


@pytest.mark.slow
@pytest.mark.train
def test_train_logs_lcb_math500_and_aime2024_during_a_cpu_run(tmp_path, binned_dir, tiny_model):
    pytest.importorskip("math_verify")
    data = write_benchmarks(tmp_path / "bench")
    out = tmp_path / "train"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "synthgen", "train", "--data", str(binned_dir), "--model", str(tiny_model)]
    argv += ["--recipe", "tiny-cpu", "--max-steps", "2", "--output", str(out), "--eval-every", "2"]
    argv += ["--eval-benchmarks", "lcb,math500,aime2024", "--eval-benchmark-data-dir", str(data)]
    argv += ["--eval-benchmark-samples", "lcb=2,math500=2,aime2024=5", "--eval-max-completion-length", "8"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "eval_pass_at_k.csv") as fh:
        rows = list(csv.DictReader(fh))
    logged = {(r["suite"], r["split"], r["samples"], r["k"]) for r in rows}
    assert ("lcb", "2024.08-2025.05", "2", "1") in logged and ("lcb", "v5-easy", "2", "1") in logged
    assert {("math500", s, "2", "1") for s in ("all", "level-1", "level-2")} <= logged
    assert {("aime2024", "all", "5", "1"), ("aime2024", "all", "5", "5")} <= logged
    assert all(r["step"] == "2" and 0.0 <= float(r["pass_at_k"]) <= 1.0 for r in rows)
