"""What one call, program or test of a sandbox job came to, read off the child's untrusted result
records: a record not well-formed for its place is the job's fault and raises nothing here. Values
are decoded, never evaluated, and compared with expected values the child never saw; every text
passes `safe_text`.
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
        fields = {"status": self.status.value, "value": self.value, "encoded": self.encoded}
        return fields | {"match": self.match, "error": self.error}


CORRUPTED = CallVerdict(Status.EXCEPTION, error="the job corrupted its result stream")
_CALL_STATUSES = ("ok", "exception", "memory", "output_too_large")
_TEST_STATUSES = (*_CALL_STATUSES, "timeout")


def _load(records: list[bytes]) -> list:
    """The records as JSON (None for one that is not), in one parse when they all are: a contest
    job's records are read twice as fast so. Records that merge or split in the joined text can
    at most read as other records, which the job could have written as they are."""
    try:
        loaded = json.loads(b"[" + b",".join(records) + b"]")
        if len(loaded) == len(records):
            return loaded
    except (ValueError, RecursionError):
        pass
    return [_load_one(raw) for raw in records]


def _load_one(raw: bytes):
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _parse(rec, i: int, statuses: tuple, width: int) -> tuple | None:
    """(status, text, error, cpu, wall) of a record that is well-formed for run `i`, else None."""
    if type(rec) is not list or len(rec) != width or type(rec[0]) is not int or rec[0] != i:
        return None
    status, text, error = rec[1:4]  # (a tuple's `in` compares, so an unhashable status cannot raise)
    if status not in statuses or any(x is not None and type(x) is not str for x in (text, error)):
        return None
    cpu, wall = (float(x) if type(x) in (int, float) else None for x in (rec + [None, None])[4:6])
    return status, text, None if error is None else safe_text(error), cpu, wall


def _verdict(rec: tuple, cap: int, expected=None, printed: bool = False) -> CallVerdict:
    """The verdict of a well-formed record. An answer is a value's encoding, decoded and matched
    against `expected` (a normalized value) when given, or with `printed` the text a test printed."""
    status, text, error, cpu, wall = rec
    if status != "ok":
        return CallVerdict(Status(status), error=error, cpu_s=cpu, wall_s=wall)
    if text is not None and len(text) > cap:
        error = f"answer over the size limit ({cap} bytes)"
        return CallVerdict(Status.OUTPUT_TOO_LARGE, error=error, cpu_s=cpu, wall_s=wall)
    if text is None or printed:
        return CallVerdict(Status.OK, value=None if text is None else safe_text(text), cpu_s=cpu, wall_s=wall)
    try:
        value = values.decode(text)
        match = None if expected is None else values.normalize(value) == expected
    except (ValueError, TypeError, RecursionError):
        error = "the job returned a value that is not a valid encoding"
        return CallVerdict(Status.EXCEPTION, error=error, cpu_s=cpu, wall_s=wall)
    return CallVerdict(Status.OK, safe_text(values.display(value)), text, match, cpu_s=cpu, wall_s=wall)


def call_verdicts(job, records: list[bytes], limits, unfinished: CallVerdict) -> list[CallVerdict]:
    """One verdict per call; calls without a record get `unfinished` (how the child ended), or,
    past a record that was not well-formed, CORRUPTED."""
    verdicts: list[CallVerdict] = []
    for i, loaded in enumerate(_load(records[: len(job.calls)])):
        rec = _parse(loaded, i, _CALL_STATUSES, 4)
        if rec is None or (rec[1] is not None) != (rec[0] == "ok"):  # a value if and only if ok
            break
        verdicts.append(_verdict(rec, limits.max_value_bytes, job._expected_forms[i]))
    filler = CORRUPTED if len(records) > len(verdicts) else unfinished
    return verdicts + [filler] * (len(job.calls) - len(verdicts))


def program_verdict(header: dict, records: list[bytes], out_blob: bytes, limits, unfinished) -> CallVerdict:
    """The one verdict of a program job: how the child said it ended (`os._exit(0)` before its record
    is finished too), and its stdout as the host captured it, which the program cannot misreport."""
    if records:
        rec = _parse(_load_one(records[0]), 0, _CALL_STATUSES, 4)
        if rec is None or rec[1] is not None:
            return CORRUPTED
        if rec[0] != "ok":
            return CallVerdict(Status(rec[0]), error=rec[2])
    elif not (header["end"] == "exit" and header.get("code") == 0):
        return unfinished
    total, most = int(header.get("out_total") or 0), limits.max_value_bytes
    if total > most or total > len(out_blob):
        return CallVerdict(Status.OUTPUT_TOO_LARGE, error=f"printed {total} bytes; the limit is {most}")
    return CallVerdict(Status.OK, value=out_blob.decode("utf-8", "replace"))


def test_verdicts(job, header: dict, records: list[bytes], limits, unfinished: CallVerdict) -> list[CallVerdict]:
    """One verdict per contest test that ran: the run stops at the first test not ok, and the
    test that was running when the child ended gets a verdict from how it ended."""
    verdicts: list[CallVerdict] = []
    for i, loaded in enumerate(_load([r for r in records if r != END])):
        rec = _parse(loaded, i, _TEST_STATUSES, 6)
        # Only an expression's completing is ok without an answer.
        if rec is None or (rec[0] == "ok" and rec[1] is None and job.mode != "expr"):
            return verdicts + [CORRUPTED]
        verdict = _verdict(rec, limits.max_test_output_bytes * 2, printed=job.mode == "stdin")
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
