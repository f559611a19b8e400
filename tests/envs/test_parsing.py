"""Parsing of raw completions (fenced blocks, answer sets, argument lists) and the static code checks."""

from __future__ import annotations

import pytest

from synthgen.envs import checks, parsing, reasons
from synthgen.envs.parsing import ArgsError, FormatError, canonical_args, fenced_blocks, teacher_answer

# -- fenced blocks ------------------------------------------------------------------------------


def test_blocks_with_tags_prose_and_crlf():
    text = "Intro\r\n```Python\r\ndef f(x):\r\n    return x\r\n```\r\nthen\r\n```input\r\n3\r\n```\r\n"
    blocks = fenced_blocks(text)
    assert [(b.lang, b.text, b.closed) for b in blocks] == [
        ("python", "def f(x):\n    return x", True),
        ("input", "3", True),
    ]


def test_one_line_block_and_forgotten_fence():
    blocks = fenced_blocks("```input 'a, b', 2```\n```python\ndef f(s, k):\n    return s\n```input\n1, 2\n```")
    assert [(b.lang, b.text) for b in blocks] == [
        ("input", "'a, b', 2"),
        ("python", "def f(s, k):\n    return s"),
        ("input", "1, 2"),
    ]


def test_unclosed_block_is_marked():
    (block,) = fenced_blocks("```python\ndef f(x):\n    return")
    assert not block.closed


def test_answer_region_prefers_after_think_and_last_answer_tag():
    text = "<think>```python\ndef f(): pass\n```</think><answer>draft</answer> <answer>final</answer>"
    assert parsing.answer_region(text) == "final"


# -- teacher answer sets ------------------------------------------------------------------------


def test_last_complete_set_wins_over_drafts():
    text = (
        "```python\ndef f(x):\n    return 1\n```\n```input\n1\n```\n"  # draft: no message
        "Better:\n```python\ndef f(x):\n    return x * 2\n```\n```input\n2\n```\n```message\ndouble it\n```\n"
    )
    answer = teacher_answer(text, need_message=True)
    assert "x * 2" in answer.code and answer.input_blocks == ["2"] and answer.message == "double it"


def test_incomplete_last_set_falls_back_to_an_earlier_complete_one():
    text = "```python\ndef f(x):\n    return 1\n```\n```input\n1\n```\n```python\ndef f(x):\n    return"
    assert "return 1" in teacher_answer(text).code


def test_message_before_code_is_found():
    text = "```message\nhint\n```\n```python\ndef f(x):\n    return x\n```\n```input\n1\n```"
    assert teacher_answer(text, need_message=True).message == "hint"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("no blocks at all", "no fenced"),
        ("```python\nprint(1)\n```\n```input\n1\n```", "defines a function f"),
        ("```python\ndef f(x):\n    return x\n```", "no ```input"),
        ("```python\ndef f(x):\n    return x\n```\n```input\n1\n```", "no ```message"),
        ("```python\ndef f(x):\n    return x", "not closed"),
    ],
)
def test_teacher_format_errors(text, fragment):
    with pytest.raises(FormatError) as info:
        teacher_answer(text, need_message=True)
    assert info.value.reason == reasons.FORMAT_ERROR and fragment in info.value.detail


def test_fuzzing_helpers_required():
    with pytest.raises(FormatError, match="test_f"):
        teacher_answer(
            "```python\ndef f(x):\n    return x\ndef pre_test_f(x):\n    return True\n```\n```input\n1\n```",
            helper_names=("pre_test_f", "test_f"),
        )


def test_split_functions_and_main_guard():
    code = (
        "import math\n\ndef f(x):\n    return x\n\ndef test_f(x):\n    assert f(x) == x\n\n"
        "if __name__ == '__main__':\n    print(f(2))\n"
    )
    rest, taken = parsing.split_functions(parsing.strip_main_guard(code), ("test_f",))
    assert "__main__" not in rest and "def f" in rest and taken["test_f"].startswith("def test_f")


