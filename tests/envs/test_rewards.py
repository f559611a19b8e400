"""Student answers scored through the real sandbox: correct, wrong, malformed, truncated, hostile, infra."""

from __future__ import annotations

import pytest

from synthgen.envs import get_env
from synthgen.envs.problem import Problem


async def valid(pool, env_settings, sandbox, problem: Problem) -> Problem:
    problem, verdict = await get_env(problem.env).validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict
    return problem


def py(code: str) -> str:
    return f"Sure.\n```python\n{code}\n```\n"


INDUCTION = Problem(
    env="induction",
    code="def f(xs, k):\n    return sorted(xs, key=lambda v: (v % k, v))",
    inputs=["[5, 3, 8, 1], 3", "[10, 7, 4], 2", "[1, 2, 3, 4], 4", "[9, 6, 3], 5", "[2, 12, 7], 5", "[0, 11, 22], 11"],
    message="Order the numbers by their remainder modulo k, then by size.",
)
GOOD = "def f(xs, k):\n    return sorted(sorted(xs), key=lambda v: v % k)"
# Reproduces exactly the three visible pairs, nothing else.
MEMORISED = (
    "def f(xs, k):\n    table = {((5, 3, 8, 1), 3): [3, 1, 5, 8], ((10, 7, 4), 2): [4, 10, 7],"
    " ((1, 2, 3, 4), 4): [4, 1, 2, 3]}\n    return table.get((tuple(xs), k), sorted(xs))"
)


async def test_induction(pool, env_settings, sandbox):
    env = get_env("induction")
    problem = await valid(pool, env_settings, sandbox, INDUCTION)
    assert problem.visible_count == 3
    completions = [
        py(GOOD),  # correct
        py("def f(xs, k):\n    return sorted(xs)"),  # wrong
        py(MEMORISED),  # right on the visible pairs only
        "I would sort them somehow.",  # no code
        py("def g(xs, k):\n    return xs"),  # a block without f
        py(GOOD),  # correct but cut off by max tokens
    ]
    rewards = await env.rewards(problem, completions, pool, sandbox, truncated=[False] * 5 + [True])
    assert [(r.value, r.status) for r in rewards] == [
        (1.0, "ok"),
        (0.0, "ok"),
        (0.0, "ok"),
        (0.0, "format"),
        (0.0, "format"),
        (0.0, "format"),
    ]
    memorised = rewards[2]
    assert [c.match for c in memorised.calls[:3]] == [True, True, True] and not all(c.match for c in memorised.calls)
    assert rewards[0].answer.startswith("def f(xs, k):")


async def test_induction_helper_blocks_and_demo_code(pool, env_settings, sandbox):
    problem = await valid(pool, env_settings, sandbox, INDUCTION)
    answer = (
        "First a helper:\n```python\nimport functools\n\ndef key_for(k):\n    return lambda v: (v % k, v)\n```\n"
        "Then:\n```python\ndef f(xs, k):\n    return sorted(xs, key=key_for(k))\n\n"
        "if __name__ == '__main__':\n    raise SystemExit(f([3, 1], 2))\n```\n"
    )
    (reward,) = await get_env("induction").rewards(problem, [answer], pool, sandbox)
    assert reward.value == 1.0 and "__main__" not in reward.answer


HOSTILE_CODE = [
    # An object that claims to equal anything: it cannot leave the sandbox, so it never matches.
    "class Any:\n    def __eq__(self, other):\n        return True\n\ndef f(xs, k):\n    return Any()",
    # Outside-facing code runs (contained) and still has to produce the right values.
    "import os\n\ndef f(xs, k):\n    os.system('echo pwned > /tmp/x')\n    return open('/etc/hostname').read()",
    # Endless loop: a timeout, which is a wrong answer, not an infrastructure failure.
    "def f(xs, k):\n    while True:\n        pass",
    # A flood of output.
    "def f(xs, k):\n    print('x' * 10_000_000)\n    return sorted(xs)",
    # Tries to read the expected values out of the runner's frames.
    "import sys\n\ndef f(xs, k):\n    return sys._getframe(1).f_globals.get('expected', sorted(xs))",
]


async def test_induction_hostile_answers_score_zero(pool, env_settings):
    from synthgen.sandbox.settings import SandboxSettings

    sandbox = SandboxSettings(timeout_s=1.0)
    problem = await valid(pool, env_settings, sandbox, INDUCTION)
    rewards = await get_env("induction").rewards(problem, [py(c) for c in HOSTILE_CODE], pool, sandbox)
    assert [(r.value, r.status) for r in rewards] == [(0.0, "ok")] * len(HOSTILE_CODE)
    assert "timeout" in rewards[2].detail


ABDUCTION = Problem(env="abduction", code="def f(a, b=2):\n    return a * b + len(str(a))", inputs=["7, b=3"])


async def test_abduction(pool, env_settings, sandbox):
    env = get_env("abduction")
    problem = await valid(pool, env_settings, sandbox, ABDUCTION)  # f(7, b=3) == 22
    completions = [
        "```input\n7, b=3\n```",  # the teacher's own input
        "Try 10 with b=2:\n```input\n10, 2\n```",  # another input with the same output (20 + 2)
        "```input\n7\n```",  # 14 + 1: wrong
        "```input\n'7', 3\n```",  # raises inside f: wrong, not a format failure
        "```input\n__import__('os').system('id')\n```",  # not a literal: refused before any run
        "The answer is seven.",  # nothing to parse
    ]
    rewards = await env.rewards(problem, completions, pool, sandbox)
    assert [(r.value, r.status) for r in rewards] == [
        (1.0, "ok"),
        (1.0, "ok"),
        (0.0, "ok"),
        (0.0, "ok"),
        (0.0, "format"),
        (0.0, "format"),
    ]
    assert rewards[1].answer == "10, 2"


