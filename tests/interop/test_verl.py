"""verl's own code on a synthgen verl export, in verl's venv (.ci/trainers-setup.sh): its dataset class with
a real tokenizer, its reward managers calling `synthgen.interop.verl`, and its dataloader drawing through
`CurriculumSampler`. Everything a machine without a GPU can run: the data and reward paths, not a training run."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synthgen.interop.curriculum import ScheduleIndices
from tests.helpers.interop import ENVS, RIGHT, WRONG, missing_venv, read_json_lines, run_in_venv

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).with_name("verl_script.py")


@pytest.fixture(scope="module")
def verl_run(exports, tmp_path_factory):
    reason = missing_venv("verl")
    if reason:
        pytest.skip(reason)
    pytest.importorskip("transformers")
    from synthgen.train.tiny import make_tiny_model

    tmp = tmp_path_factory.mktemp("verl")
    tokenizer = make_tiny_model(tmp / "tiny")
    answers = tmp / "answers.json"
    answers.write_text(json.dumps({env: [RIGHT[env], WRONG[env]] for env in ENVS}))
    proc = run_in_venv("verl", SCRIPT, exports["verl"], tokenizer, answers)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    checks: dict[str, list[dict]] = {}
    for line in read_json_lines(proc.stdout):
        checks.setdefault(line["check"], []).append(line)
    return checks


def test_verls_dataset_class_loads_the_export_with_a_real_tokenizer(verl_run, exports):
    (found,) = verl_run["dataset"]
    rows = pq.read_table(exports["verl"] / "train.parquet").num_rows
    assert found["cls"] == "RLHFDataset" and found["rows"] == rows == 17  # none dropped by its length filter
    assert found["data_source"].startswith("synthgen/") and found["has_truth"]
    assert found["prompt_in_template"] and found["prompt_tokens"] > 50  # the chat template ran on our prompt


def test_every_manager_gives_1_to_right_0_to_wrong_as_synthgen_verify_does(verl_run, verify_verdicts):
    managers = {m["manager"]: m for m in verl_run["manager"]}
    assert set(managers) == {"legacy-naive", "legacy-batch", "reward-loop-NaiveRewardManager"}
    for name, found in managers.items():
        expected = [verify_verdicts[env][0 if kind == "right" else 1] for env, kind in found["labels"]]
        assert found["scores"] == expected, name
        assert expected == [1.0, 0.0] * len(ENVS)
        assert found["keys"] == ["acc", "infra", "score", "status"], name
    assert {env for env, _ in managers["legacy-naive"]["labels"]} == set(ENVS)


def test_a_sandbox_failure_stops_per_sample_managers_and_is_neutral_in_the_batch_one(verl_run):
    (found,) = verl_run["infra"]
    assert found["raised"] == {"legacy-naive": "SandboxInfraError", "reward-loop": "SandboxInfraError"}
    failed = found["labels"].index(["contest", "right"])
    assert found["batch_infra"] == [1.0 if i == failed else 0.0 for i in range(len(found["labels"]))]
    # Its group's other sample (the wrong contest answer) scored 0.0: that mean is what it gets, not a verdict.
    assert found["batch_scores"][failed] == 0.0
    assert [s for i, s in enumerate(found["batch_scores"]) if i != failed] == [
        1.0 if kind == "right" else 0.0 for i, (_, kind) in enumerate(found["labels"]) if i != failed
    ]


def test_verls_dataloader_draws_the_schedules_mix_step_by_step(verl_run):
    (found,) = verl_run["sampler"]
    assert found["cls"] == "CurriculumSampler" and found["batches"] == 6
    # classic over 6 steps: easy for steps 0-1, medium for 2-3, medium/hard at 4, hard at 5.
    assert found["bins"][0] == ["easy"] * 4 and found["bins"][2] == ["medium"] * 4 and found["bins"][5] == ["hard"] * 4
    assert set(found["bins"][4]) <= {"medium", "hard"}
    assert found["weights"]["4"] == pytest.approx({"medium": 0.75, "hard": 0.25})
    # The same rows the plain iterable gives: one draw, whichever trainer asks.
    order = ScheduleIndices(found["all_bins"], "classic", batch_size=4, steps=6, seed=3)
    assert found["rows"] == [order.batch(step) for step in range(6)]