# -- argument lists -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("3, [1, 2]", "3, [1, 2]"),
        ("s='a,b', k=2", "s='a,b', k=2"),
        ('"it\'s, here", {"k": (1, 2)}', "\"it's, here\", {'k': (1, 2)}"),
        ("[1,\n 2,\n 3],\n  4  # the limit", "[1, 2, 3], 4"),
        ("f(5, 'x')", "5, 'x'"),
        (
            "-3, 1e3, None, True, b'ab', {1, 2}, frozenset({3}), set()",
            "-3, 1000.0, None, True, b'ab', {1, 2}, frozenset({3}), set()",
        ),
        ("float('nan')", "float('nan')"),
    ],
)
def test_canonical_args(text, canonical):
    assert canonical_args(text) == canonical


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x",
        "1 + 2",
        "__import__('os').system('id')",
        "*[1, 2]",
        "**{'a': 1}",
        "open('/etc/passwd')",
        "[i for i in range(3)]",
        "lambda: 1",
        "1, k=2, k=3",
        "nan",
        "(1, 2",
    ],
)
def test_non_literal_args_rejected(text):
    with pytest.raises(ArgsError):
        canonical_args(text)


def test_several_inputs_in_one_block_one_per_line():
    assert parsing.input_list("[1, 2], 3\n[4], 5\n") == ["[1, 2], 3", "[4], 5"]


def test_malformed_teacher_input_is_bad_inputs():
    with pytest.raises(FormatError) as info:
        parsing.teacher_inputs(["1", "y + 1"])
    assert info.value.reason == reasons.BAD_INPUTS


def test_input_answer_forms():
    assert parsing.input_answer("So:\n```input\n'a', 2\n```") == "'a', 2"
    assert parsing.input_answer("```python\nf([3, 1])\n```") == "[3, 1]"
    with pytest.raises(FormatError):
        parsing.input_answer("the answer is 3")


# -- static checks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "import os\ndef f(x):\n    return x",
        "import sys\ndef f(x):\n    return x",
        "import subprocess\ndef f(x):\n    return x",
        "from socket import socket\ndef f(x):\n    return x",
        "import threading\ndef f(x):\n    return x",
        "import multiprocessing.pool\ndef f(x):\n    return x",
        "import time\ndef f(x):\n    return time.time()",
        "import importlib\ndef f(x):\n    return x",
        "def f(x):\n    return __import__('os').getcwd()",
        "def f(x):\n    return eval(x)",
        "def f(x):\n    exec('y = 1')\n    return x",
        "def f(x):\n    return compile(x, 'a', 'eval')",
        "def f(x):\n    return open(x).read()",
        "def f(x):\n    return input()",
        "import datetime\ndef f(x):\n    return datetime.datetime.now().year",
        "from datetime import date\ndef f(x):\n    return date.today()",
        "import random\ndef f(x):\n    return random.randint(0, x)",
        "from random import choice\ndef f(x):\n    return choice(x)",
        "def f(x):\n    return ().__class__.__bases__[0].__subclasses__()",
        "from . import thing\ndef f(x):\n    return x",
    ],
)
def test_forbidden_uses(code):
    assert checks.forbidden_uses(code)


@pytest.mark.parametrize(
    "code",
    [
        "import math, itertools, functools, collections, heapq, bisect, re, string\ndef f(x):\n    return math.sqrt(x)",
        "from collections import Counter\nfrom fractions import Fraction\ndef f(x):\n    return Counter(x)",
        "import random\ndef f(x):\n    rng = random.Random(42)\n    return rng.randint(0, x)",
        "import random\ndef f(x):\n    random.seed(7)\n    return random.random()",
        "import datetime\ndef f(y):\n    return datetime.date(y, 1, 1).weekday()",
    ],
)
def test_allowed_code(code):
    assert checks.forbidden_uses(code) == []


def test_compile_problem():
    assert checks.compile_problem("def f(x):\n    return x", ("f",)) is None
    assert "line 1" in checks.compile_problem("def f(x)\n    return x", ("f",))
    assert "test_f" in checks.compile_problem("def f(x):\n    return x", ("f", "test_f"))
    assert "async" in checks.compile_problem("async def f(x):\n    return x", ("f",))


# -- what a real student writes (SmolLM2-135M-Instruct on vLLM, generate --keep-attempts all) ---------
# The texts below are its own answers, cut to the part that matters; each comment says what it did.

