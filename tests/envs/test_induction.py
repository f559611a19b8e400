"""Induction teacher answers as they arrive: parsed and validated through the real sandbox."""

from __future__ import annotations

import pytest

from synthgen.envs import get_env, reasons
from synthgen.envs.parsing import FormatError
from synthgen.sandbox.settings import SandboxSettings

WELL_FORMED = '''I'll build on the snippet's idea of bucketing values.

```python
def f(scores, width):
    """Histogram of scores in buckets of the given width, as (bucket_start, count) pairs."""
    buckets = {}
    for s in scores:
        start = (s // width) * width
        buckets[start] = buckets.get(start, 0) + 1
    return sorted(buckets.items())
```

```input
[1, 2, 11, 15, 27], 10
```

```input
[5, 5, 5], 5
```

```input
[], 3
```

```input
[0, 9, 10, 19, 20], 10
```

```input
[-4, -1, 3, 8], 4
```

```input
[100, 150, 199, 200], 50
```

```message
Group the numbers into equal-width ranges and count how many fall in each range that is used.
```
'''

# Reasoning leaked into the content, a draft, CRLF, an odd tag, a message before the code,
# several inputs in one block, one spanning lines with commas and quotes, a keyword argument,
# and a __main__ demo at the end.
SLOPPY = (
    "<think>Maybe something with names? Draft:\n```python\ndef f(x):\n    return x\n```\nNo, too easy.</think>\n"
    "Final answer below.\n\n"
    "```msg\nJoin the names that pass the length rule, in the order given, with the separator.\n```\n"
    "```py\ndef f(names, sep, min_len=3):\n    kept = [n.strip() for n in names if len(n.strip()) >= min_len]\n"
    "    return sep.join(kept)\n\n\nif __name__ == \"__main__\":\n    print(f(['ab', 'abc'], ','))\n```\n"
    "Inputs:\n```input\n['Ann', 'Bo', 'Carla'], ', '\n['Al', 'Di'], '-'\n```\n"
    "```input\n[\"O'Neil\", 'Li',\n 'Zhang, Wei'], ' | ',\n min_len=2\n```\n"
    "```input\n['  Eve  ', 'Mallory'], '+', min_len=4\n```\n"
).replace("\n", "\r\n")


def parse(text):
    return get_env("induction").parse_teacher(text)


async def test_well_formed(pool, env_settings, sandbox):
    problem = parse(WELL_FORMED)
    assert len(problem.inputs) == 6 and problem.message.startswith("Group")
    problem, verdict = await get_env("induction").validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict
    assert problem.visible_count == 3
    assert problem.outputs[0] == '[{"tuple":[0,2]},{"tuple":[10,2]},{"tuple":[20,1]}]'
    assert problem.problem_id == parse(WELL_FORMED).problem_id  # the id ignores the filled outputs


async def test_sloppy_but_valid(pool, env_settings, sandbox):
    problem = parse(SLOPPY)
    assert "__main__" not in problem.code and "min_len=3" in problem.code
    assert problem.inputs == [
        "['Ann', 'Bo', 'Carla'], ', '",
        "['Al', 'Di'], '-'",
        "[\"O'Neil\", 'Li', 'Zhang, Wei'], ' | ', min_len=2",
        "['  Eve  ', 'Mallory'], '+', min_len=4",
    ]
    assert problem.message.startswith("Join the names")
    problem, verdict = await get_env("induction").validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict
    assert problem.visible_count == 2  # 4 inputs, half held out


def with_code(code: str, inputs=("1", "2", "3", "4"), message="a hint") -> str:
    blocks = "\n".join(f"```input\n{x}\n```" for x in inputs)
    return f"Here it is.\n```python\n{code}\n```\n{blocks}\n```message\n{message}\n```\n"


