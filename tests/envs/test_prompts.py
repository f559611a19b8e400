"""Prompt rendering: what the teacher and the student read, with no scaffolding and no leaks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthgen.envs import get_env, prompts
from synthgen.envs.problem import Problem
from synthgen.envs.settings import ProgressionSettings
from synthgen.envs.summary import Summary
from synthgen.sandbox import values
from synthgen.settings.base import ENV_NAMES

PROBLEMS = {
    "induction": Problem(
        "induction",
        "def f(x):\n    return x * 3 + 1",
        ["1", "2", "5", "9"],
        "Triple it and add one.",
        outputs=["4", "7", "16", "28"],
        visible_count=2,
    ),
    "abduction": Problem("abduction", "def f(x):\n    return x * 3 + 1", ["123456"], outputs=["370369"]),
    "deduction": Problem("deduction", "def f(x):\n    return x * 3 + 1", ["123456"], outputs=["370369"]),
    "fuzzing": Problem(
        "fuzzing",
        "def f(x):\n    return abs(x)",
        ["-5", "777777"],
        pre_test_code="def pre_test_f(x):\n    return type(x) is int",
        test_code="def test_f(x):\n    assert f(x) >= 0",
        outputs=["true", "false"],
    ),
    "contest": Problem(
        "contest",
        "def f(text):\n    return str(sum(map(int, text.split()[1:]))) + '\\n'",
        ["'2\\n3 4\\n'", "'1\\n-5\\n'", "'3\\n1 1 1\\n'"],
        "Print the sum of the n numbers that follow n.",
        outputs=[values.encode("7\n"), values.encode("-5\n"), values.encode("3\n")],
        visible_count=2,
    ),
}
SEED = "def add(a, b):\n    return a + b"
MARKER = re.compile(r"^(Environment|Task|Strategy):", re.M)


def summary(correct: int, scored: int = 32, progression: ProgressionSettings | None = None) -> Summary:
    progression = progression or ProgressionSettings()
    made = Summary.made_up(correct / scored, progression, attempts=scored)
    made.solved, made.failed = ["def f(x): return 3*x+1"][: correct > 0], ["def f(x): return x"][: correct < scored]
    return made


def teacher(name: str, kind: str, **kwargs) -> str:
    (message,) = get_env(name).teacher_messages(kind, **kwargs)
    assert message["role"] == "user"
    return message["content"]


def every_prompt():
    for name in ENV_NAMES:
        yield name, "first", teacher(name, "first", seed_text=SEED)
        for strategy in ("easier", "somewhat-easier", "similar", "harder"):
            yield (
                name,
                strategy,
                teacher(name, "mutate", previous=PROBLEMS[name], summary=summary(9), strategy=strategy),
            )
        for strategy in ("chain-medium", "chain-easy"):
            yield (
                name,
                strategy,
                teacher(
                    name, "chain", previous=PROBLEMS[name], summary=summary(3), target=(0.41, 0.59), strategy=strategy
                ),
            )
        yield name, "student", get_env(name).student_messages(PROBLEMS[name])[0]["content"]


def test_no_prompt_carries_scaffolding_or_template_syntax():
    for name, what, text in every_prompt():
        assert not MARKER.search(text), (name, what, text[:200])
        assert "{{" not in text and "{%" not in text and "{#" not in text, (name, what)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_first_turn_builds_on_the_seed(name):
    text = teacher(name, "first", seed_text=SEED)
    assert SEED in text and f"This is a{'n' if name[0] in 'aeiou' else ''} {name} puzzle" in text
    assert "Progression strategy" not in text and "previous puzzle" not in text.lower().split("do not refer")[0]
    assert "coding-contest" in text and "stand on its own" in text and "Plan first" in text


@pytest.mark.parametrize("name", ENV_NAMES)
def test_mutate_shows_the_previous_problem_the_summary_and_the_measured_rate(name):
    text = teacher(name, "mutate", previous=PROBLEMS[name], summary=summary(28))
    assert PROBLEMS[name].code in text and "## How the student did" in text
    assert "The student solved it 28 of 32 times, a pass rate of 0.875." in text
    assert "Make the next puzzle harder." in text and "between 0.35 and 0.65" in text
    # The paper's Appendix F, in content: analyse the answers, then plan; keep the core and add complexity; diverse
    # outputs; a standalone, challenging, contest-minded problem.
    assert text.index("analysing the student's answers") < text.index("Then plan the new puzzle")
    assert "keep the core task" in text and "clearly different outputs" in text
    assert "do not refer to the previous puzzle" in text and "coding-contest problems" in text
    assert "def f(x): return 3*x+1" in text and "def f(x): return x\n" in text  # solved and failed examples


def test_induction_asks_for_five_inputs_and_a_hint_without_code():
    text = teacher("induction", "first", seed_text=SEED)
    assert "5 different inputs" in text and "lead to diverse outputs" in text
    assert "```message" in text and "must not contain code" in text


def test_strategy_defaults_to_the_summary_and_can_be_overridden():
    low = summary(4)  # 0.125: below the band
    assert low.strategy == "somewhat-easier"
    assert "Make the next puzzle somewhat easier." in teacher(
        "deduction", "mutate", previous=PROBLEMS["deduction"], summary=low
    )
    text = teacher("deduction", "mutate", previous=PROBLEMS["deduction"], summary=low, strategy="similar")
    assert "Keep the level: write a new variant" in text and "somewhat easier" not in text
    with pytest.raises(ValueError, match="unknown mutate strategy"):
        teacher("deduction", "mutate", previous=PROBLEMS["deduction"], summary=low, strategy="chain-easy")


def test_each_strategy_has_its_own_instruction():
    texts = {what: text for name, what, text in every_prompt() if name == "abduction"}
    openings = {
        "easier": "Make the next puzzle easier.",
        "somewhat-easier": "Make the next puzzle somewhat easier.",
        "similar": "Keep the level: write a new variant",
        "harder": "Make the next puzzle harder.",
        "chain-medium": "Turn this hard puzzle into a medium one",
        "chain-easy": "Turn this medium puzzle into an easy one",
    }
    for strategy, opening in openings.items():
        hits = [other for other, text in texts.items() if opening in text]
        assert hits == [strategy], (strategy, hits)


def test_easier_says_never_solved_only_when_it_was_never_solved():
    raised = ProgressionSettings(easier_at=0.2)
    some = summary(3, progression=raised)
    assert some.strategy == "easier"
    text = teacher("induction", "mutate", previous=PROBLEMS["induction"], summary=some)
    assert "Make the next puzzle easier." in text and "never solved" not in text
    assert "solved it 3 of 32 times, a pass rate of 0.094" in text
    text = teacher("induction", "mutate", previous=PROBLEMS["induction"], summary=summary(0))
    assert "never solved it: 0 correct out of 32 attempts" in text


def test_an_unscored_problem_keeps_its_level_and_says_so():
    blind = Summary(None, 32, 0, 0, 0, 32)
    text = teacher("deduction", "mutate", previous=PROBLEMS["deduction"], summary=blind)
    assert "Keep the level" in text and "pass rate on this puzzle is unknown" in text


@pytest.mark.parametrize("name", ENV_NAMES)
def test_chain_shows_the_summary_and_the_band_with_separate_texts(name):
    medium = teacher(
        name, "chain", previous=PROBLEMS[name], summary=summary(3), target=(0.41, 0.59), strategy="chain-medium"
    )
    easy = teacher(
        name, "chain", previous=PROBLEMS[name], summary=summary(16), target=(0.81, 0.91), strategy="chain-easy"
    )
    assert "Turn this hard puzzle into a medium one" in medium and "between 0.41 and 0.59" in medium
    assert "solved it 3 of 32 times, a pass rate of 0.094" in medium and "## How the student did" in medium
    assert "Turn this medium puzzle into an easy one" in easy and "between 0.81 and 0.91" in easy
    assert "solved it 16 of 32 times, a pass rate of 0.500" in easy
    assert PROBLEMS[name].code in medium and "keeps the same core task" in medium
    default = teacher(name, "chain", previous=PROBLEMS[name])  # no summary, no band: still a usable prompt
    assert "Turn this hard puzzle into a medium one" in default and "Aim for a pass rate" not in default


@pytest.mark.parametrize("kind", ["first", "mutate", "chain"])
def test_a_malformed_turn_is_named_in_the_next_prompt(kind):
    why = "format_error: no ```message block (or it is empty)"
    args = {"seed_text": SEED} if kind == "first" else {"previous": PROBLEMS["induction"], "summary": summary(9)}
    text = teacher("induction", kind, feedback=why, **args)
    assert "## Your last answer could not be used" in text and why in text
    assert "could not be used" not in teacher("induction", kind, **args)


def test_bad_calls_are_value_errors():
    env = get_env("induction")
    with pytest.raises(ValueError, match="needs the student summary"):
        env.teacher_messages("mutate", previous=PROBLEMS["induction"])
    with pytest.raises(ValueError, match="needs seed_text"):
        env.teacher_messages("first")
    with pytest.raises(ValueError, match="needs the previous problem"):
        env.teacher_messages("chain", seed_text=SEED)
    with pytest.raises(ValueError, match="unknown teacher prompt kind"):
        env.teacher_messages("rewrite", seed_text="x")
    with pytest.raises(ValueError, match="unknown chain strategy"):
        env.teacher_messages("chain", previous=PROBLEMS["induction"], strategy="harder")
    with pytest.raises(ValueError, match="pass-rate band"):
        env.teacher_messages("chain", previous=PROBLEMS["induction"], target=(0.6, 0.4))
    with pytest.raises(ValueError, match="takes no strategy"):
        env.teacher_messages("first", seed_text=SEED, strategy="harder")


def test_previous_pairs_are_described_per_environment():
    induction = teacher("induction", "mutate", previous=PROBLEMS["induction"], summary=summary(9))
    assert "the student saw the first 2" in induction and "- f(9) -> 28" in induction
    fuzzing = teacher("fuzzing", "mutate", previous=PROBLEMS["fuzzing"], summary=summary(9))
    assert "- f(777777): test_f fails: this input exposes the bug" in fuzzing
    bare = Problem(
        "fuzzing",
        PROBLEMS["fuzzing"].code,
        [],
        pre_test_code=PROBLEMS["fuzzing"].pre_test_code,
        test_code=PROBLEMS["fuzzing"].test_code,
    )
    assert "It had no example inputs." in teacher("fuzzing", "mutate", previous=bare, summary=summary(9))


def test_student_prompts_never_show_the_answer():
    text = {n: get_env(n).student_messages(p)[0]["content"] for n, p in PROBLEMS.items()}
    # induction: the two visible pairs, not the held-out ones, and not the code
    assert "f(2) returns 7" in text["induction"] and "28" not in text["induction"] and "x * 3" not in text["induction"]
    assert "```python" in text["induction"]
    # abduction: the output but not the input; deduction: the input but not the output
    assert "370369" in text["abduction"] and "123456" not in text["abduction"] and "```input" in text["abduction"]
    assert "f(123456)" in text["deduction"] and "370369" not in text["deduction"] and "```output" in text["deduction"]
    # fuzzing: the three functions, never the teacher's bug-triggering example
    assert "def test_f" in text["fuzzing"] and "777777" not in text["fuzzing"] and "```input" in text["fuzzing"]
    # contest: the statement and the public examples as raw text, never f or the hidden test
    assert "Print the sum" in text["contest"] and "3 4" in text["contest"] and "-5" in text["contest"]
    assert "def f" not in text["contest"] and "1 1 1" not in text["contest"] and "standard input" in text["contest"]


def test_nothing_shared_switches_on_an_environment_name():
    """What differs per environment lives in its module and prompts/<env>/, nowhere shared."""
    import ast

    for path in (prompts.prompts_dir() / "_shared").glob("*.j2"):
        named = [n for n in ENV_NAMES if re.search(rf"[\"']{n}[\"']", path.read_text(encoding="utf-8"))]
        assert not named, f"{path.name} names {named}"
    root = Path(prompts.__file__).parent
    for module in ("base", "prompts", "problem", "summary", "validation", "verify", "parsing", "checks"):
        tree = ast.parse((root / f"{module}.py").read_text(encoding="utf-8"))
        named = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in ENV_NAMES]
        assert not named, f"{module}.py names {named}"


def test_prompts_dir_override(tmp_path, monkeypatch):
    (tmp_path / "_shared").mkdir()
    (tmp_path / "deduction").mkdir()
    (tmp_path / "deduction" / "student.j2").write_text("custom {{ env }} {{ problem.code }}")
    monkeypatch.setenv(prompts.ENV_VAR, str(tmp_path))
    assert (
        get_env("deduction").student_messages(PROBLEMS["deduction"])[0]["content"].startswith("custom deduction def f")
    )


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


def test_displayed_values_are_reprs():
    view = prompts.problem_view(Problem("deduction", "x", ["1"], outputs=[values.encode((1, "a"))]))
    assert view["pairs"][0]["output"] == "(1, 'a')"
