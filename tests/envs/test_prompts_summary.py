"""Prompt rendering (markers, no leaks, template lookup), the student summary and the registry."""

from __future__ import annotations

import pytest

from synthgen.config.base import ENV_NAMES
from synthgen.config.generate import ProgressionSettings
from synthgen.envs import ENVIRONMENTS, get_env, prompts
from synthgen.envs.base import Problem, Reward, choose_strategy, summarize
from synthgen.sandbox import values

PROBLEMS = {
    "induction": Problem("induction", "def f(x):\n    return x * 3 + 1", ["1", "2", "5", "9"], "Triple it and add one.",
                         outputs=["4", "7", "16", "28"], visible_count=2),
    "abduction": Problem("abduction", "def f(x):\n    return x * 3 + 1", ["123456"], outputs=["370369"]),
    "deduction": Problem("deduction", "def f(x):\n    return x * 3 + 1", ["123456"], outputs=["370369"]),
    "fuzzing": Problem("fuzzing", "def f(x):\n    return abs(x)", ["-5", "777777"],
                       pre_test_code="def pre_test_f(x):\n    return type(x) is int",
                       test_code="def test_f(x):\n    assert f(x) >= 0", outputs=["true", "false"]),
}


def summary_for(rates):
    rewards = [Reward(1.0, "ok", answer="A") if r else Reward(0.0, "ok", answer="B") for r in rates]
    return summarize(PROBLEMS["induction"], rewards, ProgressionSettings())


def test_registry_matches_env_names():
    assert tuple(ENVIRONMENTS) == ENV_NAMES
    assert [get_env(n).name for n in ENV_NAMES] == list(ENV_NAMES)
    with pytest.raises(ValueError, match="unknown environment"):
        get_env("translation")


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("kind", ["first", "mutate", "chain"])
def test_teacher_prompts_render_with_markers(name, kind):
    env = get_env(name)
    summary = summary_for([1, 1, 1, 0]) if kind == "mutate" else None
    (message,) = env.teacher_messages(kind, seed_text="def add(a, b):\n    return a + b", previous=PROBLEMS[name],
                                      summary=summary)
    text = message["content"]
    assert message["role"] == "user"
    assert text.startswith(f"Environment: {name}\nTask: {kind}\n")
    if kind == "mutate":
        assert "Strategy: harder" in text and "0.35" in text and "pass rate 0.750" in text
    if kind == "chain":
        assert "Strategy: easier" in text and "core task" in text
    if kind == "first":
        assert "def add(a, b)" in text and "Strategy:" not in text
    else:
        assert PROBLEMS[name].code in text and "stand on its own" in text
    assert "{{" not in text and "{%" not in text


def test_mutate_needs_a_summary_and_first_a_seed():
    with pytest.raises(ValueError):
        get_env("induction").teacher_messages("mutate", previous=PROBLEMS["induction"])
    with pytest.raises(ValueError):
        get_env("induction").teacher_messages("first")
    with pytest.raises(ValueError):
        get_env("induction").teacher_messages("rewrite", seed_text="x")


def test_student_prompts_never_show_the_answer():
    text = {n: get_env(n).student_messages(p)[0]["content"] for n, p in PROBLEMS.items()}
    for name, body in text.items():
        assert body.startswith(f"Environment: {name}\nTask: solve\n")
    # induction: the two visible pairs, not the held-out ones, and not the code
    assert "f(2) returns 7" in text["induction"] and "28" not in text["induction"] and "x * 3" not in text["induction"]
    assert "```python" in text["induction"]
    # abduction: the output but not the input; deduction: the input but not the output
    assert "370369" in text["abduction"] and "123456" not in text["abduction"] and "```input" in text["abduction"]
    assert "f(123456)" in text["deduction"] and "370369" not in text["deduction"] and "```output" in text["deduction"]
    # fuzzing: the three functions, never the teacher's bug-triggering example
    assert "def test_f" in text["fuzzing"] and "777777" not in text["fuzzing"] and "```input" in text["fuzzing"]


def test_prompts_dir_override(tmp_path, monkeypatch):
    (tmp_path / "_shared").mkdir()
    (tmp_path / "deduction").mkdir()
    (tmp_path / "deduction" / "student.j2").write_text("custom {{ env }} {{ problem.code }}")
    monkeypatch.setenv(prompts.ENV_VAR, str(tmp_path))
    assert get_env("deduction").student_messages(PROBLEMS["deduction"])[0]["content"].startswith("custom deduction def f")


def test_strict_undefined(tmp_path, monkeypatch):
    import jinja2

    (tmp_path / "_shared").mkdir()
    (tmp_path / "deduction").mkdir()
    (tmp_path / "deduction" / "student.j2").write_text("{{ no_such_variable }}")
    monkeypatch.setenv(prompts.ENV_VAR, str(tmp_path))
    with pytest.raises(jinja2.UndefinedError):
        get_env("deduction").student_messages(PROBLEMS["deduction"])


def test_bad_prompts_dir_is_a_user_error(monkeypatch, tmp_path):
    from synthgen.errors import UserError

    monkeypatch.setenv(prompts.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(UserError):
        prompts.prompts_dir()


@pytest.mark.parametrize(
    "rate, strategy",
    [(None, "similar"), (0.0, "easier"), (0.01, "similar"), (0.65, "similar"), (0.66, "harder"), (1.0, "harder")],
)
def test_strategy_thresholds(rate, strategy):
    assert choose_strategy(rate, ProgressionSettings()) == strategy


def test_strategy_thresholds_configurable():
    assert choose_strategy(0.2, ProgressionSettings(easier_at=0.25)) == "easier"
    assert choose_strategy(0.5, ProgressionSettings(harder_above=0.4)) == "harder"


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
    s = summarize(PROBLEMS["induction"], rewards, ProgressionSettings())
    assert (s.attempts, s.scored, s.correct, s.format_failures, s.infra_failures) == (7, 6, 4, 1, 1)
    assert s.pass_rate == pytest.approx(4 / 6) and s.strategy == "harder"
    assert s.solved == ["def f(x): return x*3+1", "def f(x):\n    return 3 * x + 1"]
    assert s.failed == ["def f(x): return x"]
    text = s.render()
    assert "Pass rate: 0.667" in text and "could not be read" in text and "def f(x): return x" in text


def test_summary_without_evidence():
    s = summarize(PROBLEMS["induction"], [Reward(None, "infra")] * 3, ProgressionSettings())
    assert s.pass_rate is None and s.scored == 0 and s.strategy == "similar"
    assert "n/a" in s.render()
    s = summarize(PROBLEMS["induction"], [Reward(0.0, "format", detail="cut off")], ProgressionSettings())
    assert s.pass_rate == 0.0 and s.strategy == "easier" and s.failed == ["(unreadable answer: cut off)"]


def test_problem_fields_round_trip():
    problem = PROBLEMS["fuzzing"]
    fields = problem.to_fields()
    assert fields["problem_id"] == problem.problem_id and fields["message"] is None
    again = Problem.from_fields(fields)
    assert again == problem
    assert Problem.from_fields({**fields, "outputs": None}).outputs == []


def test_displayed_values_are_reprs():
    assert prompts.problem_view(Problem("deduction", "x", ["1"], outputs=[values.encode((1, "a"))]))["pairs"][0]["output"] == "(1, 'a')"
