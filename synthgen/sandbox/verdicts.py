"""What one call, program or test of a sandbox job came to: its status and what it returned.

Shared by results.py (plain jobs) and contest_results.py (contest-tests jobs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum


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


def parse_records(raws: list[bytes]) -> list:
    """JSON-decode the call records (all at once when they are all well-formed, which is the
    common case); a record that does not parse ends the list."""
    try:
        parsed = json.loads(b"[" + b",".join(raws) + b"]")
        if len(parsed) == len(raws):
            return parsed
    except (ValueError, RecursionError):
        pass
    out = []
    for raw in raws:
        try:
            out.append(json.loads(raw))
        except (ValueError, RecursionError):
            break
    return out + [None]  # None: the first record that did not parse
