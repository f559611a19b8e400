"""A plain TRL script (GRPOTrainer, not `synthgen train`) trains two steps of the tiny model on CPU with
`synthgen.interop.trl.reward` on `synthgen export --format trl` output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.interop import ROOT

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).with_name("trl_script.py")


def test_a_plain_grpo_script_trains_two_steps_with_synthgens_reward(exports, tmp_path):
    pytest.importorskip("trl")
    from synthgen.train.tiny import make_tiny_model

    model = make_tiny_model(tmp_path / "tiny")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(exports["trl"]), str(model), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    result = json.loads([line for line in proc.stdout.splitlines() if line.startswith('{"history"')][-1])
    assert result["global_step"] == 2
    steps = [h for h in result["history"] if "rewards/synthgen/mean" in h]
    assert [h["step"] for h in steps] == [1, 2]  # TRL scored every step with our reward, under its name
    # The tiny random model writes 12 random tokens: no answer block, so every completion scores 0.0 (not None).
    assert all(h["rewards/synthgen/mean"] == 0.0 for h in steps)
