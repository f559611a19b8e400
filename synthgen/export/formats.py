"""The rows of `--format verl|verifiers|trl|sft`: one Arrow schema per format, written out field by field.

Every format carries the same three things of each problem (synthgen.export.portable): the student
prompt as synthgen renders it (`prompt`, chat messages), the ground truth a verifier needs (one
JSON string, synthgen.interop.records.ground_truth) and the measurement (records.MEASUREMENT: pass
rate, its interval, measured_by, bin, chain, mutation score) in the format's own metadata field:

    verl       OUT/train.parquet, OUT/test.parquet
               data_source ("synthgen/<env>"), prompt, ability ("code"),
               reward_model {style: "rule", ground_truth}, extra_info {split, index, MEASUREMENT...}
    trl        OUT/train.parquet, OUT/test.parquet
               prompt, ground_truth, MEASUREMENT fields as columns (GRPOTrainer hands every column
               to the reward function as a keyword)
    verifiers  OUT/<module>/data/train.parquet, .../test.parquet inside an installable package
               (synthgen.export.package): prompt, answer (the ground truth), info (MEASUREMENT; the env in info.env)
    sft        OUT/train.parquet, OUT/test.parquet: solved student attempts, at most N per problem
               messages (the prompt, then the attempt as the assistant's message with its reasoning),
               problem_id, attempt, reward (1.0), MEASUREMENT fields as columns

`test.parquet` exists only when a split was asked for (synthgen.export.splits). Rows keep the
problems' order (problem id); `extra_info.index` is a row's place in its file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from synthgen.errors import UserError
from synthgen.export.portable import PortableRow
from synthgen.export.splits import TEST, TRAIN
from synthgen.interop.records import MEASUREMENT
from synthgen.store.files import write_parquet_atomic

ABILITY = "code"
REWARD_STYLE = "rule"

MESSAGE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])
PROMPT = pa.list_(MESSAGE)
# An SFT message keeps the server's reasoning text beside the answer (null where it returned none).
SFT_MESSAGE = pa.struct(
    [pa.field("role", pa.string()), pa.field("content", pa.string()), pa.field("reasoning", pa.string())]
)
MEASURED = list(MEASUREMENT)  # the MEASUREMENT fields, as flat columns

VERL = pa.schema(
    [
        pa.field("data_source", pa.string()),
        pa.field("prompt", PROMPT),
        pa.field("ability", pa.string()),
        pa.field("reward_model", pa.struct([pa.field("style", pa.string()), pa.field("ground_truth", pa.string())])),
        pa.field("extra_info", pa.struct([pa.field("split", pa.string()), pa.field("index", pa.int64()), *MEASURED])),
    ]
)
TRL = pa.schema([pa.field("prompt", PROMPT), pa.field("ground_truth", pa.string()), *MEASURED])
VERIFIERS = pa.schema(
    [
        pa.field("prompt", PROMPT),
        pa.field("answer", pa.string()),
        pa.field("info", MEASUREMENT),
    ]
)
SFT = pa.schema(
    [
        pa.field("messages", pa.list_(SFT_MESSAGE)),
        pa.field("problem_id", pa.string()),
        pa.field("attempt", pa.int16()),
        pa.field("reward", pa.float64()),
        *[f for f in MEASURED if f.name != "problem_id"],
    ]
)
SCHEMAS = {"verl": VERL, "trl": TRL, "verifiers": VERIFIERS, "sft": SFT}
MEASURED_IN = {"verl": "extra_info", "verifiers": "info"}  # the struct holding the measurement, else flat


def splits_of(rows: list[PortableRow]) -> list[str]:
    """The splits an export has: train, and test when a split was asked for (splits.assign made both non-empty)."""
    return [TRAIN, TEST] if any(r.split == TEST for r in rows) else [TRAIN]


def problem_tables(fmt: str, rows: list[PortableRow]) -> dict[str, pa.Table]:
    """The verl, trl or verifiers rows of each split."""
    build = {"verl": _verl, "trl": _trl, "verifiers": _verifiers}[fmt]
    out = {}
    for split in splits_of(rows):
        part = [r for r in rows if r.split == split]
        out[split] = pa.Table.from_pylist([build(r, i) for i, r in enumerate(part)], schema=SCHEMAS[fmt])
    return out


def _verl(r: PortableRow, index: int) -> dict[str, Any]:
    return {
        "data_source": f"synthgen/{r.problem['env']}",
        "prompt": r.prompt,
        "ability": ABILITY,
        "reward_model": {"style": REWARD_STYLE, "ground_truth": r.truth},
        "extra_info": {"split": r.split, "index": index, **r.measurement},
    }


def _trl(r: PortableRow, index: int) -> dict[str, Any]:
    return {"prompt": r.prompt, "ground_truth": r.truth, **r.measurement}


def _verifiers(r: PortableRow, index: int) -> dict[str, Any]:
    return {"prompt": r.prompt, "answer": r.truth, "info": r.measurement}


def sft_tables(rows: list[PortableRow], attempts: pa.Table, per_problem: int) -> tuple[dict[str, pa.Table], dict]:
    """Solved attempts of the exported problems as chat rows, at most `per_problem` each (lowest indices).

    An attempt belongs to the measurement of its `turn_id`: it is taken for the exported row with
    the same turn and problem id, made by the stage that measured the row (calibrate keeps its
    input's turn_id; a row it re-measured has a `prior_measured_by`), and with the same
    `measured_by` where both record one: a re-measurement's attempts are never mixed with the
    original's.
    """
    exported = pl.DataFrame(
        {
            "_row": list(range(len(rows))),
            "turn_id": [r.problem["turn_id"] for r in rows],
            "problem_id": [r.problem["problem_id"] for r in rows],
            "_measured_by": [r.problem.get("measured_by") for r in rows],
            "stage": [_measuring_stage(r.problem) for r in rows],
        },
        schema={
            "_row": pl.Int64,
            "turn_id": pl.String,
            "problem_id": pl.String,
            "_measured_by": pl.String,
            "stage": pl.String,
        },
    )
    columns = ["turn_id", "problem_id", "attempt", "content", "reasoning", "reward", "measured_by", "stage"]
    solved = (
        pl.from_arrow(attempts.select(columns))
        .filter(pl.col("reward") == 1.0)
        .join(exported, on=["turn_id", "problem_id", "stage"], how="inner")
        .filter(
            pl.col("measured_by").is_null()
            | pl.col("_measured_by").is_null()
            | (pl.col("measured_by") == pl.col("_measured_by"))
        )
        .sort("_row", "attempt")
        .unique(["_row", "attempt"], keep="first", maintain_order=True)
    )
    kept = solved.group_by("_row", maintain_order=True).head(per_problem)
    if kept.height == 0:
        raise UserError(
            f"the run's kept attempts hold no solved attempt of the {len(rows)} exported problems "
            "(were they kept by another run, or with --keep-attempts none?)"
        )
    out: dict[str, list[dict]] = {split: [] for split in splits_of(rows)}
    for index, attempt, content, reasoning in kept.select("_row", "attempt", "content", "reasoning").iter_rows():
        r = rows[index]
        messages = [{**m, "reasoning": None} for m in r.prompt]
        messages.append({"role": "assistant", "content": content, "reasoning": reasoning})
        measured = {k: v for k, v in r.measurement.items() if k != "problem_id"}
        out[r.split].append(
            {"messages": messages, "problem_id": r.problem["problem_id"], "attempt": attempt, "reward": 1.0, **measured}
        )
    for split, part in out.items():
        if not part:  # an empty file would fail in the trainer, later and less clearly
            problems = sum(r.split == split for r in rows)
            raise UserError(
                f"the {split} split's {problems} problems have no solved attempt among the kept ones; "
                "choose another split (--test-fraction, --test-bins)"
            )
    tables = {split: pa.Table.from_pylist(part, schema=SFT) for split, part in out.items()}
    with_attempts = kept["_row"].n_unique()
    facts = {
        "per_problem": per_problem,
        "problems_with_attempts": with_attempts,
        "problems_without_attempts": len(rows) - with_attempts,
        "solved_attempts_available": solved.height,
        "with_reasoning": int(kept["reasoning"].is_not_null().sum()),
    }
    return tables, facts


def _measuring_stage(problem: dict[str, Any]) -> str:
    """The stage whose attempts measured a row: calibrate records the measurement it replaced."""
    return "calibrate" if problem.get("prior_measured_by") or problem.get("prior_pass_rate") is not None else "generate"


def bin_counts(fmt: str, table: pa.Table) -> dict[str, int]:
    """Rows per bin (`difficulty`) of one split's table."""
    parent = MEASURED_IN.get(fmt)
    frame = pl.from_arrow(table.select([parent or "difficulty"]))
    if parent:
        frame = frame.unnest(parent).select("difficulty")
    return dict(sorted(frame.group_by("difficulty").len().iter_rows()))


def write_tables(folder: Path, where: str, tables: dict[str, pa.Table], metadata: dict[str, str]) -> dict[str, str]:
    """Write each split's table as `<where>/<split>.parquet`; returns {split: relative path}."""
    files = {}
    for split, table in tables.items():
        name = f"{where}/{split}.parquet" if where else f"{split}.parquet"
        write_parquet_atomic(folder / name, table, metadata)
        files[split] = name
    return files
