"""Running a contest solution on its tests in the sandbox, and judging what it printed or returned.

All of a sample's tests are one contest-tests job (synthgen.sandbox.contest_results): the
program is compiled once and its tests run in order in one process, with LiveCodeBench's
semantics (its preamble of imports, stdin programs wrapped in a function called once per test,
call-based tests on one `Solution()` instance or the module-level function, 50000-digit ints,
threads), each test with its own limit of `timeout_s` CPU seconds; the run stops at the first
test that fails there. A sample cut by a wall clock (not by its CPU time, so possibly by a busy
machine) is run once more before its timeout counts.

Judging follows LiveCodeBench's rules, in the host, never inside the sandbox:
  * stdout: the whole text and each line are stripped of surrounding whitespace; the line counts
    must match; a line matches when equal, or when both parse as the same whitespace-separated
    decimal numbers (so `0.50` matches `0.5`, but `1e-9` tolerance is not granted).
  * return values: a tuple counts as the list of its items, then Python's `==` decides (so 2 and
    2.0 match, and a Fraction equals the float it is exactly, as they do there).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation


@dataclass
class TestOutcome:
    """What running one answer on a problem's tests found."""

    verdicts: list  # sandbox CallVerdicts of the tests that ran, in test order
    passed: bool  # every test passed
    infra: str = ""  # a sandbox infrastructure failure (the answer is then not scored)
    detail: str = ""  # the first failure, for people
    timed_out: bool = False  # the first failure was a time limit
    cut_by_wall_clock: bool = False  # ... its wall clock, not its CPU time


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


def job_tests(inputs: list[str], call: str | None) -> tuple[str, list[str]]:
    """(mode, tests) of the sandbox job: stdin texts, or each call's arguments as an encoded list."""
    from synthgen.sandbox import values

    if call is None:
        return "stdin", [stdin_of(x) for x in inputs]
    return "call", [values.from_literal(f"[{x}]") for x in inputs]


async def run_tests(program: str, inputs: list[str], outputs: list[str], call: str | None, pool, sandbox):
    """Run `program` on every test (see the module docstring); `call` is the call-based entry
    (`Solution().name` or `name`: the method or function name), None for stdin/stdout tests."""
    from synthgen.sandbox import contest_job

    mode, tests = job_tests(inputs, call)
    job = contest_job(
        program,
        tests,
        mode=mode,
        entry="" if call is None else call.rsplit(".", 1)[-1],
        test_timeout_s=float(sandbox.timeout_s),
        memory_mb=int(sandbox.memory_mb),
    )
    outcome = judge((await pool.run(job)).calls, outputs, mode)
    if outcome.cut_by_wall_clock:  # maybe only a busy machine: once more before it counts
        outcome = judge((await pool.run(job)).calls, outputs, mode)
    return outcome


def judge(verdicts: list, outputs: list[str], mode: str) -> TestOutcome:
    """The outcome of the tests that ran: the first failure decides, in test order."""
    for i, verdict in enumerate(verdicts):
        status = str(verdict.status)
        if status == "infra":
            return TestOutcome(verdicts, False, infra=verdict.error or "sandbox failure")
        if status != "ok":
            outcome = TestOutcome(
                verdicts[: i + 1], False, detail=f"test {i + 1}: {status}: {(verdict.error or '')[:160]}"
            )
            outcome.timed_out = status == "timeout"
            outcome.cut_by_wall_clock = outcome.timed_out and "wall-clock" in (verdict.error or "")
            return outcome
        right = (
            same_stdout(verdict.value or "", text_of(outputs[i]))
            if mode == "stdin"
            else same_value(verdict.encoded, outputs[i])
        )
        if not right:  # (the tests after it ran too: the sandbox never knows what is right)
            return TestOutcome(verdicts[: i + 1], False, detail=f"test {i + 1}: wrong answer")
    if len(verdicts) < len(outputs):
        return TestOutcome(verdicts, False, infra="the sandbox reported fewer tests than it ran")
    return TestOutcome(verdicts, bool(outputs))


def text_of(encoded: str) -> str:
    """An expected output as the text a program prints (a non-str value as its str())."""
    from synthgen.sandbox import values

    value = values.decode(encoded)
    return value if isinstance(value, str) else str(value)
