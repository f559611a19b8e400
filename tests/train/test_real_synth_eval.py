"""The research loop on a CPU: a REAL set made by `synthgen import`, mixed with SYNTH bins in training
(the tiny model, LiveCodeBench splits logged during training), then `synthgen eval` on every checkpoint,
each served by `synthgen serve`: pass@k per benchmark and split over the steps, and the plot."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.train import LCB_ROW

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.train]

REAL = [
    {
        "problem_id": i,
        "question": f"Print the sum of the two integers, plus {i}.",
        "solutions": json.dumps([f"a, b = map(int, input().split())\nprint(a + b + {i})\n"]),
        "input_output": json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": [f"{3 + i}\n", f"{10 + i}\n"]}),
        "difficulty": "introductory",
    }
    for i in range(4)
]
LCB = [LCB_ROW]


def test_real_plus_synth_training_then_eval_of_every_checkpoint(cli, tmp_path, binned_dir, tiny_model):
    pytest.importorskip("matplotlib")
    data = tmp_path / "bench"
    data.mkdir()
    (data / "lcb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LCB))
    apps = tmp_path / "apps.jsonl"
    apps.write_text("".join(json.dumps(r) + "\n" for r in REAL))
    rc, out, err = cli("import", apps, "--output", tmp_path / "real")
    assert rc == 0 and "import: 4 of 4 problems" in out, err

    train_out = tmp_path / "train"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    train = [
        sys.executable,
        "-m",
        "synthgen",
        "train",
        "--data",
        f"real={tmp_path / 'real'}:0.55",
        "--data",
        f"synth={binned_dir}:0.45",
        "--curriculum-sources",
        "synth",
        "--curriculum",
        "reverse-medium",
        "--model",
        str(tiny_model),
        "--recipe",
        "tiny-cpu",
        "--max-steps",
        "2",
        "--save-steps",
        "1",
        "--output",
        str(train_out),
        "--eval-every",
        "2",
        "--eval-benchmarks",
        "lcb",
        "--eval-benchmark-data-dir",
        str(data),
        "--eval-samples",
        "2",
        "--eval-k",
        "1",
        "--eval-benchmark-samples",
        "lcb=2",
    ]
    proc = subprocess.run(train, capture_output=True, text=True, env=env, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((train_out / "train_summary.json").read_text())
    assert set(summary["data"]["sources"]) == {"real", "synth"}
    with open(train_out / "eval_pass_at_k.csv") as fh:
        logged = {(r["suite"], r["split"]) for r in csv.DictReader(fh)}
    assert ("lcb", "2024.08-2025.05") in logged and ("lcb", "v5-easy") in logged

    eval_out = tmp_path / "eval"
    rc, out, err = cli(
        "eval",
        "--checkpoints",
        train_out,
        "--benchmarks",
        "lcb,heldout",
        "--data-dir",
        data,
        "--heldout-paths",
        binned_dir,
        "--heldout-max-problems",
        "2",
        "--heldout-samples",
        "2",
        "--heldout-k",
        "1",
        "--lcb-samples",
        "2",
        "--lcb-k",
        "1",
        "--lcb-k",
        "2",
        "--model-max-tokens",
        "8",
        "--output",
        eval_out,
        "--serve-wait",
        "300",
    )
    assert rc == 0, err
    rows = json.loads((eval_out / "summary.json").read_text())
    assert {r["step"] for r in rows} == {1, 2}
    splits = {(r["benchmark"], r["split"]) for r in rows}
    assert ("lcb", "2024.08-2025.05") in splits and ("heldout", "deduction/medium") in splits
    assert all(r["pass_at_k"] is not None and 0.0 <= r["pass_at_k"] <= 1.0 for r in rows)
    assert (eval_out / "pass_at_k.png").stat().st_size > 1000 and "plot written" in out
    assert (eval_out / "step-000001" / "serve.log").exists()
