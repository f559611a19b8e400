"""Chain measures its steps the way its start problems were measured, or stops and says why (exit 2).

Why: a chain is three pass rates read side by side, so its levels must be samples of one
measurement (a run generated with `attempts: 8` and chained with chain's default M = 32 would mix
them silently; bin refuses such a mix too). `settle`, before any request and before the settings
are hashed, reads the measurements of every start of the run, so every shard agrees. More than
one, or none recorded: exit 2 unless --remeasure. One: M and the student's effort and temperature
are taken from it where the user did not set them (pydantic's `model_fields_set`), hashed like any
setting; one set otherwise is exit 2 naming the difference and the ways out. What no column
records (the served model name, the sandbox isolation, top_p, max_tokens) is checked through
`measured_by`: `ChainMeasurement.check` compares every measured step with the starts', and until
one has matched turns go one at a time, so a mismatch stops the run with no other request in
flight. `--remeasure` only permits (it is not hashed); `ChainMeasurement.record` writes what
happened into chain's markers and part metadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl
from pydantic import ValidationError

from synthgen import __version__
from synthgen.errors import UserError
from synthgen.settings.base import describe_validation_error
from synthgen.stages.chain.settings import ChainSettings
from synthgen.store.measurement import describe, differences, measurement_key, measurements, shown

THEIRS, OURS = "the start problems", "chain"
_UNSET = object()

# The settings chain takes from its starts' measurement: (setting path, the column that records
# it, its name in messages, its flag).
TAKEN = (
    (("attempts",), "attempts", "attempts", "--attempts"),
    (("student", "reasoning_effort"), "student_effort", "student effort", "--student-effort"),
    (("student", "temperature"), "student_temperature", "student temperature", "--student-temperature"),
)


@dataclass
class ChainMeasurement:
    """How chain's steps are to be measured, against how its starts were."""

    starts: list[dict[str, Any]] = field(default_factory=list)  # measurements(starts)
    taken: dict[str, Any] = field(default_factory=dict)  # dotted setting -> value taken from the starts
    remeasure: bool = False  # --remeasure was given
    expected: str | None = None  # the measured_by every step must carry; None: not checked
    confirmed: bool = False  # a measured step carried `expected` (set by `check`)
    refused: bool = False  # a measured step did not: the run is stopping with exit 2 (set by `check`)

    @property
    def settled(self) -> bool:
        """Nothing left to learn: no check to make, or a step has confirmed the measurement."""
        return self.expected is None or self.confirmed

    def check(self, row: dict[str, Any]) -> None:
        """A measured step measured otherwise than the starts: UserError (exit 2), unless --remeasure."""
        got = row.get("measured_by")
        if self.expected is None or got is None:
            return
        if got == self.expected:
            self.confirmed = True
            return
        self.refused = True
        start = self.starts[0]
        found = "; ".join(f"{n}: {shown(a)} ({THEIRS}) -> {shown(b)} ({OURS})" for n, a, b in differences(start, row))
        found = found or "student top_p or max_tokens, which the rows do not record"
        raise UserError(
            f"chain measured step {row.get('turn_id')} otherwise than the start problems were measured ({found}; "
            f"measured_by {self.expected} -> {got}); the rows written so far stay for a re-run: serve the "
            "start problems' student, or pass --remeasure to measure anew on purpose"
        )

    def record(self, steps: pl.DataFrame | None = None) -> dict[str, Any]:
        """What the markers and the part metadata say: the starts' measurements, what was taken
        from them, the flag, and (with `steps`, the accepted medium and easy rows) how the steps
        were measured and whether that is the starts' one measurement."""
        entries = [_entry(m) for m in self.starts]
        out: dict[str, Any] = {"starts": entries, "taken": dict(self.taken), "remeasure": self.remeasure}
        if steps is not None:
            found = measurements(steps.filter(pl.col("pass_rate").is_not_null())) if steps.height else []
            out["steps"] = [_entry(m) for m in found]
            ids = {m["measured_by"] for m in found}
            starts = {m["measured_by"] for m in self.starts}
            out["same_as_starts"] = (
                None if not found else len(starts) == 1 and None not in starts and ids == starts
            )  # None: no step to compare
        return out


def _entry(m: dict[str, Any]) -> dict[str, Any]:
    return {"measured_by": m["measured_by"], "rows": m["rows"], "described": describe(m)}


