"""The student summary, the progression strategy it picks, and its rebuilding from a stored row."""

from __future__ import annotations

import pytest

from synthgen.envs.problem import Problem, Reward
from synthgen.envs.settings import ProgressionSettings
from synthgen.envs.summary import Summary, choose_strategy, summarize
from synthgen.errors import UserError

PROBLEM = Problem("induction", "def f(x):\n    return x * 3 + 1", ["1", "2", "5", "9"], "Triple it and add one.")


@pytest.mark.parametrize(
    "rate, strategy",
    [
        (None, "similar"),
        (0.0, "easier"),
        (0.01, "somewhat-easier"),
        (0.34, "somewhat-easier"),
        (0.35, "similar"),
        (0.65, "similar"),
        (0.66, "harder"),
        (1.0, "harder"),
    ],
)
def test_strategy_bands(rate, strategy):
    assert choose_strategy(rate, ProgressionSettings()) == strategy


def test_every_boundary_is_a_setting():
    moved = ProgressionSettings(easier_at=0.1, target_low=0.2, target_high=0.5)
    assert [choose_strategy(p, moved) for p in (0.1, 0.15, 0.2, 0.5, 0.51)] == [
        "easier",
        "somewhat-easier",
        "similar",
        "similar",
        "harder",
    ]
    assert all(ProgressionSettings.model_fields[name].description for name in ProgressionSettings.model_fields)


def test_boundaries_must_be_ordered():
    from synthgen.settings.base import resolve_settings
    from synthgen.stages.generate.settings import GenerateSettings

    with pytest.raises(UserError, match="easier_at <= target_low <= target_high"):
        resolve_settings(GenerateSettings, {}, {"progression": {"target_low": 0.7}})


def test_summary_counts_and_examples():
    rewards = [
        Reward(1.0, "ok", answer="def f(x):\n    return 3 * x + 1"),
        Reward(1.0, "ok", answer="def f(x): return x*3+1"),
        Reward(1.0, "ok", answer="def f(x): return x*3+1"),  # duplicate: shown once
        Reward(1.0, "ok", answer="def f(x):\n    y = x * 3\n    return y + 1"),
        Reward(0.0, "ok", answer="def f(x): return x"),
        Reward(0.0, "format", detail="no closed ```python block"),
        Reward(None, "infra", detail="sandbox failure"),
    ]
    s = summarize(rewards, ProgressionSettings())
    assert (s.attempts, s.scored, s.correct, s.format_failures, s.infra_failures) == (7, 6, 4, 1, 1)
    assert s.pass_rate == pytest.approx(4 / 6) and s.strategy == "harder"
    assert s.solved == ["def f(x): return x*3+1", "def f(x):\n    return 3 * x + 1"]
    assert s.failed == ["def f(x): return x"]
    text = s.render()
    assert "Pass rate: 0.667" in text and "could not be read" in text and "infrastructure" in text
    assert "Failed example 1:\n```\ndef f(x): return x\n```" in text


def test_summary_without_evidence():
    s = summarize([Reward(None, "infra")] * 3, ProgressionSettings())
    assert s.pass_rate is None and s.scored == 0 and s.strategy == "similar"
    assert "unknown" in s.render()
    s = summarize([Reward(0.0, "format", detail="cut off")], ProgressionSettings())
    assert s.pass_rate == 0.0 and s.strategy == "easier" and s.failed == ["(unreadable answer: cut off)"]


def test_a_huge_answer_is_cut_in_the_text():
    s = summarize([Reward(0.0, "ok", answer="x" * 5000)], ProgressionSettings())
    assert "[... 2000 more characters]" in s.render()


def test_from_row_rebuilds_the_summary_of_a_stored_problem():
    rewards = [Reward(1.0, "ok", answer="A")] * 5 + [Reward(0.0, "ok", answer="B"), Reward(None, "infra")]
    original = summarize(rewards, ProgressionSettings())
    row = {
        **PROBLEM.to_fields(),
        "pass_rate": original.pass_rate,
        "attempts": 7,
        "scored": 6,
        "correct": 5,
        "format_failures": 0,
        "infra_failures": 1,
        "solved_examples": ["A"],
        "failed_examples": ["B"],
        "summary": "the summary of the turn before",
        "strategy": "first",
    }
    rebuilt = Summary.from_row(row, ProgressionSettings())
    assert rebuilt == original and rebuilt.render() == original.render()
    # Missing or null example columns (rows written before they existed) become empty lists.
    bare = Summary.from_row({**row, "solved_examples": None, "failed_examples": None}, ProgressionSettings())
    assert (bare.solved, bare.failed, bare.correct) == ([], [], 5)
    older = {k: v for k, v in row.items() if k not in ("solved_examples", "failed_examples")}
    assert Summary.from_row(older, ProgressionSettings(target_high=0.9)).strategy == "similar"


def test_made_up_summary_states_the_rounded_rate():
    made = Summary.made_up(0.875, ProgressionSettings())
    assert (made.correct, made.scored, made.pass_rate, made.strategy) == (28, 32, 0.875, "harder")


def test_problem_fields_round_trip():
    problem = Problem(
        "fuzzing",
        "def f(x):\n    return abs(x)",
        ["-5", "777777"],
        pre_test_code="def pre_test_f(x):\n    return type(x) is int",
        test_code="def test_f(x):\n    assert f(x) >= 0",
        outputs=["true", "false"],
    )
    fields = problem.to_fields()
    assert fields["problem_id"] == problem.problem_id and fields["message"] is None
    assert Problem.from_fields(fields) == problem
    assert Problem.from_fields({**fields, "outputs": None}).outputs == []