@pytest.mark.parametrize(
    "text, reason, fragment",
    [
        (WELL_FORMED.split("```message")[0], reasons.FORMAT_ERROR, "no ```message"),
        (WELL_FORMED[:400], reasons.FORMAT_ERROR, "not closed"),
        (
            with_code("def f(x):\n    return x * 2", message="Use def f(x): return x * 2"),
            reasons.FORMAT_ERROR,
            "contains code",
        ),
        (with_code("def f(x):\n    return x * 2", inputs=("1", "2 +")), reasons.BAD_INPUTS, "input block 2"),
        (with_code("def f(x):\n    return x * 2", inputs=("1", "y")), reasons.BAD_INPUTS, "not a literal"),
    ],
)
def test_parse_failures(text, reason, fragment):
    with pytest.raises(FormatError) as info:
        parse(text)
    assert info.value.reason == reason and fragment in info.value.detail


@pytest.mark.parametrize(
    "code, inputs, reason, fragment",
    [
        ("def f(x)\n    return x * 2", ("1", "2", "3"), reasons.COMPILE_ERROR, "line 1"),
        ("async def f(x):\n    return x", ("1", "2", "3"), reasons.COMPILE_ERROR, "async"),
        ("y = 1 / 0\n\ndef f(x):\n    return x * 2", ("1", "2", "3"), reasons.COMPILE_ERROR, "ZeroDivisionError"),
        ("import os\n\ndef f(x):\n    return x * 2", ("1", "2", "3"), reasons.FORBIDDEN, "imports os"),
        ("def f(x):\n    return 10 // x", ("1", "2", "0"), reasons.EXECUTION_ERROR, "ZeroDivisionError"),
        ("def f(x):\n    return [x] * 3000", ("1", "2", "3"), reasons.OUTPUT_TOO_LARGE, "limit 2000"),
        ("def f(x):\n    return hash(str(x)) % 100003", ("1", "2", "3"), reasons.NONDETERMINISTIC, ""),
        ("def f(x):\n    return x % 1", ("1", "2", "3"), reasons.TRIVIAL, "distinct"),
        ("def f(x):\n    return x", ("1", "2", "3"), reasons.TRIVIAL, "returns the argument"),
        (
            "def f(xs, k):\n    return sorted(xs)",
            ("[3, 1], 1", "[2, 9, 4], 0", "[5], 2"),
            reasons.TRIVIAL,
            "sorted of argument xs",
        ),
        ("def f(s):\n    return len(s)", ("'ab'", "s='abc'", "''"), reasons.TRIVIAL, "len"),
        ("def f(x):\n    return x * 2", ("1", "2"), reasons.BAD_INPUTS, "expected 3 to 10"),
        ("def f(x):\n    return x * 2", ("1", "2", "1"), reasons.BAD_INPUTS, "repeats input 1"),
    ],
)
async def test_validation_reasons(pool, env_settings, sandbox, code, inputs, reason, fragment):
    problem = parse(with_code(code, inputs))
    _, verdict = await get_env("induction").validate(problem, pool, env_settings, sandbox)
    assert (verdict.valid, verdict.reason) == (False, reason), verdict
    assert fragment in verdict.detail


async def test_timeout_is_an_execution_error(pool, env_settings):
    problem = parse(with_code("def f(x):\n    while x == 3:\n        pass\n    return x * 2", ("1", "2", "3")))
    _, verdict = await get_env("induction").validate(problem, pool, env_settings, SandboxSettings(timeout_s=0.5))
    assert verdict.reason == reasons.EXECUTION_ERROR and "timeout" in verdict.detail


async def test_infra_is_its_own_reason(infra_pool, env_settings, sandbox):
    _, verdict = await get_env("induction").validate(parse(WELL_FORMED), infra_pool, env_settings, sandbox)
    assert verdict.reason == reasons.INFRA


async def test_visible_count_given_is_kept_and_checked(pool, env_settings, sandbox):
    env = get_env("induction")
    problem = parse(WELL_FORMED)
    problem.visible_count = 5
    problem, verdict = await env.validate(problem, pool, env_settings, sandbox)
    assert verdict.valid and problem.visible_count == 5
    problem.visible_count = 6
    _, verdict = await env.validate(problem, pool, env_settings, sandbox)
    assert verdict.reason == reasons.BAD_INPUTS
