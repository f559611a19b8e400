"""The registry, and the claim of the envs package docstring: a new environment is its module, one
registry entry and its templates, nothing else. The test registers a throwaway environment of its own
and takes it through every step a run and `synthgen verify` take."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from synthgen.envs import ENVIRONMENTS, get_env, parsing, prompts, reasons, validation
from synthgen.envs.base import Environment
from synthgen.envs.problem import Problem, Reward, Verdict
from synthgen.envs.settings import EnvSettings, ProgressionSettings
from synthgen.envs.summary import summarize
from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import ENV_NAMES

REPO = Path(__file__).resolve().parents[2]


def test_settings_read_the_registry():
    assert tuple(ENVIRONMENTS) == ENV_NAMES
    assert [get_env(n).name for n in ENV_NAMES] == list(ENV_NAMES)
    with pytest.raises(ValueError, match="unknown environment 'translation'; choose from induction"):
        get_env("translation")


def test_the_wheel_ships_every_environments_templates():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data_files = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    for folder in ("_shared", *ENV_NAMES):
        assert data_files.get(f"share/synthgen/prompts/{folder}") == [f"prompts/{folder}/*.j2"], folder


# -- a throwaway environment: find another input on which f returns the same value -------------------
class Twin(Environment):
    name = "twin"

    def parse_teacher(self, text: str) -> Problem:
        answer = parsing.teacher_answer(text)
        return Problem(self.name, answer.code, parsing.teacher_inputs(answer.input_blocks))

    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]:
        bad = validation.check_inputs(problem, 1, 1, what="input") or validation.static_checks(problem, ("f",))
        if bad:
            return problem, bad
        calls = [f"f({problem.inputs[0]})"]
        verdicts, bad = await validation.run_deterministic(
            problem, calls, calls, pool, sandbox, settings.max_output_chars
        )
        if bad:
            return problem, bad
        problem.outputs = [verdicts[0].encoded]
        return problem, Verdict(True, reasons.OK)

    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        return pairs[:1]

    def parse_student(self, text: str) -> str:
        return parsing.input_answer(text)

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        if answer == problem.inputs[0]:
            return Reward(0.0, "ok", "the shown input itself", answer)
        result = await pool.run(validation.job(problem.program(), [f"f({answer})"], sandbox, expected=problem.outputs))
        return validation.answer_reward(result.calls, answer, result.calls[0].match is True)


TEMPLATES = {
    "task.j2": "This is a twin puzzle: the student sees `f`, one input and its output, and must find a different "
    "input on which `f` returns the same value.\n",
    "format.j2": '## Answer format\n\n{% include "_shared/format_code.j2" %}\n'
    '{% with inputs_title = "Input", input_count_text = "exactly one input" %}\n'
    '{% include "_shared/format_inputs.j2" %}\n{% endwith %}\n',
    "previous_pairs.j2": "Its input and output:\n{% for p in previous.pairs %}\n- f({{ p.input }}) -> {{ p.output }}\n"
    "{% endfor %}\n",
    "student.j2": "```python\n{{ problem.code }}\n```\n\nf({{ problem.pairs[0].input }}) returns "
    "{{ problem.pairs[0].output }}. Give another input, in an ```input block, with the same result.\n",
}
ANSWER = "```python\ndef f(x):\n    return x % 10\n```\n\n```input\n1234\n```\n"


@pytest.fixture
def twin(tmp_path, monkeypatch):
    folder = tmp_path / "prompts"
    shutil.copytree(prompts.prompts_dir(), folder)
    (folder / "twin").mkdir()
    for name, text in TEMPLATES.items():
        (folder / "twin" / name).write_text(text)
    monkeypatch.setenv(prompts.ENV_VAR, str(folder))
    monkeypatch.setitem(ENVIRONMENTS, "twin", f"{__name__}:Twin")
    return get_env("twin")


async def test_a_new_environment_needs_its_module_an_entry_and_its_templates(twin, pool):
    sandbox = SandboxSettings()
    first = twin.teacher_messages("first", seed_text="print(sum(range(10)))")[0]["content"]
    assert "This is a twin puzzle" in first and "exactly one input" in first and "print(sum(range(10)))" in first
    problem, verdict = await twin.validate(twin.parse_teacher(ANSWER), pool, EnvSettings(), sandbox)
    assert verdict.valid and problem.outputs, verdict
    student = twin.student_messages(problem)[0]["content"]
    assert "f(1234) returns 4" in student
    rewards = await twin.rewards(problem, ["```input\n94\n```", "```input\n1234\n```", "no idea"], pool, sandbox)
    assert [r.value for r in rewards] == [1.0, 0.0, 0.0] and rewards[2].status == "format"
    summary = summarize(rewards, ProgressionSettings())
    mutate = twin.teacher_messages("mutate", previous=problem, summary=summary)[0]["content"]
    assert "- f(1234) -> 4" in mutate and "solved it 1 of 3 times" in mutate
    chain = twin.teacher_messages(
        "chain", previous=problem, summary=summary, target=(0.41, 0.59), strategy="chain-medium"
    )[0]["content"]
    assert "Turn this hard puzzle into a medium one" in chain


def test_verify_and_prompts_show_take_it_like_a_built_in_one(twin, cli, tmp_path):
    problem = twin.parse_teacher(ANSWER)
    (tmp_path / "p.json").write_text(json.dumps({"env": "twin", "code": problem.code, "inputs": problem.inputs}))
    (tmp_path / "a.txt").write_text("```input\n4\n```\n")
    rc, out, err = cli("verify", tmp_path / "p.json", tmp_path / "a.txt")
    assert rc == 0 and "  f(4): ok -> 4  match=True" in out and "reward: 1 (ok)" in out, err
    rc, out, err = cli(
        "prompts", "show", "--env", "twin", "--kind", "mutate", "--problem", tmp_path / "p.json", "--pass-rate", "0.5"
    )
    assert rc == 0 and "This is a twin puzzle" in out and "Keep the level" in out, err
