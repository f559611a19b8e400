"""The training set: binned Parquet folders -> student prompts with gold data riding along.

Reads every `*.parquet` under each `--data` folder (the bin stage writes
`<run_dir>/bin/<difficulty>/*.parquet`; real problems in the same PROBLEMS schema can be mixed
in), keeps the problems that can be scored, and renders each one's student prompt with its
environment's template (`env.student_messages`). The environment name and the gold columns
(code, inputs, outputs, fuzzing checkers, visible count) stay as columns: TRL passes every column
to the reward function, which rebuilds the problem from them.

    rows = load_problem_rows(["data/runs/demo/bin"])
    dataset = to_dataset(rows)           # a datasets.Dataset with a conversational `prompt`
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from synthgen.errors import UserError

log = logging.getLogger(__name__)

KEEP = ("problem_id", "env", "code", "inputs", "outputs", "message", "pre_test_code", "test_code",
        "visible_count", "difficulty", "pass_rate")

PromptFn = Callable[[dict], list]


def parquet_files(dirs: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for d in dirs:
        d = Path(d)
        if d.is_file() and d.suffix == ".parquet":
            files.append(d)
        elif d.is_dir():
            # Temporary files of an interrupted writer start with a dot; they are not data.
            files.extend(sorted(p for p in d.rglob("*.parquet") if not any(part.startswith(".") for part in p.relative_to(d).parts)))
        else:
            raise UserError(f"training data not found: {d}")
    if not files:
        raise UserError(f"no Parquet files under {', '.join(str(d) for d in dirs)}")
    return files


def load_problem_rows(dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Scorable problem rows from the folders, with a `difficulty` for each (sorted, deduplicated)."""
    import pyarrow.parquet as pq

    rows: dict[str, dict[str, Any]] = {}
    skipped: dict[str, int] = {}
    for path in parquet_files(dirs):
        try:
            table = pq.read_table(path)
        except Exception as exc:
            raise UserError(f"cannot read {path}: {str(exc).splitlines()[0]}") from None
        names = set(table.column_names)
        if not {"env", "code"} <= names:
            raise UserError(f"{path} is not a problems table (needs env and code columns)")
        folder_bin = path.parent.name
        for row in table.to_pylist():
            if row.get("valid") is False:
                skipped["invalid"] = skipped.get("invalid", 0) + 1
                continue
            if not row.get("outputs") and row.get("env") != "fuzzing":
                skipped["no gold outputs"] = skipped.get("no gold outputs", 0) + 1
                continue
            # The bin stage writes a difficulty column; older or hand-made folders name the bin.
            row["difficulty"] = str(row.get("difficulty") or folder_bin)
            key = row.get("problem_id") or f"{path}:{len(rows)}"
            row["problem_id"] = key
            if key in rows:
                skipped["duplicate"] = skipped.get("duplicate", 0) + 1
                continue
            rows[key] = {k: row.get(k) for k in KEEP}
    if skipped:
        log.info("training data: skipped %s", ", ".join(f"{n} {why}" for why, n in sorted(skipped.items())))
    if not rows:
        raise UserError(f"no scorable problems under {', '.join(str(d) for d in dirs)}")
    return [rows[k] for k in sorted(rows)]


def env_prompt(row: dict) -> list:
    """The student's chat messages for a problem row, from its environment's template."""
    from synthgen.envs import get_env
    from synthgen.envs.base import Problem

    return get_env(str(row["env"])).student_messages(Problem.from_fields(row))


def to_dataset(rows: Sequence[dict], prompt_fn: PromptFn | None = None):
    """A `datasets.Dataset`: `prompt` (messages) plus the problem's columns, in a stable order."""
    from datasets import Dataset

    prompt_fn = prompt_fn or env_prompt
    records = []
    for row in rows:
        try:
            messages = prompt_fn(row)
        except UserError:
            raise
        except Exception as exc:
            raise UserError(f"cannot render the student prompt of problem {row.get('problem_id')} "
                            f"({row.get('env')}): {exc}") from None
        rec = dict(row)
        rec["prompt"] = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        # Lists stay lists (never None) so that Arrow gives the column one type; other nulls are fine.
        rec["inputs"] = [str(x) for x in (rec.get("inputs") or [])]
        rec["outputs"] = [str(x) for x in (rec.get("outputs") or [])]
        records.append(rec)
    return Dataset.from_list(records)


def bin_counts(rows: Sequence[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in rows:
        out[row["difficulty"]] = out.get(row["difficulty"], 0) + 1
    return dict(sorted(out.items()))