# A program, then what it "will output" in an untagged block: the ```python block is the answer.
REAL_PROGRAM_THEN_OUTPUT = (
    "```python\ndef main():\n    N = int(input())\n    print(N)\n\nmain()\n```\n\n"
    "This will output:\n```\nSum of 2 integers: 7\nSum of 3 integers: 14\n```"
)
# A program with its function's body left open at the end (the model stopped there, not cut).
REAL_UNCLOSED_FINAL = "Here is a function:\n\n```python\ndef f(numbers):\n    return sorted(numbers)\n"
# The same, with prose after the code inside the open block: where the code ends reads two ways.
REAL_UNCLOSED_WITH_PROSE = "```python\ndef f(n):\n    return n + 1\n\nThis function adds one to n."
# A ```output block of several annotated values (deduction).
REAL_SEVERAL_VALUES = (
    "Here is the output:\n```output\n[1, 'Ahhaa'] (integer repr)\n[2, '(\\')']\n"
    "[3, ' (\\')']['abc'] (list repr)\n[[1, 2], [3, 4]]\n```\n\nThis is how the output is expected"
)
# Prose only (abduction), a ```bash block (abduction), a code block where an input was asked (fuzzing).
REAL_PROSE_ONLY = "Your function is correct and correct for `f(` with integer inputs. I just added the optional `-1`."
REAL_BASH_BLOCK = "Here's one possible sequence of shell commands:\n\n```bash\nd1a \n```\n\nThis is a shell command."
REAL_CODE_NOT_INPUT = '```python\ndef f(s: str) -> int:\n    return s.count("(", 2) - s.count(")")\n```'
# No ```input block; the last untagged block is what the model says its code prints.
REAL_OUTPUT_AS_INPUT = (
    "Here is a function:\n```python\ndef f(g):\n    return g\n```\n\nWhen you run this, it will print:\n"
    "```\nprint(evalf'f(g(g(a)*g(b)))') [(True, 2.)) 2 should be True.\n```"
)


def test_real_program_followed_by_its_printed_output_reads_the_program():
    from synthgen.envs import get_env

    program = get_env("contest").parse_student(REAL_PROGRAM_THEN_OUTPUT)
    assert program.startswith("def main():") and "Sum of" not in program
    # An untagged block is still read when no block is tagged python.
    assert get_env("contest").parse_student("```\nprint(1)\n```") == "print(1)\n"


def test_real_unclosed_final_block_is_read_only_when_it_parses_whole():
    from synthgen.envs import get_env

    induction = get_env("induction")
    assert induction.parse_student(REAL_UNCLOSED_FINAL).strip() == "def f(numbers):\n    return sorted(numbers)"
    with pytest.raises(FormatError) as info:
        induction.parse_student(REAL_UNCLOSED_WITH_PROSE)
    assert info.value.detail == (
        "no closed ```python block with a function f; the answer has an unclosed ```python block"
    )
    assert parsing.input_answer("So:\n```input\n'a', 2\n") == "'a', 2"


def test_real_block_of_several_values_is_a_format_failure_not_a_guess():
    from synthgen.envs import get_env

    deduction = get_env("deduction")
    with pytest.raises(FormatError) as info:
        deduction.parse_student(REAL_SEVERAL_VALUES)
    assert info.value.detail.startswith(
        "the ```output block holds 2 lines that each read as a value (one is asked for)"
    )
    # Prose before one value is still the value; an empty block is said to be empty.
    assert deduction.parse_student("```output\nThe result is:\n[[1, 2], [3, 4]]\n```") == "[[1, 2], [3, 4]]"
    with pytest.raises(FormatError, match="the ```output block is empty"):
        deduction.parse_student("Here is the output:\n```output\n```")


@pytest.mark.parametrize(
    "text, detail",
    [
        (
            REAL_PROSE_ONLY,
            "no closed ```input block with the arguments; the answer has no fenced block at all (prose only)",
        ),
        (REAL_BASH_BLOCK, "no closed ```input block with the arguments; the answer has a ```bash block"),
        (REAL_CODE_NOT_INPUT, "no closed ```input block with the arguments; the answer has a ```python block"),
        (
            REAL_OUTPUT_AS_INPUT,
            "no ```input block, and the last untagged ``` block is not a list of literal arguments "
            "(not a Python argument list: closing parenthesis ')' does not match opening parenthesis '['): "
            "print(evalf'f(g(g(a)*g(b)))') [(True, 2.)) 2 should be True.",
        ),
    ],
)
def test_real_input_failures_say_what_the_answer_holds(text, detail):
    with pytest.raises(FormatError) as info:
        parsing.input_answer(text)
    assert info.value.reason == reasons.FORMAT_ERROR and info.value.detail == detail


def test_describe_blocks_counts_kinds_as_written():
    text = "```python\na = 1\n```\n```\nx\n```\n```\ny\n```\n```input\n1"
    assert parsing.describe_blocks(text) == ("a ```python block, 2 untagged ``` blocks and an unclosed ```input block")
    assert parsing.describe_blocks("") == "nothing (an empty answer)"
