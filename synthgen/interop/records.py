"""What every portable row carries: the student prompt, the ground truth, the measurement.

    prompt = student_prompt(row)        # [{"role": "user", "content": ...}], as `synthgen train` renders it
    truth = ground_truth(row)           # one JSON string: everything a verifier needs, nothing else
    problem = problem_of(truth)         # back to a synthgen.envs Problem (GroundTruthError if malformed)
    meta = measurement(row)             # pass rate, interval, measured_by, bin, chain, mutation score, chance

`row` is a PROBLEMS row (synthgen.store.records) with, where known, its bin (`difficulty`) and its
chain (`chain_id`, `level`, `position`). The ground truth is a JSON string rather than a nested
struct so that it passes unchanged through every trainer's data path (verl's
`reward_model.ground_truth`, verifiers' `answer`, a TRL dataset column) and through Arrow, whose
struct columns would add null keys to rows that lack them. Gold values stay in the sandbox's
type-tagged encoding: the verifier compares them in the host without evaluating anything.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from synthgen.envs.problem import Problem

GROUND_TRUTH_FORMAT = "synthgen-ground-truth/1"
_PROBLEM_FIELDS = ("env", "code", "inputs", "outputs", "message", "pre_test_code", "test_code", "visible_count")

# The measurement every exported row carries in its format's metadata field, with its Arrow type:
# written out so that an export of one bin and of another line up, whatever is null in either.
MEASUREMENT = pa.struct(
    [
        pa.field("problem_id", pa.string()),
        pa.field("env", pa.string()),
        pa.field("difficulty", pa.string()),  # the bin (easy, medium, ...), the chain level, or kept
        pa.field("pass_rate", pa.float64()),
        pa.field("pass_rate_low", pa.float64()),  # 95% Wilson interval over the scored attempts
        pa.field("pass_rate_high", pa.float64()),
        pa.field("attempts", pa.int32()),
        pa.field("scored", pa.int32()),
        pa.field("correct", pa.int32()),
        pa.field("measured_by", pa.string()),
        pa.field("student_model", pa.string()),
        pa.field("mutation_score", pa.float64()),
        pa.field("chance_rate", pa.float64()),  # the reward's rate under the best no-skill strategy
        pa.field("chain_id", pa.string()),
        pa.field("level", pa.string()),
        pa.field("position", pa.int16()),
        pa.field("turn", pa.int16()),
        pa.field("lineage_id", pa.string()),
    ]
)
MEASUREMENT_FIELDS = tuple(f.name for f in MEASUREMENT)


class GroundTruthError(ValueError):
    """A ground truth that is not synthgen's: the trainer handed over the wrong column, or an edited one."""


def ground_truth(row: dict[str, Any]) -> str:
    """The JSON ground truth of a problem row: its environment, code, inputs and gold outputs."""
    problem = Problem.from_fields(row)
    fields = {name: getattr(problem, name) for name in _PROBLEM_FIELDS}
    return json.dumps(
        {"format": GROUND_TRUTH_FORMAT, "problem_id": row.get("problem_id") or problem.problem_id, **fields},
        ensure_ascii=False,
        sort_keys=True,
    )


def problem_of(truth: str | dict[str, Any]) -> Problem:
    """The Problem a ground truth describes; GroundTruthError names what is wrong with it."""
    if isinstance(truth, (str, bytes)):
        try:
            truth = json.loads(truth)
        except json.JSONDecodeError as exc:
            raise GroundTruthError(f"the ground truth is not JSON ({exc.msg}); pass synthgen's ground_truth") from None
    if not isinstance(truth, dict) or truth.get("format") != GROUND_TRUTH_FORMAT:
        raise GroundTruthError(f'not a synthgen ground truth (no "format": "{GROUND_TRUTH_FORMAT}")')
    from synthgen.envs import ENVIRONMENTS

    if truth.get("env") not in ENVIRONMENTS:
        raise GroundTruthError(f"unknown environment {truth.get('env')!r} in the ground truth")
    if not truth.get("outputs"):
        raise GroundTruthError("the ground truth has no gold outputs")
    return Problem.from_fields(truth)


def student_prompt(row: dict[str, Any]) -> list[dict[str, str]]:
    """The student's chat messages for a problem row, from its environment's template."""
    from synthgen.envs import get_env

    messages = get_env(str(row["env"])).student_messages(Problem.from_fields(row))
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]


def measurement(row: dict[str, Any]) -> dict[str, Any]:
    """The MEASUREMENT fields of a row (null where the row has none)."""
    return {name: row.get(name) for name in MEASUREMENT_FIELDS}
