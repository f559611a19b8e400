"""CPU runs of the tiny model: off-policy updates clip, periodic held-out pass@k, weighted sources."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from tests.helpers.train import deduction_rows  # noqa: E402
from tests.train.grpo_worker import FakeScorer, fake_prompt  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.train]


def train(evaluators=None, **cfg) -> tuple[Path, FakeScorer]:
    from synthgen.train.run import run
    from synthgen.train.settings import TrainSettings

    scorer = FakeScorer()
    out = run(
        TrainSettings(recipe="tiny-cpu", report_to=["none"], **cfg),
        scorer=scorer,
        prompt_fn=fake_prompt,
        evaluators=evaluators,
    )
    return out, scorer


class ServerSuite:
    """Stands in for a LiveCodeBench suite: gets the policy's `generate`, returns its own splits."""

    name = "lcb"
    samples = 2

    def __init__(self):
        self.steps = []

    def evaluate(self, generate, step):
        outputs = generate([[{"role": "user", "content": "Print 42."}]], self.samples)
        self.steps.append((step, len(outputs), len(outputs[0])))
        return {"lcb-easy": [(2, 1)], "lcb-hard": [(2, 0)]}


def logged(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "trainer_log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def easy_medium_only(tmp_path_factory) -> str:
    # easy_medium is the bin whose fake rewards alternate 1/0 inside a group: non-zero advantages.
    path = tmp_path_factory.mktemp("sched") / "easy-medium.yaml"
    path.write_text("steps:\n  0: {easy_medium: 1}\n")
    return str(path)


def test_several_updates_per_generation_batch_clip(tmp_path, binned_dir, tiny_model, easy_medium_only):
    # Each generation batch (4 prompts x G = 32 completions) is split over 2 optimizer steps and
    # used twice: 4 updates per batch, so steps 2-4 of a round train on an older policy's samples.
    common = dict(
        data=[str(binned_dir)], model=str(tiny_model), curriculum=easy_medium_only, max_steps=8, learning_rate=1e-2
    )
    out, scorer = train(output=str(tmp_path / "off"), steps_per_generation=2, num_iterations=2, **common)
    clip = {e["step"]: e["clip_ratio/region_mean"] for e in logged(out) if "clip_ratio/region_mean" in e}
    assert sorted(clip) == list(range(1, 9))
    assert clip[1] == 0 and clip[5] == 0  # the first update of a batch is on-policy: ratio exactly 1
    assert max(clip.values()) > 0 and json.loads((out / "train_summary.json").read_text())["clip_fraction"] > 0
    # RepeatSampler's layout holds: one round per 4 steps, 4 whole groups per round, one scoring call each.
    rounds = [json.loads(line) for line in (out / "curriculum_metrics.jsonl").read_text().splitlines()]
    assert [(r["round"], r["step"]) for r in rounds] == [(0, 0), (1, 4)]
    assert all(r["split_groups"] == 0 and r["bins"]["easy_medium"]["groups"] == 4 for r in rounds)
    assert len(scorer.calls) == 2 and all(len(c) == 32 for c in scorer.calls)

    on_policy, _ = train(output=str(tmp_path / "on"), **common)
    assert all(e["clip_ratio/region_mean"] == 0 for e in logged(on_policy) if "clip_ratio/region_mean" in e)


def test_periodic_eval_writes_pass_at_k_per_split_and_sources_mix(tmp_path, binned_dir, tiny_model):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from synthgen.store import records

    real = tmp_path / "real"
    real.mkdir()
    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    pq.write_table(records.table_from_rows(deduction_rows("medium", 8)[4:], schema), real / "part-0.parquet")
    lcb = ServerSuite()
    out, _ = train(
        data=[f"real={real}:0.5", f"synth={binned_dir}:0.5"],
        model=str(tiny_model),
        curriculum="uniform",
        max_steps=4,
        output=str(tmp_path / "out"),
        evaluators=[lcb],
        eval={"steps": 2, "heldout_fraction": 0.25, "samples": 4, "k": [1, 2]},
    )
    with open(out / "eval_pass_at_k.csv", newline="") as fh:
        table = {
            (int(r["step"]), r["split"], int(r["k"])): (float(r["pass_at_k"]), int(r["problems"]))
            for r in csv.DictReader(fh)
        }
    # Fake rewards per problem's 4 samples: easy 1111, medium 0000, easy_medium 1010, hard (infra)1(infra)1.
    expected = {
        ("easy", 1): 1.0,
        ("easy", 2): 1.0,
        ("medium", 1): 0.0,
        ("medium", 2): 0.0,
        ("easy_medium", 1): 0.5,
        ("easy_medium", 2): 1 - 1 / 6,
        ("hard", 1): 1.0,
        ("hard", 2): 1.0,
    }
    for step in (2, 4):
        for (split, k), value in expected.items():
            assert table[(step, split, k)][0] == pytest.approx(value, abs=1e-6), (step, split, k)
    assert table[(2, "medium", 1)][1] == 2  # 8 medium problems over both sources, a quarter held out
    # An extra suite (the LiveCodeBench hook) is called at the same steps and logged next to the held-out one.
    assert lcb.steps == [(2, 1, 2), (4, 1, 2)]
    assert table[(4, "lcb-easy", 1)][0] == 0.5 and table[(4, "lcb-hard", 2)][0] == 0.0
    logs = {e["step"]: e for e in logged(out) if "eval/heldout/easy_medium/pass@2" in e}
    assert sorted(logs) == [2, 4]
    summary = json.loads((out / "train_summary.json").read_text())
    held = summary["data"]["heldout"]
    assert held == {"easy": 1, "easy_medium": 1, "hard": 1, "medium": 2}
    assert sum(summary["bins"].values()) == 4 * 4 + 4 - sum(held.values())
    rounds = [json.loads(line) for line in (out / "curriculum_metrics.jsonl").read_text().splitlines()]
    assert all(r["source_weights"] == {"real": 0.5, "synth": 0.5} for r in rounds)
    cumulative = (out / "bin_solve_rates_cumulative.csv").read_text().splitlines()
    assert cumulative[0] == "round,step,bin,problems,seen,solved_ever,cumulative_solve_rate,solved_of_seen"