DEDUCTION = Problem(env="deduction", code="def f(n):\n    return (n // 2, n / 4, [n % 3] * 2)", inputs=["10"])


@pytest.mark.parametrize(
    "answer, value, status",
    [
        ("```output\n(5, 2.5, [1, 1])\n```", 1.0, "ok"),
        ("It returns a tuple.\n```output\n# integer division first\n(5, 2.5, [1, 1])\n```", 1.0, "ok"),
        ("```output\n(5, 2.5, (1, 1))\n```", 0.0, "ok"),  # tuple is not list
        ("```output\n(5.0, 2.5, [1, 1])\n```", 0.0, "ok"),  # 5.0 is not 5
        ("```output\n[5, 2.5, [1, 1]]\n```", 0.0, "ok"),
        ("```output\n(5, 2.5, [1, 1]\n```", 0.0, "format"),
        ("```output\n__import__('os').getcwd()\n```", 0.0, "format"),
        ("(5, 2.5, [1, 1])", 0.0, "format"),
        ("```python\n(5, 2.5, [1, 1])\n```", 1.0, "ok"),  # tolerated: the bare value in a python block
        ("```python\nprint(f(10))\n```", 0.0, "format"),
    ],
)
async def test_deduction(pool, env_settings, sandbox, answer, value, status):
    env = get_env("deduction")
    problem = await valid(pool, env_settings, sandbox, DEDUCTION)
    (reward,) = await env.rewards(problem, [answer], pool, sandbox)
    assert (reward.value, reward.status) == (value, status)


FUZZING = Problem(
    env="fuzzing",
    code=(
        'def f(s):\n    """Count the words in s."""\n    if s.endswith(\' \'):\n        return len(s.split()) + 1\n'
        "    if s == 'loop':\n        while True:\n            pass\n    return len(s.split())"
    ),
    pre_test_code="def pre_test_f(s):\n    return isinstance(s, str) and len(s) < 50",
    test_code="def test_f(s):\n    return f(s) == len(s.split())",
    inputs=["'a b'", "'one'", "'x y '"],
)


async def test_fuzzing(pool, env_settings):
    from synthgen.sandbox.settings import SandboxSettings

    sandbox = SandboxSettings(timeout_s=1.0)
    env = get_env("fuzzing")
    problem = await valid(pool, env_settings, sandbox, FUZZING)
    completions = [
        "```input\n'hello '\n```",  # trailing space: test_f returns False
        "```input\n'a b c'\n```",  # valid, but f is right here
        "```input\n'x' * 60\n```",  # not a literal
        "```input\n'" + "w " * 30 + "'\n```",  # pre_test_f says no (too long)
        "```input\n42\n```",  # pre_test_f says no (not a str)
        "```input\n'loop'\n```",  # test_f times out: not counted as a failure
        "```input\nNone\n```",  # pre_test_f returns False
    ]
    rewards = await env.rewards(problem, completions, pool, sandbox)
    assert [(r.value, r.status) for r in rewards] == [
        (1.0, "ok"),
        (0.0, "ok"),
        (0.0, "format"),
        (0.0, "ok"),
        (0.0, "ok"),
        (0.0, "ok"),
        (0.0, "ok"),
    ]
    assert "timeout" in rewards[5].detail


async def test_fuzzing_exception_in_test_counts_as_failing(pool, env_settings, sandbox):
    problem = Problem(
        env="fuzzing",
        code="def f(xs):\n    return xs[len(xs) // 2 + 1]",
        pre_test_code="def pre_test_f(xs):\n    return isinstance(xs, list) and len(xs) >= 1",
        test_code="def test_f(xs):\n    assert f(xs) in xs",
        inputs=["[1, 2, 3, 4]", "[5]"],
    )
    problem = await valid(pool, env_settings, sandbox, problem)
    (reward,) = await get_env("fuzzing").rewards(problem, ["```input\n[7, 8]\n```"], pool, sandbox)
    assert reward.value == 1.0 and reward.calls[1].status == "exception"


@pytest.mark.parametrize("problem", [INDUCTION, ABDUCTION, FUZZING])
async def test_infra_is_never_a_wrong_answer(pool, infra_pool, env_settings, sandbox, problem):
    problem = await valid(pool, env_settings, sandbox, problem)
    answer = {"induction": py(GOOD), "abduction": "```input\n1\n```", "fuzzing": "```input\n'a '\n```"}[problem.env]
    (reward,) = await get_env(problem.env).rewards(problem, [answer], infra_pool, sandbox)
    assert (reward.value, reward.status) == (None, "infra")


async def test_truncated_flags_must_line_up(pool, env_settings, sandbox):
    problem = await valid(pool, env_settings, sandbox, DEDUCTION)
    with pytest.raises(ValueError):
        await get_env("deduction").rewards(problem, ["a", "b"], pool, sandbox, truncated=[True])


async def test_oversized_answer_is_a_format_failure(pool, env_settings, sandbox):
    problem = await valid(pool, env_settings, sandbox, INDUCTION)
    huge = py("def f(xs, k):\n    return sorted(xs)\n" + "# padding\n" * 30_000)
    (reward,) = await get_env("induction").rewards(problem, [huge], pool, sandbox)
    assert (reward.value, reward.status) == (0.0, "format") and "longer than" in reward.detail
