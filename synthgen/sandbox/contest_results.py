"""Contest-tests jobs in the host: what the child is sent and what comes back (results.contest_job builds one).

    job = contest_job(program, ["1 2\\n", "3 4\\n"], mode="stdin", test_timeout_s=6.0, memory_mb=512)
    result = pool.run_sync(job)
    result.calls[i].status, result.calls[i].value      # test i: ok, and everything it printed
    job = contest_job(code, [values.encode([[1, 2], 3])], mode="call", entry="twoSum", ...)
    result.calls[0].encoded                            # the returned value's encoding

One child compiles the program once and runs the tests in order in one process
(synthgen/sandbox/contest_runner.py says how, with LiveCodeBench's semantics). `result.calls`
holds one verdict per test that ran: the run stops after the first test that did not end
`ok`, so a shorter list means the last one failed. Judging answers stays with the caller
(synthgen.envs.contest), in the host: expected outputs are never sent.

Each test has its own limit: `test_timeout_s` of CPU time, and a wall clock of WALL_FACTOR times
that plus WALL_EXTRA_S (a program that sleeps or blocks), from which the time the process waited
for a core is taken out: a loaded machine gives the same verdicts. A test cut by the wall clock
says so in its error; the job as a whole has a generous backstop wall clock (`job_timeout`) for
code that never returns to Python, and RLIMIT_CPU kills code that spins in C past its limit.
"""

from __future__ import annotations

import signal

from synthgen.sandbox import values
from synthgen.sandbox.verdicts import CallVerdict, Status, parse_records
from synthgen.text import safe_text

MODES = ("stdin", "call", "expr")
WALL_FACTOR, WALL_EXTRA_S = 1.5, 0.5
BACKSTOP_FACTOR = 10.0  # the whole job's wall clock, over its tests' own (which exclude waiting for a core)
_TEST_STATUSES = frozenset({"ok", "exception", "memory", "output_too_large", "timeout"})


def test_wall_s(test_timeout_s: float) -> float:
    return WALL_FACTOR * test_timeout_s + WALL_EXTRA_S


def job_timeout(tests: int, test_timeout_s: float) -> float:
    """The whole job's backstop: every test and the load at their wall clocks, within the sandbox's 600 s."""
    return min(600.0, BACKSTOP_FACTOR * (tests + 1) * test_wall_s(test_timeout_s) + 10.0)


def check_tests_job(job, max_tests: int, max_chars: int) -> None:
    """ValueError unless `job` is a well-formed contest-tests job."""
    if job.mode not in MODES:
        raise ValueError(f"a contest-tests job's mode is one of {', '.join(MODES)}, not {job.mode!r}")
    if isinstance(job.tests, str) or not all(isinstance(t, str) for t in job.tests):
        raise ValueError("tests must be a sequence of str")
    if not job.tests or len(job.tests) > max_tests:
        raise ValueError(f"a contest-tests job has 1 to {max_tests} tests")
    if sum(len(t) for t in job.tests) > max_chars:
        raise ValueError(f"the tests together are over {max_chars} characters")
    if job.calls or job.stdin is not None or job.expected is not None:
        raise ValueError("a contest-tests job takes no calls, stdin or expected values")
    if job.mode == "call" and not job.entry.isidentifier():
        raise ValueError(f"a call-based job needs the function's name, got {job.entry!r}")
    if not (isinstance(job.test_timeout_s, (int, float)) and 0 < job.test_timeout_s <= 600):
        raise ValueError("test_timeout_s must be a number in (0, 600]")


def payload_fields(job, limits) -> dict:
    """What the child needs beyond a plain job's fields (expected outputs are not among them)."""
    return {
        "tests": list(job.tests),
        "mode": job.mode,
        "entry": job.entry,
        "preamble": job.preamble,
        "test_cpu": float(job.test_timeout_s),
        "test_wall": test_wall_s(job.test_timeout_s),
        "val_cap": limits.max_test_output_bytes,
        "out_keep": limits.keep_output_bytes,
        "out_limit": limits.max_output_bytes,
    }


def test_verdicts(job, header: dict, records: list[bytes], limits, unfinished: CallVerdict) -> list[CallVerdict]:
    """One verdict per test that ran, from the child's records (and, past them, how it ended:
    `unfinished` is what a plain job would get for a call that never reported)."""
    verdicts: list[CallVerdict] = []
    parsed = parse_records([r for r in records if r != b'["E"]'])
    ended = b'["E"]' in records
    for i, rec in enumerate(parsed):
        verdict = _verdict(job, i, rec, limits)
        if verdict is None:
            return verdicts + [CallVerdict(Status.EXCEPTION, error="the job corrupted its result stream")]
        verdicts.append(verdict)
        if verdict.status is not Status.OK:
            return verdicts
    if len(verdicts) < len(job.tests):
        if ended:
            verdicts.append(CallVerdict(Status.KILLED, error="the job ended its result stream before its tests"))
        elif header["end"] == "signal" and header.get("signal") == signal.SIGXCPU:
            verdicts.append(CallVerdict(Status.TIMEOUT, error="CPU-time limit of the test reached"))
        else:
            verdicts.append(unfinished)
    return verdicts


def _verdict(job, i: int, rec, limits) -> CallVerdict | None:
    ok_shape = type(rec) is list and len(rec) == 6 and rec[0] == i and type(rec[0]) is int
    if not ok_shape or rec[1] not in _TEST_STATUSES:
        return None
    status, text, error = rec[1], rec[2], rec[3]
    cpu, wall = (float(x) if type(x) in (int, float) else None for x in rec[4:6])
    if (text is not None and type(text) is not str) or (error is not None and type(error) is not str):
        return None
    error = None if error is None else safe_text(error)
    if status != "ok":
        return CallVerdict(Status(status), error=error, cpu_s=cpu, wall_s=wall)
    if text is not None and len(text) > limits.max_test_output_bytes * 2:
        return CallVerdict(Status.OUTPUT_TOO_LARGE, error="answer over the size limit", cpu_s=cpu, wall_s=wall)
    if job.mode == "stdin":
        if text is None:
            return None
        return CallVerdict(Status.OK, value=safe_text(text), cpu_s=cpu, wall_s=wall)
    if text is None:
        return CallVerdict(Status.OK, cpu_s=cpu, wall_s=wall) if job.mode == "expr" else None
    try:
        shown = values.display(values.decode(text))
    except (ValueError, TypeError, RecursionError):
        return CallVerdict(Status.EXCEPTION, error="the job returned a value that is not a valid encoding")
    return CallVerdict(Status.OK, safe_text(shown), text, None, None, cpu, wall)
