"""`synthgen sandbox [FILE|-]`: run jobs given as JSON lines, print one JSON result line per job, in order.

A job line:
    {"id": 7, "code": "def f(x):\\n    return x * 2\\n", "calls": ["f(1)", "f('a')"],
     "expected": ["2", null], "timeout_s": 2, "memory_mb": 512}
`code` and `calls` are required; `expected` holds Python literal reprs (or null for "no check"),
parsed with `ast`, never evaluated; `id` is echoed back as given. A result line:
    {"id": 7, "isolation": "bwrap", "calls": [{"status": "ok", "value": "2", "encoded": "2",
     "match": true, "error": null}, ...], "stdout": "", "stderr": ""}

Lines run as they arrive (several jobs in flight); each result is written and flushed as soon as
it is due, in input order, so a caller may wait for an answer before sending the next line. Few
results are held at once and each is capped (sandbox.results.Limits): memory stays flat. A reader
that goes away (`synthgen sandbox - | head -1`) ends the run quietly, exit code 0; a malformed line
stops it after the results of the lines before it: one line on stderr, exit code 2.
"""

from __future__ import annotations

import json
import math
import os
import queue
import signal
import sys
import threading
from typing import IO

from synthgen.errors import UserError
from synthgen.sandbox import values
from synthgen.sandbox.pool import SandboxPool
from synthgen.sandbox.results import Job
from synthgen.sandbox.settings import SandboxRunSettings, SandboxSettings
from synthgen.text import safe_text

_KEYS = {"id", "code", "calls", "expected", "timeout_s", "memory_mb"}


class BadJobLine(UserError, ValueError):
    """A job line that is not valid JSON or does not follow the job format."""


def parse_job(line: str, lineno: int, limits: SandboxSettings | None = None) -> tuple[object, Job]:
    """(id, Job) from one input line; BadJobLine with the line number on any problem."""

    def bad(why: str) -> BadJobLine:
        return BadJobLine(f"line {lineno}: {why}")

    try:
        obj = json.loads(line, parse_constant=_refuse_constant, parse_float=_finite_float)
    except ValueError as exc:
        raise bad(f"not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise bad("a job must be a JSON object")
    unknown = sorted(set(obj) - _KEYS)
    if unknown:
        raise bad(f"unknown field(s) {', '.join(unknown)}; a job has {', '.join(sorted(_KEYS))}")
    for key in ("code", "calls"):
        if key not in obj:
            raise bad(f"missing field {key!r}")
    calls, expected = obj["calls"], obj.get("expected")
    if not isinstance(obj["code"], str):
        raise bad("'code' must be a string")
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        raise bad("'calls' must be a list of strings")
    if expected is not None:
        if not isinstance(expected, list) or len(expected) != len(calls):
            raise bad(f"'expected' must be a list with one entry per call ({len(calls)})")
        encoded = []
        for i, text in enumerate(expected):
            if text is not None and not isinstance(text, str):
                raise bad(f"expected[{i}] must be a Python literal as a string, or null")
            try:
                encoded.append(None if text is None else values.from_literal(text))
            except ValueError as exc:
                raise bad(f"expected[{i}]: {exc}") from None
        expected = tuple(encoded)
    limits = limits or SandboxSettings()
    timeout_s, memory_mb = obj.get("timeout_s", limits.timeout_s), obj.get("memory_mb", limits.memory_mb)
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
        raise bad("'timeout_s' must be a number")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int):
        raise bad("'memory_mb' must be an integer")
    try:
        job = Job(obj["code"], tuple(calls), expected, timeout_s=float(timeout_s), memory_mb=memory_mb)
    except ValueError as exc:
        raise bad(str(exc)) from None
    return obj.get("id"), job


def _refuse_constant(name: str):
    """NaN and Infinity are not JSON (Python's parser takes them): refused, never echoed back."""
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses as inf, which JSON cannot write back
        raise ValueError(f"{text[:40]} is out of range for a JSON number")
    return value


def _result_line(job_id, result) -> str:
    out = {"id": job_id, **result.to_dict()}
    # The id comes from the input as given: a lone surrogate in it becomes its JSON escape again.
    return safe_text(json.dumps(out, ensure_ascii=False))


def run(settings: SandboxRunSettings) -> int:
    """Run the jobs of settings.file (- for standard input) to standard output."""
    if settings.file == "-":
        return run_cli(sys.stdin, sys.stdout, settings)
    try:
        stream = open(settings.file, encoding="utf-8")  # noqa: SIM115 (opened apart to report it in one line)
    except OSError as exc:
        raise UserError(f"cannot read {settings.file}: {exc.strerror}") from None
    with stream:
        return run_cli(stream, sys.stdout, settings)


def run_cli(input_stream: IO[str], output_stream: IO[str], settings: SandboxRunSettings | None = None) -> int:
    """Run every job line of `input_stream`; write result lines to `output_stream`. Returns 0.

    Raises BadJobLine (a UserError) for malformed input, after writing the results of the lines
    before it; SandboxUnavailable when no isolation level is usable. A second thread writes the
    results. A closed output (BrokenPipeError) stops the run and returns 0.
    """
    settings = settings or SandboxRunSettings()
    pool = SandboxPool(settings.workers, isolation=settings.isolation, allow_unsafe=settings.allow_unsafe)
    restore = _sigterm_as_exit()
    # (id, future) in input order; None ends. Small: a finished result waits here until written.
    due: queue.Queue = queue.Queue(maxsize=2 * pool.workers)
    failed: list[BaseException] = []

    def writer() -> None:
        while (item := due.get()) is not None:
            if failed:
                continue  # keep draining so the reader never blocks on a full queue
            try:
                output_stream.write(_result_line(item[0], item[1].result()) + "\n")
                output_stream.flush()
            except BaseException as exc:  # noqa: BLE001 (handed to the reading thread)
                failed.append(exc)

    thread = threading.Thread(target=writer, name="sandbox-cli-writer", daemon=True)
    thread.start()
    try:
        for lineno, line in enumerate(input_stream, 1):
            if failed:
                break
            if line.strip():
                job_id, job = parse_job(line, lineno, settings)
                due.put((job_id, pool.submit(job)))
    except BadJobLine:
        raise  # the lines before it still get their results (below)
    except BaseException:
        pool.close()  # interrupted: stop now; what was running ends as infra
        raise
    finally:
        due.put(None)
        thread.join()
        pool.close()
        restore()
    if failed and isinstance(failed[0], BrokenPipeError):
        _discard_further_output(output_stream)
        return 0
    if failed:
        raise failed[0]
    return 0


def _discard_further_output(stream: IO[str]) -> None:
    """The reader is gone: point the stream's descriptor at /dev/null, so that the interpreter's
    last flush at exit does not fail (and report) a second time."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _sigterm_as_exit():
    """While the CLI runs, SIGTERM unwinds like Ctrl+C so the pool closes its workers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    """`python -m synthgen.cli.sandbox ARGS` is `synthgen sandbox ARGS`: the same flags, errors and exit codes."""
    from synthgen.cli.app import app, run_guarded

    return run_guarded(app, ["sandbox", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
