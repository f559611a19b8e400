"""The reward entry points in this process: every environment's verdict as `synthgen verify` gives it, and
what each trainer receives when the sandbox fails (never a wrong answer)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from synthgen.envs.problem import Reward
from synthgen.interop import scorer, verl
from synthgen.interop import trl as trl_entry
from synthgen.interop import verifiers as vf_entry
from synthgen.interop.records import GroundTruthError
from tests.helpers.interop import ENVS, RIGHT, WRONG


def truths_by_env(exports) -> dict[str, str]:
    rows = pq.read_table(exports["verl"] / "train.parquet").to_pylist()
    by_env = {}
    for row in rows:
        if row["extra_info"]["lineage_id"].startswith("example-"):  # the seeds/examples problems
            truth = row["reward_model"]["ground_truth"]
            by_env[json.loads(truth)["env"]] = truth
    assert sorted(by_env) == sorted(ENVS)
    return by_env


@pytest.mark.slow
def test_every_env_right_is_1_wrong_is_0_as_synthgen_verify_says(exports, verify_verdicts):
    truths = truths_by_env(exports)
    for env in ENVS:
        assert verify_verdicts[env] == (1.0, 0.0), f"{env}: the test's answers are not right / wrong"
        right = verl.compute_score(f"synthgen/{env}", RIGHT[env], truths[env], {})
        wrong = verl.compute_score(f"synthgen/{env}", WRONG[env], truths[env], {})
        assert (right["score"], wrong["score"]) == verify_verdicts[env], env
        assert right == {"score": 1.0, "acc": 1.0, "infra": 0.0, "status": "ok"}
        assert trl_entry.reward(None, [RIGHT[env], WRONG[env]], [truths[env]] * 2) == [1.0, 0.0]
    batch = verl.compute_score_batch(
        [f"synthgen/{e}" for e in ENVS for _ in (0, 1)],
        [a for e in ENVS for a in (RIGHT[e], WRONG[e])],
        [truths[e] for e in ENVS for _ in (0, 1)],
        [{}] * 10,
    )
    assert [d["score"] for d in batch] == [1.0, 0.0] * 5
    assert {tuple(sorted(d)) for d in batch} == {("acc", "infra", "score", "status")}  # same keys: verl stacks them


def infra_scorer(bad: set[str]):
    """A scorer whose sandbox 'fails' on the completions in `bad` and scores the rest by exact match 'right'."""

    def score(truths, completions, truncated=None):
        return [
            Reward(None, "infra", "worker died")
            if c in bad
            else Reward(1.0 if c == "right" else 0.0, "ok" if c == "right" else "format")
            for c in completions
        ]

    return score


def test_verl_per_sample_raises_on_infra_after_one_retry(monkeypatch):
    calls = []
    fake = infra_scorer({"boom"})
    monkeypatch.setattr(scorer, "score", lambda t, c, tr=None: calls.append(list(c)) or fake(t, c))
    with pytest.raises(verl.SandboxInfraError) as raised:
        verl.compute_score("synthgen/deduction", "boom", "{}")
    assert not isinstance(raised.value, TimeoutError)  # verl's naive manager turns a TimeoutError into 0.0
    assert calls == [["boom"], ["boom"]]  # scored, then once more


def test_verl_batch_gives_infra_its_groups_mean_so_its_advantage_is_zero(monkeypatch):
    monkeypatch.setattr(scorer, "score", infra_scorer({"boom"}))
    truths = ["A", "A", "A", "A", "B", "B"]
    out = verl.compute_score_batch(["s"] * 6, ["right", "wrong", "boom", "right", "boom", "boom"], truths, [{}] * 6)
    scores = [d["score"] for d in out]
    assert scores[:4] == [1.0, 0.0, pytest.approx(2 / 3), 1.0]
    group_a = scores[:4]
    assert group_a[2] - sum(group_a) / 4 == pytest.approx(0.0)  # GRPO advantage of the infra sample
    assert scores[4:] == [0.0, 0.0]  # nothing scored in group B: all equal, advantage 0
    assert [d["infra"] for d in out] == [0.0, 0.0, 1.0, 0.0, 1.0, 1.0]
    assert [d["acc"] for d in out] == [1.0, 0.0, None, 1.0, None, None]


def test_trl_gets_none_for_infra(monkeypatch):
    monkeypatch.setattr(scorer, "score", infra_scorer({"boom"}))
    assert trl_entry.reward(None, ["right", "boom", [{"role": "assistant", "content": "wrong"}]], ["T"] * 3) == [
        1.0,
        None,
        0.0,
    ]
    assert trl_entry.reward.__name__ == "synthgen"


def test_trl_scores_a_completion_cut_off_by_the_token_limit_as_a_failure(monkeypatch):
    seen = {}
    monkeypatch.setattr(scorer, "score", lambda t, c, truncated=None: seen.setdefault("t", truncated) and [])
    reward = trl_entry.SynthgenReward(max_completion_length=3, eos_token_id=9)
    reward(None, ["a", "b", "c"], ["T"] * 3, completion_ids=[[1, 2, 3], [1, 2, 9], [1]])
    assert seen["t"] == [True, False, False]


def test_verifiers_group_reward_marks_infra_and_gives_the_groups_mean(monkeypatch):
    monkeypatch.setattr(scorer, "score", infra_scorer({"boom"}))
    values, errors, kind = vf_entry._verdicts(["T"] * 3, ["right", "boom", "wrong"])
    assert values == [1.0, 0.5, 0.0] and errors[0] is None and errors[1] and kind == "infra"

    def broken(truths, completions, truncated=None):
        raise GroundTruthError("not a synthgen ground truth")

    monkeypatch.setattr(scorer, "score", broken)
    values, errors, kind = vf_entry._verdicts(["x"], ["right"])
    assert values == [0.0] and kind == "data" and "ground truth" in errors[0]


def test_completion_text_reads_messages_as_dicts_or_objects():
    class Message:
        def __init__(self, role, content):
            self.role, self.content = role, content

    assert vf_entry.completion_text([{"role": "assistant", "content": "a"}, Message("assistant", "b")]) == "ab"
    assert vf_entry.completion_text([Message("tool", "x"), {"role": "assistant", "content": [{"text": "c"}]}]) == "c"


def test_a_foreign_ground_truth_is_an_error_not_a_score():
    with pytest.raises(GroundTruthError):
        verl.compute_score("openai/gsm8k", "42", "42")
