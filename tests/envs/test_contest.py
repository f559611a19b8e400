"""The contest environment: stdin/stdout and call-based problems, hidden tests, time limits,
LiveCodeBench's whitespace and number rules, and infrastructure failures that are never wrong answers."""

from __future__ import annotations

import pytest

from synthgen.envs import get_env
from synthgen.envs.contest import same_stdout, same_value
from synthgen.envs.problem import Problem
from synthgen.sandbox import JobResult, Status, values
from synthgen.sandbox.results import CallVerdict
from synthgen.sandbox.settings import SandboxSettings

SANDBOX = SandboxSettings(timeout_s=1.0)


def stdio_problem(tests: list[tuple[str, str]], public: int = 1) -> Problem:
    return Problem(
        "contest",
        "",
        [repr(i) for i, _ in tests],
        "Read n, then n integers; print their sum.",
        outputs=[values.encode(o) for _, o in tests],
        visible_count=public,
    )


SUM = stdio_problem([("2\n3 4\n", "7\n"), ("1\n-5\n", "-5\n"), ("3\n1 1 1\n", "3\n"), ("2\n10 20\n", "30\n")])
RIGHT = "```python\nn = int(input())\nprint(sum(map(int, input().split())))\n```"


def call_problem() -> Problem:
    return Problem(
        "contest",
        "",
        ["[2, 7, 11, 15], 9", "[3, 2, 4], 6", "[3, 3], 6"],
        "Return the indices of the two numbers that add up to target.",
        outputs=[values.encode([0, 1]), values.encode([1, 2]), values.encode([0, 1])],
        pre_test_code="class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        ",
        test_code="twoSum",
        visible_count=2,
    )


TWO_SUM = """```python
class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return %s
            seen[x] = i
```"""


async def score(problem, text, pool):
    return await get_env("contest").score(problem, text, pool, SANDBOX)


async def test_stdin_stdout_program_passes_every_test(pool):
    reward = await score(SUM, RIGHT, pool)
    assert (reward.value, reward.status) == (1.0, "ok") and len(reward.calls) == 4


async def test_a_hidden_test_failure_fails_the_answer(pool):
    # Right on the public test (n = 2 fits), wrong on the hidden n = 1 and n = 3 tests.
    hardcoded = "```python\ninput()\na, b = map(int, input().split())\nprint(a + b)\n```"
    reward = await score(SUM, hardcoded, pool)
    assert reward.value == 0.0 and reward.status == "ok" and "test 2" in reward.detail


async def test_whitespace_and_number_rules(pool):
    padded = "```python\nn = int(input())\nprint('  ', sum(map(int, input().split())), '  ')\nprint()\nprint()\n```"
    assert (await score(SUM, padded, pool)).value == 1.0
    decimal = stdio_problem([("1\n", "0.5\n")])
    assert (await score(decimal, "```python\nprint('0.50')\n```", pool)).value == 1.0
    assert (await score(decimal, "```python\nprint('0.5000001')\n```", pool)).value == 0.0
    assert same_stdout("1 2\n3\n", " 1 2 \n3") and not same_stdout("1 2 3", "1 2\n3") and not same_stdout("12", "1 2")


async def test_a_slow_solution_times_out_and_stops_the_remaining_tests(pool):
    slow = "```python\nwhile True:\n    pass\n```"
    reward = await score(SUM, slow, pool)
    assert reward.value == 0.0 and "timeout" in reward.detail
    assert len(reward.calls) == 1  # the first test decided it; the other three never ran


async def test_crash_and_unreadable_answers(pool):
    crash = await score(SUM, "```python\nprint(1 / 0)\n```", pool)
    assert crash.value == 0.0 and "ZeroDivisionError" in crash.detail
    junk = await score(SUM, "I would read the input and add it up.", pool)
    assert (junk.value, junk.status) == (0.0, "format")


async def test_call_based_problem_with_starter_code(pool):
    problem = call_problem()
    assert (await score(problem, TWO_SUM % "[seen[target - x], i]", pool)).value == 1.0
    # A tuple counts as a list, as LiveCodeBench grades it.
    assert (await score(problem, TWO_SUM % "(seen[target - x], i)", pool)).value == 1.0
    assert (await score(problem, TWO_SUM % "[i, seen[target - x]]", pool)).value == 0.0
    prompt = get_env("contest").student_messages(problem)[0]["content"]
    assert "class Solution" in prompt and "twoSum" in prompt and "[2, 7, 11, 15]" not in prompt


async def test_sandbox_failure_is_infra_never_a_wrong_answer():
    class BrokenPool:
        async def run(self, job):
            return JobResult("bwrap", [CallVerdict(Status.INFRA, error="sandbox worker died")] * job.runs)

    reward = await get_env("contest").score(SUM, RIGHT, BrokenPool(), SANDBOX)
    assert reward.value is None and reward.status == "infra"


def test_value_comparison():
    assert same_value(values.encode((1, 2)), values.encode([1, 2])) and same_value(values.encode(2.0), values.encode(2))
    assert not same_value(None, values.encode(1)) and not same_value(values.encode([2, 1]), values.encode([1, 2]))
    half = values.encode(__import__("fractions").Fraction(1, 2))
    assert same_value(half, values.encode(0.5)) and not same_value(half, values.encode(0.3))


@pytest.mark.parametrize("bad", ["3", "1, 2"])
async def test_teacher_inputs_must_be_whole_stdin_strings(pool, bad):
    from synthgen.envs.settings import EnvSettings

    env = get_env("contest")
    problem = Problem("contest", "def f(text):\n    return text.upper()\n", ["'a\\n'", bad, "'c'"], "Shout.")
    _, verdict = await env.validate(problem, pool, EnvSettings(), SANDBOX)
    assert not verdict.valid and verdict.reason == "bad_inputs"
