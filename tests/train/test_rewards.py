"""The GRPO reward scores through the real environments and sandbox; infra is None, never 0."""

from __future__ import annotations

import asyncio

import pytest

from synthgen.sandbox.values import encode
from synthgen.store import records
from synthgen.train.rewards import EnvScorer, SandboxReward, completion_text


def problem(env: str, code: str, inputs: list[str], outputs: list, **extra) -> dict:
    return {
        "problem_id": records.problem_id(env, code, inputs, extra.get("message")),
        "env": env,
        "code": code,
        "inputs": inputs,
        "outputs": [encode(v) for v in outputs],
        "difficulty": "medium",
        **extra,
    }


def assistant(text: str) -> list[dict]:
    return [{"role": "assistant", "content": text}]


# (row, a correct completion, a wrong completion) per environment.
CASES = {
    "deduction": (
        problem("deduction", "def f(x):\n    return x * 3 + 1\n", ["2"], [7]),
        "The value is\n```output\n7\n```",
        "```output\n7.0\n```",
    ),
    "abduction": (
        problem("abduction", "def f(s):\n    return s[::-1].upper()\n", ["'abc'"], ["CBA"]),
        "```input\n'abc'\n```",
        "```input\n'cba'\n```",
    ),
    "induction": (
        problem(
            "induction",
            "def f(a, b):\n    return a * b - 1\n",
            ["2, 3", "4, 5", "0, 9"],
            [5, 19, -1],
            visible_count=2,
            message="multiply, then step down by one",
        ),
        "```python\ndef f(a, b):\n    return a * b - 1\n```",
        "```python\ndef f(a, b):\n    return a * b\n```",
    ),
    "fuzzing": (
        problem(
            "fuzzing",
            "def f(n):\n    return n * n if n != 7 else 48\n",
            ["3", "7"],
            [True, False],
            pre_test_code="def pre_test_f(n):\n    return isinstance(n, int) and 0 <= n < 100\n",
            test_code="def test_f(n):\n    return f(n) == n ** 2\n",
        ),
        "```input\n7\n```",
        "```input\n5\n```",
    ),
}


@pytest.fixture(scope="module")
def scorer():
    from synthgen.sandbox.settings import SandboxSettings

    s = EnvScorer(SandboxSettings(workers=2))
    try:
        s.start()
    except Exception as exc:  # a machine where no isolation level works
        pytest.skip(f"sandbox unavailable: {exc}")
    yield s
    s.close()


def test_a_correct_answer_scores_one_in_every_environment(scorer):
    reward = SandboxReward(scorer, max_completion_length=64, eos_token_id=0)
    rows, completions = [], []
    for row, good, bad in CASES.values():
        rows += [row, row]
        completions += [assistant(good), assistant(bad)]
    columns = {
        k: [r.get(k) for r in rows]
        for k in (
            "problem_id",
            "env",
            "code",
            "inputs",
            "outputs",
            "message",
            "pre_test_code",
            "test_code",
            "visible_count",
            "difficulty",
        )
    }
    values = asyncio.run(
        reward(prompts=[None] * len(rows), completions=completions, completion_ids=[[1, 0]] * len(rows), **columns)
    )
    assert dict(zip(CASES, zip(values[::2], values[1::2]))) == dict.fromkeys(CASES, (1.0, 0.0))


def test_a_truncated_answer_is_a_format_failure_not_infra(scorer):
    row, good, _ = CASES["deduction"]
    reward = SandboxReward(scorer, max_completion_length=4, eos_token_id=0)
    values = asyncio.run(
        reward(
            prompts=[None],
            completions=[assistant(good)],
            completion_ids=[[5, 6, 7, 8]],
            **{k: [v] for k, v in row.items()},
        )
    )
    assert values == [0.0]


def test_a_broken_verifier_is_infra_none(scorer):
    row = dict(CASES["deduction"][0], outputs=[], problem_id="broken")  # no gold: the check cannot run
    values = asyncio.run(scorer([row, CASES["deduction"][0]], ["```output\n7\n```"] * 2, [False, False]))
    assert values == [None, 1.0]


def test_completion_text_reads_conversations_and_plain_text():
    assert completion_text("plain") == "plain"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]) == "ab"


def test_an_answer_reading_other_completions_from_memory_scores_zero():
    """Rollouts of one problem are scored one after another in the same pool: a completion that
    searches its memory for a sibling's correct f (or any earlier job's) must find nothing."""
    from synthgen.sandbox.settings import SandboxSettings
    from tests.helpers.memory_probe import cheat_completion

    row, _, _ = CASES["induction"]
    explained = "    # Multiply the two numbers, then step down by one.\n" * 12  # as long as answers often are
    good = f"```python\ndef f(a, b):\n{explained}    return a * b - 1\n```"
    cheat = cheat_completion()
    control = cheat.replace("\n```\n", f"\n_COPY = '''{row['code']}'''\n```\n")  # a copy in its own text
    scorer = EnvScorer(SandboxSettings(workers=1, timeout_s=30))  # one zygote: each job follows the correct one
    try:
        scorer.start()
    except Exception as exc:  # a machine where no isolation level works
        pytest.skip(f"sandbox unavailable: {exc}")
    try:
        for _ in range(2):
            rewards = asyncio.run(scorer([row] * 5, [good, cheat, cheat, cheat, control], [False] * 5))
            assert rewards == [1.0, 0.0, 0.0, 0.0, 1.0]
    finally:
        scorer.close()