def settle(settings: ChainSettings, starts: pl.DataFrame) -> tuple[ChainSettings, ChainMeasurement, str | None]:
    """(settings to run with, the ChainMeasurement, a console line or None) for the run's starts;
    UserError (one line, exit 2) for a measurement chain would not reproduce, unless --remeasure."""
    found = measurements(starts) if starts.height else []
    if not found:  # no start: no chain, nothing to measure like
        return settings, ChainMeasurement(remeasure=settings.remeasure), None
    if len(found) > 1 or found[0]["measured_by"] is None:
        if len(found) > 1:
            ways = "; ".join(f"{m['rows']} by {describe(m)} [{m['measured_by']}]" for m in found[:3])
            why = f"the start problems were measured {len(found)} ways ({ways})"
            out = "chain each measurement's problems on its own (--input-dir), calibrate them with one student"
        else:
            why = "the start problems do not say how they were measured (no measured_by: an older run or an import)"
            out = "calibrate them (synthgen calibrate)"
        if not settings.remeasure:
            raise UserError(f"{why}; chain cannot measure its steps the same way: {out}, or pass --remeasure")
        line = f"chain: measuring the steps anew (--remeasure) as chain's settings say: {why}"
        return settings, ChainMeasurement(found, remeasure=True), line
    start = found[0]
    taken: dict[str, Any] = {}
    differ: list[str] = []  # how chain would measure otherwise, and the ways out besides --remeasure:
    flags: list[str] = []  # the flags to drop
    ways: list[str] = []  # what else to do
    values, given = settings.model_dump(), settings.model_dump(exclude_unset=True)
    for path, column, name, flag in TAKEN:
        theirs = start.get(column)
        if column not in start or (theirs is None and column != "student_effort"):  # None effort: none sent
            continue
        ours = _lookup(values, path)
        if _same(theirs, ours):
            continue
        if _lookup(given, path) is not _UNSET:  # given as a flag or in the config's chain section
            differ.append(f"{name}: {shown(theirs)} ({THEIRS}) -> {shown(ours)} ({OURS})")
            flags.append(flag)
        else:
            taken[".".join(path)] = theirs
    settings = _with(settings, taken)
    version = start.get("synthgen_version")
    if version is not None and version != __version__:
        differ.append(f"synthgen version: {version} ({THEIRS}) -> {__version__} ({OURS})")
        ways.append(f"run synthgen {version} or calibrate them (synthgen calibrate)")
    elif _unrecorded_differ(settings, start):  # (a key of another version is not comparable)
        student = settings.student
        differ.append(
            f"student top_p {shown(float(student.top_p))} or max_tokens {student.max_tokens} ({OURS}): not "
            f"those that measured {THEIRS} (no column records them; measured_by says so)"
        )
        ways.append(
            "set --student-top-p and --student-max-tokens (or the config's chain.student) as the run that "
            "measured them did"
        )
    said = "; ".join(differ)
    if differ and not settings.remeasure:
        drop = f"drop {' and '.join(flags)} (or their keys in the config's chain section) to measure as they were"
        raise UserError(
            f"chain would measure its steps otherwise than the start problems were measured ({said}); "
            f"{'; '.join(([drop] if flags else []) + ways)}, or pass --remeasure to measure anew on purpose"
        )
    # Each step is checked against the starts' measured_by unless measuring anew is allowed.
    expected = None if settings.remeasure else start["measured_by"]
    measurement = ChainMeasurement(found, taken, settings.remeasure, expected)
    takes = ", ".join(f"{name} {shown(taken['.'.join(path)])}" for path, _, name, _ in TAKEN if ".".join(path) in taken)
    if differ or settings.remeasure:
        why = said or f"not checked against the start problems' {describe(start)}"
        line = f"chain: measuring the steps anew (--remeasure): {why}"
        if takes:
            line += f"; taken from the start problems: {takes}"
    elif takes:
        line = f"chain: measuring the steps as the start problems were ({describe(start)}): {takes} taken from them"
    else:
        line = None
    return settings, measurement, line


def _unrecorded_differ(settings: ChainSettings, start: dict[str, Any]) -> bool:
    """Do top_p or max_tokens (hashed into measured_by, in no column) differ from the starts'? The
    key chain would give with the starts' recorded parts is the starts' key only if they agree."""
    if start.get("student_model") is None or start.get("attempts") is None:
        return False  # not enough recorded to rebuild the key
    student = settings.student
    temperature = start.get("student_temperature")
    key = measurement_key(
        student_model=start["student_model"],
        effort=start.get("student_effort"),
        temperature=float(student.temperature if temperature is None else temperature),
        top_p=float(student.top_p),
        max_tokens=int(student.max_tokens),
        attempts=int(start["attempts"]),
        isolation=start.get("sandbox_isolation"),
        version=start.get("synthgen_version"),
    )
    return key != start["measured_by"]


def _lookup(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The value at `path` in a settings dump, or _UNSET (a dump without unset fields lacks it)."""
    for key in path:
        if key not in data:
            return _UNSET
        data = data[key]
    return data


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


def _with(settings: ChainSettings, taken: dict[str, Any]) -> ChainSettings:
    """`settings` with the taken values, validated like any setting (bad values in the starts'
    columns: exit 2 naming the setting)."""
    if not taken:
        return settings
    data = settings.model_dump()
    for dotted, value in taken.items():
        *parents, last = dotted.split(".")
        target = data
        for key in parents:
            target = target[key]
        target[last] = value
    try:
        return type(settings).model_validate(data)
    except ValidationError as exc:
        raise UserError(
            f"the start problems' measurement cannot be taken: {describe_validation_error(exc, settings.section)}"
        ) from None
