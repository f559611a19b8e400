"""Fuzzing teacher answers: buggy f, pre_test_f, test_f and example inputs; parse and validate."""

from __future__ import annotations

import pytest

from synthgen.envs import get_env, reasons
from synthgen.envs.parsing import FormatError

F = '''def f(xs):
    """Indices of the local peaks of xs (strictly greater than both neighbours; ends count with one)."""
    peaks = []
    for i in range(1, len(xs)):
        left = xs[i - 1]
        right = xs[i + 1] if i + 1 < len(xs) else float("-inf")
        if xs[i] > left and xs[i] > right:
            peaks.append(i)
    return peaks'''
PRE = """def pre_test_f(xs):
    return isinstance(xs, list) and 0 < len(xs) <= 12 and all(type(x) is int for x in xs)"""
TEST = """def test_f(xs):
    def is_peak(i):
        left = xs[i - 1] if i > 0 else float("-inf")
        right = xs[i + 1] if i + 1 < len(xs) else float("-inf")
        return xs[i] > left and xs[i] > right

    assert f(xs) == [i for i in range(len(xs)) if is_peak(i)]"""

WELL_FORMED = f"""The bug: the loop starts at 1, so a peak at index 0 is never reported.

```python
{F}
```

```python
{PRE}
```

```python
{TEST}
```

```input
[1, 3, 2]
```
```input
[1, 2, 3, 1, 5]
```
```input
[4, 1, 2]
```
"""

# One block with everything (plus a helper and a demo), CRLF, the inputs in one block by line.
SLOPPY = (
    "<think>pre_test first? fine</think>Everything in one block:\n```python\nimport math\n\n"
    f"{PRE}\n\n\n{F}\n\n\n{TEST}\n\n\nif __name__ == '__main__':\n    print(f([3, 1]))\n```\n"
    "Examples:\n```input\n[1, 3, 2]\n[2, 1]\n```\n"
).replace("\n", "\r\n")


def parse(text):
    return get_env("fuzzing").parse_teacher(text)


async def test_well_formed(pool, env_settings, sandbox):
    problem = parse(WELL_FORMED)
    assert problem.code.startswith("def f(xs):")
    assert problem.pre_test_code.startswith("def pre_test_f") and problem.test_code.startswith("def test_f")
    problem, verdict = await get_env("fuzzing").validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict
    assert problem.outputs == ["true", "true", "false"]  # test_f passed, passed, exposed the bug


async def test_sloppy_but_valid(pool, env_settings, sandbox):
    problem = parse(SLOPPY)
    assert problem.inputs == ["[1, 3, 2]", "[2, 1]"]
    assert "import math" in problem.code and "def pre_test_f" not in problem.code and "__main__" not in problem.code
    assert "def test_f" not in problem.code and problem.test_code.startswith("def test_f")
    problem, verdict = await get_env("fuzzing").validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict


def test_missing_helper_is_a_format_error():
    with pytest.raises(FormatError) as info:
        parse(WELL_FORMED.replace(TEST, "# the test is left as an exercise"))
    assert info.value.reason == reasons.FORMAT_ERROR and "test_f" in info.value.detail


def answer(f=F, pre=PRE, test=TEST, inputs=("[1, 3, 2]", "[4, 1, 2]")) -> str:
    return "\n".join(
        [f"```python\n{f}\n```", f"```python\n{pre}\n```", f"```python\n{test}\n```"]
        + [f"```input\n{x}\n```" for x in inputs]
    )


@pytest.mark.parametrize(
    "text, reason, fragment",
    [
        (answer(inputs=("[1, 3, 2]",)), reasons.BAD_INPUTS, "expected 2 to 10"),
        (answer(inputs=("[1, 3, 2]", "[1, 'a']")), reasons.BAD_INPUTS, "pre_test_f rejects"),
        (answer(inputs=("[1, 3, 2]", "[1, 2, 1]")), reasons.BAD_INPUTS, "no example input makes test_f fail"),
        (answer(inputs=("[5, 1]", "[4, 1, 2]")), reasons.TRIVIAL, "fails on every example"),
        (
            answer(pre="def pre_test_f(xs):\n    return len(xs)"),
            reasons.BAD_INPUTS,
            "(returned 3)",
        ),  # truthy is not True
        (
            answer(pre="def pre_test_f(xs):\n    return len(xs) > 0 and xs[5] >= 0"),
            reasons.EXECUTION_ERROR,
            "IndexError",
        ),
        (answer(pre="def pre_test_f(xs)\n    return True"), reasons.COMPILE_ERROR, "line"),
        (answer(f="import subprocess\n" + F), reasons.FORBIDDEN, "subprocess"),
        (answer(test=TEST + "\n\nimport random\nSALT = random.random()"), reasons.FORBIDDEN, "random"),
        (answer(test="def test_f(xs):\n    while True:\n        pass"), reasons.EXECUTION_ERROR, "timeout"),
        (
            answer(
                test="def test_f(xs):\n    return hash(str(xs)) % 2 == 0",
                inputs=("[1]", "[2]", "[3]", "[4]", "[5]", "[6]"),
            ),
            reasons.NONDETERMINISTIC,
            "",
        ),
    ],
)
async def test_validation_reasons(pool, env_settings, text, reason, fragment):
    from synthgen.sandbox.settings import SandboxSettings

    _, verdict = await get_env("fuzzing").validate(parse(text), pool, env_settings, SandboxSettings(timeout_s=0.5))
    assert (verdict.valid, verdict.reason) == (False, reason), verdict
    assert fragment in verdict.detail


async def test_infra(infra_pool, env_settings, sandbox):
    _, verdict = await get_env("fuzzing").validate(parse(WELL_FORMED), infra_pool, env_settings, sandbox)
    assert verdict.reason == reasons.INFRA


async def test_the_papers_format_without_example_inputs(pool, env_settings, sandbox):
    """f, pre_test_f and test_f with no ```input blocks (the paper's own answer format) is a valid problem."""
    problem = parse(answer(inputs=()))
    assert problem.inputs == [] and problem.test_code.startswith("def test_f")
    problem, verdict = await get_env("fuzzing").validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict
    assert problem.outputs == [] and problem.to_fields()["outputs"] is None
    reward = await get_env("fuzzing").score(problem, "```input\n[5, 1]\n```", pool, sandbox)
    assert reward.value == 1.0, reward  # the peak at index 0 is the bug


@pytest.mark.parametrize(
    "text, reason, fragment",
    [
        (answer(inputs=(), f="def f(xs)\n    return xs"), reasons.COMPILE_ERROR, "line"),
        (answer(inputs=(), pre=PRE + "\n\nLIMIT = 1 // 0"), reasons.COMPILE_ERROR, "ZeroDivisionError"),
        (answer(inputs=(), f="import os\n" + F), reasons.FORBIDDEN, "imports os"),
    ],
)
async def test_without_examples_the_module_must_still_load(pool, env_settings, sandbox, text, reason, fragment):
    _, verdict = await get_env("fuzzing").validate(parse(text), pool, env_settings, sandbox)
    assert (verdict.valid, verdict.reason) == (False, reason), verdict
    assert fragment in verdict.detail
