"""What one call, program or test of a sandbox job came to, read off the child's result records.

Everything the child wrote is untrusted: a record that is not well-formed for its place is the
job's fault ("the job corrupted its result stream"), and nothing it writes may raise here. Values
are decoded without evaluation and compared against expected values the child never saw; every
text that leaves here has passed `safe_text`.
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from enum import Enum

from synthgen.sandbox import values
from synthgen.text import safe_text

END = b'["E"]'  # the child's last record: every call or test it ran has reported


class Status(str, Enum):
    OK = "ok"
    EXCEPTION = "exception"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    OUTPUT_TOO_LARGE = "output_too_large"
    KILLED = "killed"
    INFRA = "infra"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class CallVerdict:
    status: Status
    value: str | None = None  # repr of the returned value, for people
    encoded: str | None = None  # canonical encoding (the gold-value form)
    match: bool | None = None  # only when an expected value was given and status is ok
    error: str | None = None
    cpu_s: float | None = None  # a contest test's CPU and wall time as the child measured them
    wall_s: float | None = None

    @property
    def passed(self) -> bool:
        return self.status is Status.OK and self.match is True

    def to_dict(self) -> dict:
        return {
            "status": self.status.value,
            "value": self.value,
            "encoded": self.encoded,
            "match": self.match,
            "error": self.error,
        }


CORRUPTED = CallVerdict(Status.EXCEPTION, error="the job corrupted its result stream")
_CALL_STATUSES = frozenset({"ok", "exception", "memory", "output_too_large"})
_TEST_STATUSES = _CALL_STATUSES | {"timeout"}


def _parse(raw: bytes, i: int, statuses: frozenset, width: int) -> tuple | None:
    """(status, text, error, cpu, wall) of a record that is well-formed for run `i`, else None."""
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if type(rec) is not list or len(rec) != width or type(rec[0]) is not int or rec[0] != i:
        return None
    status, text, error = rec[1:4]
    if type(status) is not str or status not in statuses:
        return None
    if not (text is None or type(text) is str) or not (error is None or type(error) is str):
        return None
    cpu, wall = (float(x) if type(x) in (int, float) else None for x in (rec + [None, None])[4:6])
    return status, text, None if error is None else safe_text(error), cpu, wall


def _returned(text: str, expected=None, cpu=None, wall=None) -> CallVerdict:
    """The verdict of a returned value's encoding; `match` when a normalized expected value is given."""
    try:
        value = values.decode(text)
        match = None if expected is None else values.normalize(value) == expected
    except (ValueError, TypeError, RecursionError):
        return CallVerdict(Status.EXCEPTION, error="the job returned a value that is not a valid encoding")
    return CallVerdict(Status.OK, safe_text(values.display(value)), text, match, None, cpu, wall)


def call_verdicts(job, records: list[bytes], limits, unfinished: CallVerdict) -> list[CallVerdict]:
    """One verdict per call; calls without a record get `unfinished` (how the child ended), or,
    past a record that was not well-formed, CORRUPTED."""
    verdicts: list[CallVerdict] = []
    for i, raw in enumerate(records[: len(job.calls)]):
        rec = _parse(raw, i, _CALL_STATUSES, 4)
        if rec is None or (rec[1] is not None) != (rec[0] == "ok"):  # a value if and only if ok
            break
        status, text, error = rec[:3]
        if status != "ok":
            verdicts.append(CallVerdict(Status(status), error=error))
        elif len(text) > limits.max_value_bytes:
            error = f"value encoding over {limits.max_value_bytes} bytes"
            verdicts.append(CallVerdict(Status.OUTPUT_TOO_LARGE, error=error))
        else:
            verdicts.append(_returned(text, job._expected_forms[i] if job.expected is not None else None))
    filler = CORRUPTED if len(records) > len(verdicts) else unfinished
    return verdicts + [filler] * (len(job.calls) - len(verdicts))


def program_verdict(header: dict, records: list[bytes], out_blob: bytes, limits, unfinished) -> CallVerdict:
    """The one verdict of a program job: how the child said the program ended, and its stdout as
    the zygote captured it (from outside the child, so the program cannot misreport it). A
    program that exited with status 0 before its record (`os._exit(0)`) finished too."""
    if records:
        rec = _parse(records[0], 0, _CALL_STATUSES, 4)
        if rec is None or rec[1] is not None:
            return CORRUPTED
        if rec[0] != "ok":
            return CallVerdict(Status(rec[0]), error=rec[2])
    elif not (header["end"] == "exit" and header.get("code") == 0):
        return unfinished
    total = int(header.get("out_total") or 0)
    if total > limits.max_value_bytes or total > len(out_blob):
        return CallVerdict(
            Status.OUTPUT_TOO_LARGE, error=f"printed {total} bytes; the limit is {limits.max_value_bytes}"
        )
    return CallVerdict(Status.OK, value=out_blob.decode("utf-8", "replace"))


def test_verdicts(job, header: dict, records: list[bytes], limits, unfinished: CallVerdict) -> list[CallVerdict]:
    """One verdict per contest test that ran: the run stops at the first test not ok, and the
    test that was running when the child ended gets a verdict from how it ended."""
    verdicts: list[CallVerdict] = []
    for i, raw in enumerate(r for r in records if r != END):
        rec = _parse(raw, i, _TEST_STATUSES, 6)
        if rec is None:
            return verdicts + [CORRUPTED]
        status, text, error, cpu, wall = rec
        if status != "ok":
            verdict = CallVerdict(Status(status), error=error, cpu_s=cpu, wall_s=wall)
        elif text is not None and len(text) > limits.max_test_output_bytes * 2:
            verdict = CallVerdict(Status.OUTPUT_TOO_LARGE, error="answer over the size limit", cpu_s=cpu, wall_s=wall)
        elif text is None:
            if job.mode != "expr":  # only an expression's completing counts; the rest report an answer
                return verdicts + [CORRUPTED]
            verdict = CallVerdict(Status.OK, cpu_s=cpu, wall_s=wall)
        elif job.mode == "stdin":
            verdict = CallVerdict(Status.OK, value=safe_text(text), cpu_s=cpu, wall_s=wall)
        else:
            verdict = _returned(text, None, cpu, wall)
        verdicts.append(verdict)
        if verdict.status is not Status.OK:
            return verdicts
    if len(verdicts) < len(job.tests):
        if END in records:
            verdicts.append(CallVerdict(Status.KILLED, error="the job ended its result stream before its tests"))
        elif header["end"] == "signal" and header.get("signal") == signal.SIGXCPU:
            verdicts.append(CallVerdict(Status.TIMEOUT, error="CPU-time limit of the test reached"))
        else:
            verdicts.append(unfinished)
    return verdicts
