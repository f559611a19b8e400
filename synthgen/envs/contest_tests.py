"""Running a contest solution on its tests in the sandbox, and judging what it printed or returned.

A stdin/stdout test is a program job (`synthgen.sandbox.Job.program`): the solution runs as a
script with the test's input on stdin, under the per-test wall clock (`sandbox.timeout_s`). A
call-based test is a call (`Solution().name(args)` or `name(args)`) in a call job. Tests run in
order in growing batches (1, 1, 2, 4, ...; a batch's tests run concurrently) and stop at the
first failed test: a wrong answer already decides the reward, so a solution that times out
does not hold the sandbox for every remaining test.

Judging follows LiveCodeBench's rules, in the host, never inside the sandbox:
  * stdout: the whole text and each line are stripped of surrounding whitespace; the line counts
    must match; a line matches when equal, or when both parse as the same whitespace-separated
    decimal numbers (so `0.50` matches `0.5`, but `1e-9` tolerance is not granted).
  * return values: a tuple counts as the list of its items, then Python's `==` decides (so 2 and
    2.0 match, as they do there).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

# Imports every solution gets for free, on one line so that error line numbers move by one only;
# LiveCodeBench's harness gives solutions the same names (LeetCode starter code uses `List` unimported).
PREAMBLE = (
    "import sys, math, heapq, bisect, itertools, functools, collections, string, re, random, statistics, operator; "
    "from typing import *; from collections import *; from heapq import *; from bisect import *; "
    "from itertools import *; from functools import *; from math import *; sys.setrecursionlimit(60000)\n"
)
MAX_JOB_S = 600.0  # the sandbox's longest job


@dataclass
class TestOutcome:
    """What running one answer on a problem's tests found."""

    verdicts: list  # sandbox CallVerdicts of the tests that ran, in test order
    passed: bool  # every test passed
    infra: str = ""  # a sandbox infrastructure failure (the answer is then not scored)
    detail: str = ""  # the first failure, for people


def stdin_of(argument_list: str) -> str:
    """A stdin/stdout test's input: its argument list is one string literal (parsed, never run)."""
    from synthgen.sandbox import values

    text = values.decode(values.from_literal(argument_list))
    if not isinstance(text, str):
        raise ValueError("a stdin/stdout test input must be one string literal")
    return text


def same_stdout(got: str, want: str) -> bool:
    """LiveCodeBench's stdout comparison (see the module docstring)."""
    got_lines = [line.strip() for line in got.strip().split("\n")]
    want_lines = [line.strip() for line in want.strip().split("\n")]
    if len(got_lines) != len(want_lines):
        return False
    return all(a == b or _same_numbers(a, b) for a, b in zip(got_lines, want_lines))


def _same_numbers(a: str, b: str) -> bool:
    try:
        left = [Decimal(x) for x in a.split()]
        right = [Decimal(x) for x in b.split()]
    except (InvalidOperation, ValueError):
        return False
    return left == right


def same_value(got_encoded: str | None, want_encoded: str) -> bool:
    """LiveCodeBench's comparison of a returned value with the expected one (both encodings)."""
    from synthgen.sandbox import values

    if got_encoded is None:
        return False
    try:
        got, want = values.decode(got_encoded), values.decode(want_encoded)
    except (ValueError, TypeError, RecursionError):
        return False
    if isinstance(got, tuple):
        got = list(got)
    try:
        return bool(got == want)
    except Exception:  # noqa: BLE001 (decoded plain values compare; anything odd is a mismatch)
        return False


def batches(n: int) -> list[range]:
    """Test index ranges run one after another: 1, 1, 2, 4, 8, ... tests."""
    out, start, size = [], 0, 1
    while start < n:
        out.append(range(start, min(n, start + size)))
        start += size
        size = size if len(out) == 1 else size * 2
    return out


async def run_tests(program: str, inputs: list[str], outputs: list[str], call: str | None, pool, sandbox):
    """Run `program` on every test (see the module docstring); `call` is the call-based entry
    (`Solution().name` or `name`), None for stdin/stdout tests."""
    from synthgen.sandbox import Job

    program = PREAMBLE + program
    per_test = float(sandbox.timeout_s)
    verdicts: list = []
    for chunk in batches(len(inputs)):
        if call is None:
            jobs = [
                Job.program(program, stdin_of(inputs[i]), timeout_s=per_test, memory_mb=sandbox.memory_mb)
                for i in chunk
            ]
            results = await asyncio.gather(*(pool.run(job) for job in jobs))
            found = [result.calls[0] for result in results]
        else:
            calls = tuple(f"{call}({inputs[i]})" for i in chunk)
            timeout = min(MAX_JOB_S, per_test * len(calls))
            result = await pool.run(Job(program, calls, timeout_s=timeout, memory_mb=sandbox.memory_mb))
            found = list(result.calls)
        for i, verdict in zip(chunk, found):
            verdicts.append(verdict)
            status = str(verdict.status)
            if status == "infra":
                return TestOutcome(verdicts, False, infra=verdict.error or "sandbox failure")
            if status != "ok":
                return TestOutcome(verdicts, False, detail=f"test {i + 1}: {status}: {(verdict.error or '')[:160]}")
            right = (
                same_stdout(verdict.value or "", _text(outputs[i]))
                if call is None
                else same_value(verdict.encoded, outputs[i])
            )
            if not right:
                return TestOutcome(verdicts, False, detail=f"test {i + 1}: wrong answer")
    return TestOutcome(verdicts, bool(inputs))


def _text(encoded: str) -> str:
    from synthgen.sandbox import values

    value = values.decode(encoded)
    return value if isinstance(value, str) else str(value)
