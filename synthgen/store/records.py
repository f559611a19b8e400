"""The explicit pyarrow schemas of every table synthgen writes, and the ids that key them.

Schemas are written out field by field (never inferred) so that shards from different runs,
machines and versions line up; `SCHEMA_VERSION` goes into every file's metadata and changes
whenever a schema does. `READABLE_VERSIONS` are the versions this synthgen still reads: a newer one
only adds nullable columns, which read as null from an older file (synthgen.store.record_checks).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

# 3: PROBLEMS gained chance_rate and chance_strategies (synthgen.envs.chance).
SCHEMA_VERSION = "3"
READABLE_VERSIONS = ("2", "3")

SEEDS = pa.schema(
    [
        pa.field("seed_id", pa.string(), nullable=False),  # content hash of the snippet text
        pa.field("source", pa.string(), nullable=False),  # dir | starcoder | solutions
        pa.field("origin", pa.string(), nullable=False),  # file path, repo:path, or problem id
        pa.field("repo", pa.string()),
        pa.field("path", pa.string()),
        pa.field("start_line", pa.int32(), nullable=False),  # 1-based, inclusive
        pa.field("end_line", pa.int32(), nullable=False),  # 1-based, inclusive
        pa.field("num_lines", pa.int32(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
    ]
)

# One row per teacher turn, valid or not. Values (inputs, gold outputs) are kept as the text the
# environments work with: inputs as argument-list source (`3, [1, 2]`), outputs in the sandbox's
# canonical type-tagged encoding, which compares without evaluating anything. Real contest problems
# (`synthgen import`) use the same columns; synthgen.envs.contest says what each holds for them.
PROBLEMS = pa.schema(
    [
        pa.field("turn_id", pa.string(), nullable=False),  # seed/env/lineage/turn: unique per row
        pa.field("problem_id", pa.string()),  # content hash of (env, code, inputs, message); null if unparsed
        pa.field("seed_id", pa.string(), nullable=False),
        pa.field("lineage_id", pa.string(), nullable=False),  # root of the mutation chain
        pa.field("parent_id", pa.string()),  # problem this turn mutated (null on turn 1)
        pa.field("env", pa.string(), nullable=False),
        pa.field("mode", pa.string(), nullable=False),  # multi | single | chain
        pa.field("turn", pa.int16(), nullable=False),  # 1-based
        pa.field("code", pa.string()),
        pa.field("inputs", pa.list_(pa.string())),
        pa.field("outputs", pa.list_(pa.string())),  # gold, from execution only
        pa.field("message", pa.string()),
        pa.field("pre_test_code", pa.string()),  # fuzzing
        pa.field("test_code", pa.string()),  # fuzzing
        pa.field("visible_count", pa.int16()),  # induction: pairs the student sees
        pa.field("valid", pa.bool_(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),  # "ok" or a reason code (synthgen.envs.reasons)
        pa.field("reason_detail", pa.string()),
        pa.field("pass_rate", pa.float64()),  # correct / scored attempts; null when none scored
        pa.field("attempts", pa.int32(), nullable=False),  # attempts asked for (M)
        pa.field("scored", pa.int32(), nullable=False),  # attempts with a reward (not infra)
        pa.field("correct", pa.int32(), nullable=False),
        pa.field("format_failures", pa.int32(), nullable=False),  # unparseable or truncated answers
        pa.field("infra_failures", pa.int32(), nullable=False),  # LLM or sandbox infrastructure
        pa.field("summary", pa.string()),  # the student summary the teacher saw for this turn
        # This problem's own attempts, as synthgen.envs.summary.Summary keeps them (Summary.from_row
        # rebuilds the summary from these and the counts): the shown solved and failed answers.
        pa.field("solved_examples", pa.list_(pa.string())),
        pa.field("failed_examples", pa.list_(pa.string())),
        # first | easier | somewhat-easier | similar | harder | chain-medium | chain-easy
        pa.field("strategy", pa.string()),
        pa.field("teacher_reasoning", pa.string()),
        # The teacher's raw answer when it did not parse (format_error), cut at RAW_ANSWER_CHARS:
        # what the model wrote, for `report` and `prompts show` (null for answers that parsed).
        pa.field("teacher_answer", pa.string()),
        pa.field("teacher_tokens_in", pa.int64(), nullable=False),
        pa.field("teacher_tokens_out", pa.int64(), nullable=False),
        pa.field("student_tokens_in", pa.int64(), nullable=False),
        pa.field("student_tokens_out", pa.int64(), nullable=False),
        pa.field("teacher_model", pa.string(), nullable=False),
        pa.field("student_model", pa.string(), nullable=False),
        pa.field("settings_hash", pa.string(), nullable=False),
        # How sure the pass rate is and how it was measured (synthgen.store.measurement): the 95% Wilson
        # interval over the scored attempts, and the student's provenance. Null on rows without a
        # pass rate and on rows of older runs.
        pa.field("pass_rate_low", pa.float64()),
        pa.field("pass_rate_high", pa.float64()),
        pa.field("student_endpoint", pa.string()),  # the server URL (recorded, not part of measured_by)
        pa.field("student_effort", pa.string()),  # reasoning effort
        pa.field("student_temperature", pa.float64()),
        pa.field("sandbox_isolation", pa.string()),  # the sandbox's isolation level that scored the attempts
        pa.field("synthgen_version", pa.string()),
        pa.field("measured_by", pa.string()),  # hash of model, sampling, M, isolation, version
        # Do the inputs pin the problem down? (synthgen.envs.mutation) Share of mutants of f and
        # baselines whose outputs differ from f's on the inputs; null when not measured.
        pa.field("mutation_score", pa.float64()),
        pa.field("mutants", pa.int32()),  # mutants and baselines scored
        pa.field("mutants_caught", pa.int32()),
        pa.field("surviving_mutants", pa.list_(pa.string())),  # kinds of the survivors, one per survivor
        # Can the reward be earned without solving? (synthgen.envs.chance) The best no-skill strategy's
        # success rate, scored by the environment's own verifier, and the strategies that reach it
        # (empty when it is 0); null when not measured (older runs, --no-chance-probes).
        pa.field("chance_rate", pa.float64()),
        pa.field("chance_strategies", pa.list_(pa.string())),
        # `synthgen calibrate` re-measured the pass rate above with another student; these hold the
        # measurement it replaced (null on rows never calibrated).
        pa.field("prior_pass_rate", pa.float64()),
        pa.field("prior_pass_rate_low", pa.float64()),
        pa.field("prior_pass_rate_high", pa.float64()),
        pa.field("prior_student_model", pa.string()),
        pa.field("prior_measured_by", pa.string()),
        pa.field("prior_difficulty", pa.string()),  # the bin the problem was in, when the set was binned
    ]
)

CHAIN_LINKS = pa.schema(
    [
        pa.field("link_id", pa.string(), nullable=False),  # chain_id:position
        pa.field("chain_id", pa.string(), nullable=False),
        pa.field("level", pa.string(), nullable=False),  # hard | medium | easy
        pa.field("position", pa.int16(), nullable=False),  # 0 = hard, 1 = medium, 2 = easy
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("pass_rate", pa.float64(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
    ]
)

# `train --save-completions`: one row per kept training completion (synthgen.train.completions).
COMPLETIONS = pa.schema(
    [
        pa.field("round", pa.int32(), nullable=False),  # generation round
        pa.field("step", pa.int32(), nullable=False),  # optimizer step the round trains
        pa.field("problem_id", pa.string()),
        pa.field("env", pa.string()),
        pa.field("difficulty", pa.string()),  # the problem's split
        pa.field("completion", pa.string(), nullable=False),
        pa.field("reward", pa.float64()),  # null: an infrastructure failure
    ]
)

# `generate` and `calibrate --keep-attempts solved|all`: one row per student attempt of a valid,
# measured problem (synthgen.store.attempts), in a folder of their own beside the stage's rows.
ATTEMPTS = pa.schema(
    [
        pa.field("turn_id", pa.string(), nullable=False),  # the PROBLEMS row whose measurement this attempt is part of
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
        pa.field("attempt", pa.int16(), nullable=False),  # 0-based index among the problem's M attempts
        pa.field("content", pa.string(), nullable=False),  # the answer as the server returned it
        pa.field("reasoning", pa.string()),  # the server's reasoning text; null when it returned none
        pa.field("finish_reason", pa.string()),
        pa.field("completion_tokens", pa.int64(), nullable=False),
        pa.field("status", pa.string(), nullable=False),  # ok | format (unreadable or cut off)
        pa.field("reward", pa.float64(), nullable=False),  # 1.0 solved, 0.0 not
        pa.field("detail", pa.string()),  # why it failed (the verifier's or the parser's words)
        pa.field("student_model", pa.string(), nullable=False),
        pa.field("measured_by", pa.string()),
        pa.field("settings_hash", pa.string(), nullable=False),
        # generate | calibrate: the measurement it belongs to. One run may hold both, and calibrate
        # keeps its input's turn_id, so (stage, turn_id, attempt) is the key, not (turn_id, attempt).
        pa.field("stage", pa.string(), nullable=False),
    ]
)

# `synthgen eval`: one row per scored sample (infrastructure failures are never rows).
EVAL_SAMPLES = pa.schema(
    [
        pa.field("tag", pa.string(), nullable=False),  # the model or checkpoint evaluated (step-000100, ...)
        pa.field("step", pa.int64()),  # its training step; null for a model that is not a checkpoint
        pa.field("benchmark", pa.string(), nullable=False),  # lcb | humaneval | math500 | aime2024 | heldout
        pa.field("problem_id", pa.string(), nullable=False),  # the benchmark's own id (question_id, task_id, ...)
        pa.field("splits", pa.list_(pa.string()), nullable=False),  # e.g. ["2024.08-2025.05", "v5-easy"]
        pa.field("sample", pa.int32(), nullable=False),  # 0-based index among the problem's samples
        pa.field("correct", pa.bool_(), nullable=False),
        pa.field("timed_out", pa.bool_()),  # wrong because a test ran past its time limit
        pa.field("status", pa.string(), nullable=False),  # ok | format (unreadable or cut off: counted wrong)
        pa.field("detail", pa.string()),  # why it is wrong (first failed test, ...)
        pa.field("completion", pa.string(), nullable=False),
        pa.field("finish_reason", pa.string()),
        pa.field("model", pa.string(), nullable=False),  # the model name the server reported
        pa.field("prompt_tokens", pa.int64(), nullable=False),
        pa.field("completion_tokens", pa.int64(), nullable=False),
        pa.field("settings_hash", pa.string(), nullable=False),
    ]
)

# The PROBLEMS columns that rebuild a problem (synthgen.envs.problem): what a scorer needs, and
# what a report shows of an example.
PROBLEM_COLUMNS = (
    "problem_id",
    "env",
    "code",
    "inputs",
    "outputs",
    "message",
    "pre_test_code",
    "test_code",
    "visible_count",
)
# ... plus its bin: what training data keeps per problem and what the reward function reads back
# from TRL's dataset columns.
SCORING_COLUMNS = (*PROBLEM_COLUMNS, "difficulty")

REJECTS_EXTRA = [pa.field("reject_reason", pa.string(), nullable=False), pa.field("reject_detail", pa.string())]


def with_fields(schema: pa.Schema, extra: Iterable[pa.Field]) -> pa.Schema:
    """`schema` plus `extra` fields at the end (e.g. the `difficulty` column of binned problems)."""
    return pa.schema([*schema, *extra])


# `synthgen train --online` (synthgen.online.log): what the problem pool held and when. Every table
# has a `step` column (the optimizer step at whose boundary the row was made), by which a resumed
# run cuts the log back to its checkpoint. `round` is the generation round a row is about.
ONLINE_PROBLEMS = pa.schema(  # every problem ever admitted; registry_index is its row in the training set
    [
        pa.field("registry_index", pa.int64(), nullable=False),
        pa.field("step", pa.int64(), nullable=False),  # admitted at this step's boundary (0: before training)
        pa.field("round", pa.int64(), nullable=False),
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
        pa.field("origin", pa.string(), nullable=False),  # data | explore | mutate | respawn
        pa.field("request_id", pa.string()),
        pa.field("lineage_id", pa.string()),
        pa.field("parent_id", pa.string()),  # the problem it was mutated from
        pa.field("seed_id", pa.string()),
        pa.field("difficulty", pa.string()),  # the data's bin, or "online"
        *(PROBLEMS.field(name) for name in PROBLEM_COLUMNS[2:]),  # code ... visible_count
        pa.field("pass_rate", pa.float64()),  # the policy's at admission (the data's own for data rows)
        pa.field("policy_step", pa.int64()),  # the policy that measured it (null for data rows)
    ]
)
ONLINE_TURNS = with_fields(  # every teacher turn the worker ran, valid or not (PROBLEMS plus the request)
    PROBLEMS,
    [
        pa.field("step", pa.int64(), nullable=False),
        pa.field("request_id", pa.string(), nullable=False),
        pa.field("request_kind", pa.string(), nullable=False),  # explore | mutate | respawn
        pa.field("level", pa.int16()),  # the SCALER level it aimed at
        pa.field("band_low", pa.float64()),
        pa.field("band_high", pa.float64()),
        pa.field("policy_step", pa.int64(), nullable=False),  # the policy that answered as student
        pa.field("decision", pa.string()),  # accepted | too_easy | too_hard | invalid
    ],
)
ONLINE_EVENTS = pa.schema(  # admit | retire | evict | reject | drop | infra | respawn (a request) ...
    [
        pa.field("step", pa.int64(), nullable=False),
        pa.field("round", pa.int64(), nullable=False),
        pa.field("event", pa.string(), nullable=False),
        pa.field("registry_index", pa.int64()),
        pa.field("problem_id", pa.string()),
        pa.field("env", pa.string()),
        pa.field("origin", pa.string()),
        pa.field("request_id", pa.string()),
        pa.field("request_kind", pa.string()),
        pa.field("pass_rate", pa.float64()),  # the policy's, that decided an admission or rejection
        pa.field("success", pa.float64()),  # windowed training success rate
        pa.field("regret", pa.float64()),
        pa.field("priority", pa.float64()),
        pa.field("groups", pa.int32()),  # groups in the problem's window
        pa.field("detail", pa.string()),
    ]
)
ONLINE_DRAWS = pa.schema(  # the problems each generation round trains on, one row per prompt slot
    [
        pa.field("step", pa.int64(), nullable=False),  # the boundary at which the round was drawn
        pa.field("round", pa.int64(), nullable=False),
        pa.field("slot", pa.int32(), nullable=False),
        pa.field("registry_index", pa.int64(), nullable=False),
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),  # priority rank (1 = highest) when drawn
        pa.field("candidates", pa.int32(), nullable=False),  # problems the draw ranked
        pa.field("probability", pa.float64(), nullable=False),  # Zipf probability of that rank
        pa.field("explore", pa.bool_(), nullable=False),  # the slot asked the teacher for a fresh problem
        pa.field("mutate", pa.bool_(), nullable=False),  # the slot asked the teacher to mutate this problem
    ]
)
ONLINE_BUFFER = pa.schema(  # snapshots of the active buffer, ranked
    [
        pa.field("step", pa.int64(), nullable=False),
        pa.field("round", pa.int64(), nullable=False),
        pa.field("registry_index", pa.int64(), nullable=False),
        pa.field("problem_id", pa.string(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
        pa.field("origin", pa.string(), nullable=False),
        pa.field("rank", pa.int32(), nullable=False),
        pa.field("priority", pa.float64(), nullable=False),
        pa.field("regret", pa.float64(), nullable=False),
        pa.field("success", pa.float64()),  # null before its first group
        pa.field("groups", pa.int32(), nullable=False),
        pa.field("staleness", pa.int64(), nullable=False),  # rounds since it was last drawn
        pa.field("success_class", pa.string(), nullable=False),  # unseen | too_hard | informative | too_easy
    ]
)
ONLINE_CONTROLLER = pa.schema(  # SCALER's state per environment and round, and its retire / readmit events
    [
        pa.field("step", pa.int64(), nullable=False),
        pa.field("round", pa.int64(), nullable=False),
        pa.field("env", pa.string(), nullable=False),
        pa.field("accuracy", pa.float64()),
        pa.field("scored", pa.int64()),
        pa.field("d", pa.float64(), nullable=False),
        pa.field("active", pa.bool_(), nullable=False),
        pa.field("event", pa.string()),  # retire | readmit | kept
        pa.field("reason", pa.string()),
    ]
)


def content_hash(*parts: Any, length: int = 16) -> str:
    """A stable hex id of JSON-serialisable parts (order matters)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


def problem_id(env: str, code: str, inputs: Sequence[str], message: str | None) -> str:
    """A problem's identity: the same env, code, inputs and message give the same id in any run."""
    return content_hash("problem", env, code, list(inputs), message or "")


def seed_id(text: str) -> str:
    return content_hash("seed", text)


def table_from_rows(rows: Sequence[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Rows (dicts) to a table of exactly `schema`; missing nullable keys become null."""
    columns = {f.name: [row.get(f.name) for row in rows] for f in schema}
    return pa.Table.from_pydict(columns, schema=schema)
