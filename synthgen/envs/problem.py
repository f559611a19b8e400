"""The records the environments pass around: a teacher `Problem`, a validation `Verdict`, a student `Reward`.

These are plain data with no behaviour beyond conversion to and from PROBLEMS rows, so every
other module of the package (the contract in base, the validation helpers, the summary, the
prompt rendering) can import them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from synthgen.store import records

_FIELDS = ("code", "inputs", "outputs", "message", "pre_test_code", "test_code", "visible_count")


@dataclass
class Problem:
    """A teacher problem. `inputs` are argument-list source texts in canonical form ("3, [1, 2]",
    "s='a,b', k=2"); `outputs` are the gold values of f on them, in the sandbox encoding."""

    env: str
    code: str
    inputs: list[str]
    message: str = ""
    pre_test_code: str = ""  # fuzzing: defines pre_test_f
    test_code: str = ""  # fuzzing: defines test_f
    outputs: list[str] = field(default_factory=list)
    visible_count: int | None = None  # induction: how many leading pairs the student sees

    @property
    def problem_id(self) -> str:
        return records.problem_id(self.env, self.code, self.inputs, self.message)

    def to_fields(self) -> dict[str, Any]:
        """The PROBLEMS columns a problem owns (empty strings become null)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _FIELDS}
        out.update({name: out[name] or None for name in ("message", "pre_test_code", "test_code")})
        out.update(inputs=list(self.inputs), outputs=list(self.outputs) or None)
        return {**out, "problem_id": self.problem_id, "env": self.env}

    @classmethod
    def from_fields(cls, row: dict[str, Any]) -> Problem:
        """From a PROBLEMS row (or a hand-written JSON object with the same keys)."""
        env = str(row["env"])
        texts = {name: str(row.get(name) or "") for name in ("code", "message", "pre_test_code", "test_code")}
        lists = {name: [str(x) for x in (row.get(name) or [])] for name in ("inputs", "outputs")}
        visible = row.get("visible_count")
        return cls(env=env, **texts, **lists, visible_count=None if visible is None else int(visible))

    def program(self) -> str:
        """The module the sandbox runs: f, and for fuzzing the two checkers after it."""
        parts = [self.code, self.pre_test_code, self.test_code]
        return "\n\n\n".join(p for p in parts if p) + "\n"


@dataclass
class Verdict:
    valid: bool
    reason: str  # reasons.OK or one reasons.GENERATION code
    detail: str = ""


@dataclass
class Reward:
    """One scored student attempt."""

    value: float | None  # 1.0 / 0.0; None only when status == "infra"
    status: str  # "ok" | "format" (unreadable or truncated: value 0.0) | "infra" (value None)
    detail: str = ""
    answer: str = ""  # the parsed answer (code, argument list or literal), for summaries
    calls: list = field(default_factory=list)  # the sandbox CallVerdicts behind it (verify prints them)
