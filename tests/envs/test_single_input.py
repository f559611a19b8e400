"""Abduction and deduction teacher answers (f plus exactly one input): parse and validate."""

from __future__ import annotations

import pytest

from synthgen.envs import get_env, reasons
from synthgen.envs.parsing import FormatError

ABDUCTION_WELL_FORMED = '''The snippet walks a grid; here the walk is a string of moves.

```python
def f(moves):
    """Final (x, y) position after a string of U/D/L/R moves, ignoring other characters."""
    x = y = 0
    for m in moves:
        if m == "U":
            y += 1
        elif m == "D":
            y -= 1
        elif m == "L":
            x -= 1
        elif m == "R":
            x += 1
    return (x, y)
```

```input
'UURDL?R'
```
'''

# <answer> tags, a one-line input block, a stray message (kept, harmless), a keyword argument.
ABDUCTION_SLOPPY = """Let me think... the student must reverse a rotation.
<answer>
```python
def f(word, k=1):
    k %= max(len(word), 1)
    return word[k:] + word[:k]
```
```input word='rotation', k=3```
```message
Rotate the word left.
```
</answer>"""

DEDUCTION_WELL_FORMED = """```python
def f(stock, orders):
    left = dict(stock)
    filled = []
    for item, qty in orders:
        if left.get(item, 0) >= qty:
            left[item] -= qty
            filled.append(item)
    return filled, sum(left.values())
```

```input
{'apple': 3, 'pear': 1}, [('apple', 2), ('pear', 2), ('apple', 1), ('fig', 1)]
```
"""

# The input spans lines, holds strings with commas and quotes, and has a trailing comment.
DEDUCTION_SLOPPY = """Here you go:

```python
import re

def f(text, sep):
    parts = [p.strip() for p in re.split(re.escape(sep), text) if p.strip()]
    return {p: len(p) for p in parts}
```

```input
"alpha, beta;; gamma's,  delta",
";;"   # split on the double semicolon
```
"""


def env(name):
    return get_env(name)


@pytest.mark.parametrize(
    "name, text, inputs, output",
    [
        ("abduction", ABDUCTION_WELL_FORMED, ["'UURDL?R'"], '{"tuple":[1,1]}'),
        ("abduction", ABDUCTION_SLOPPY, ["word='rotation', k=3"], '"ationrot"'),
        (
            "deduction",
            DEDUCTION_WELL_FORMED,
            ["{'apple': 3, 'pear': 1}, [('apple', 2), ('pear', 2), ('apple', 1), ('fig', 1)]"],
            '{"tuple":[["apple","apple"],1]}',
        ),
        (
            "deduction",
            DEDUCTION_SLOPPY,
            ["\"alpha, beta;; gamma's,  delta\", ';;'"],
            '{"dict":[["alpha, beta",11],["gamma\'s,  delta",15]]}',
        ),
    ],
)
async def test_valid_answers(pool, env_settings, sandbox, name, text, inputs, output):
    problem = env(name).parse_teacher(text)
    assert problem.inputs == inputs
    problem, verdict = await env(name).validate(problem, pool, env_settings, sandbox)
    assert verdict.valid, verdict
    assert problem.outputs == [output] and problem.visible_count is None


def test_sloppy_message_kept_only_as_prose():
    assert env("abduction").parse_teacher(ABDUCTION_SLOPPY).message == "Rotate the word left."
    text = ABDUCTION_SLOPPY.replace("Rotate the word left.", "def f(word): return word")
    assert env("abduction").parse_teacher(text).message == ""


@pytest.mark.parametrize("name", ["abduction", "deduction"])
def test_no_input_block_is_a_format_error(name):
    with pytest.raises(FormatError) as info:
        env(name).parse_teacher(ABDUCTION_WELL_FORMED.split("```input")[0])
    assert info.value.reason == reasons.FORMAT_ERROR


def single(code: str, *inputs: str) -> str:
    return f"```python\n{code}\n```\n" + "\n".join(f"```input\n{x}\n```" for x in inputs)


@pytest.mark.parametrize("name", ["abduction", "deduction"])
@pytest.mark.parametrize(
    "code, inputs, reason, fragment",
    [
        ("def f(x):\n    return x + 1", ("1", "2"), reasons.BAD_INPUTS, "expected 1 input, got 2"),
        ("def g(x):\n    return x\ndef f(x):\n    return g(x", ("1",), reasons.COMPILE_ERROR, "line"),
        (
            "raise ValueError('at import')\ndef f(x):\n    return x",
            ("1",),
            reasons.COMPILE_ERROR,
            "while running the module",
        ),
        ("import socket\ndef f(x):\n    return x", ("1",), reasons.FORBIDDEN, "socket"),
        ("def f(x):\n    return x['missing']", ("{'a': 1}",), reasons.EXECUTION_ERROR, "KeyError"),
        ("class Blob:\n    pass\n\ndef f(x):\n    return Blob()", ("1",), reasons.EXECUTION_ERROR, "cannot encode"),
        ("def f(x):\n    return 7 ** 20000", ("1",), reasons.OUTPUT_TOO_LARGE, ""),
        (
            "def f(x):\n    return list({'pear', 'fig', 'apple', 'kiwi', 'plum', 'lime', 'date', 'yuzu'})",
            ("1",),
            reasons.NONDETERMINISTIC,
            "",
        ),
    ],
)
async def test_validation_reasons(pool, env_settings, sandbox, name, code, inputs, reason, fragment):
    _, verdict = await env(name).validate(env(name).parse_teacher(single(code, *inputs)), pool, env_settings, sandbox)
    assert (verdict.valid, verdict.reason) == (False, reason), verdict
    assert fragment in verdict.detail


@pytest.mark.parametrize("name", ["abduction", "deduction"])
async def test_infra(infra_pool, env_settings, sandbox, name):
    _, verdict = await env(name).validate(
        env(name).parse_teacher(DEDUCTION_WELL_FORMED), infra_pool, env_settings, sandbox
    )
    assert verdict.reason == reasons.INFRA
