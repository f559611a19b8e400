"""The training set: problem folders -> scorable rows -> student prompts with gold data riding along.

`load_problem_rows` reads each `--data` folder by what it is: bin stage output (or any problems
tables, one folder per bin or with a `difficulty` column); a chain folder (every level, the level
as difficulty); a filter folder (every kept problem, as one split `kept`: the paper's "all
synthetic" set); a calibrate folder (its re-measured, not yet binned problems, as one split
`calibrated`). A stage folder must be finished, and every table is checked against the schema.
`to_dataset` renders the student prompts; the gold columns stay, since TRL passes every column to
the reward function, which rebuilds the problem from them.

    rows = load_problem_rows(["data/runs/demo/bin"])
    dataset = to_dataset(rows)           # a datasets.Dataset with a conversational `prompt`
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.interop.records import student_prompt
from synthgen.store import record_checks as checks
from synthgen.store import records
from synthgen.store.files import read_metadata
from synthgen.store.layout import MARKER_SUFFIX, StageDir

log = logging.getLogger(__name__)

KEEP = (*records.SCORING_COLUMNS, "pass_rate")
KEPT_SPLIT = "kept"  # the split of a filter folder's rows: every kept problem, as one
CALIBRATED_SPLIT = "calibrated"  # the split of a calibrate folder's rows: every re-measured problem, as one

PromptFn = Callable[[dict], list]


def _finished_parts(folder: Path, stage: str) -> list[Path]:
    """The parts of a stage folder that a reader may take; an unfinished synthgen stage is exit 2."""
    found = StageDir.at(folder, stage).status()
    if found.missing:
        StageDir.at(folder, stage).require_complete()  # raises, naming the missing shards
    return found.parts


def _problems(path: Path) -> list[dict[str, Any]] | None:
    """A problems table's rows, checked (wrong types, NaN pass rates, unknown envs: exit 2); None if not one."""
    if not {"env", "code"} <= set(checks.read_schema(path).names):
        return None
    return checks.read_file(path, checks.TRAINING_SPEC).to_pylist()


def _chain_rows(folder: Path) -> list[dict[str, Any]]:
    """Every level of every chain; a linked problem missing from `problems/` is an error, never a lost level."""
    links = checks.read_parts(
        _finished_parts(folder / "links", "chain/links"), checks.CHAIN_LINKS_SPEC, ["problem_id", "level"]
    )
    levels = dict(zip(links.column("problem_id").to_pylist(), links.column("level").to_pylist()))
    rows: dict[str, dict[str, Any]] = {}
    for path in _finished_parts(folder / "problems", "chain/problems"):
        for row in _problems(path) or []:
            if row.get("problem_id") in levels:
                rows.setdefault(row["problem_id"], {**row, "difficulty": levels[row["problem_id"]]})
    missing = Counter(level for problem_id, level in levels.items() if problem_id not in rows)
    if missing:
        lost = ", ".join(f"{n} {level}" for level, n in sorted(missing.items()))
        raise UserError(
            f"chain folder {folder}: linked problems missing from problems/ ({lost}); "
            "re-run `synthgen chain --force` to rebuild it"
        )
    return list(rows.values())


def is_filter_folder(folder: Path) -> bool:
    """A filter stage's output (its `kept` marker or parts), as opposed to a bin or problems folder."""
    whole = StageDir.at(folder, "filter").layout.whole
    return (folder / f"{whole}{MARKER_SUFFIX}").is_file() or any(folder.glob(f"{whole}.part-*.parquet"))


def is_calibrate_folder(folder: Path) -> bool:
    """A `synthgen calibrate` output (its parts say so in their metadata), whatever the folder is called."""
    parts = sorted(folder.glob("*.part-*.parquet"))
    return bool(parts) and read_metadata(parts[0]).get("stage") == "calibrate"


def _one_split(folder: Path, stage: str, split: str) -> list[dict[str, Any]]:
    """A filter folder (never its rejects/) or a calibrate folder, every shard finished, as one split."""
    return [{**row, "difficulty": split} for path in _finished_parts(folder, stage) for row in _problems(path) or []]


def _file_rows(path: Path, *, skip_other: bool = False) -> list[dict[str, Any]]:
    """A problems table's rows; a row without a difficulty takes its folder's name."""
    rows = _problems(path)
    if rows is None and skip_other:
        log.warning("training data: %s is not a problems table (no env/code columns); skipped", path)
        return []
    if rows is None:
        raise UserError(f"{path} is not a problems table (needs env and code columns)")
    return [{**row, "difficulty": str(row.get("difficulty") or path.parent.name)} for row in rows]


def load_problem_rows(dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Scorable problem rows of the folders (see `scorable`), each with a `difficulty`."""
    return scorable(read_problem_rows(dirs), dirs, KEEP)


def read_problem_rows(dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Every row of the folders with all its columns and a `difficulty`, before any is left out."""
    raw: list[dict[str, Any]] = []
    for d in dirs:
        d = Path(d)
        if d.is_file() and d.suffix == ".parquet":
            raw.extend(_file_rows(d))
        elif (d / "links").is_dir() and (d / "problems").is_dir():
            raw.extend(_chain_rows(d))
        elif d.is_dir() and is_filter_folder(d):
            raw.extend(_one_split(d, "filter", KEPT_SPLIT))
        elif d.is_dir() and is_calibrate_folder(d):
            raw.extend(_one_split(d, "calibrate", CALIBRATED_SPLIT))
        elif d.is_dir():
            raw.extend(row for path in _finished_parts(d, "bin") for row in _file_rows(path, skip_other=True))
        else:
            raise UserError(f"training data not found: {d}")
    return raw


def scorable(raw: list[dict[str, Any]], dirs: Sequence[str | Path], keep: Sequence[str] | None) -> list[dict[str, Any]]:
    """The rows that can be scored (valid, with gold outputs), each problem once, sorted by problem id;
    `keep` names the columns kept (None: all)."""
    rows: dict[str, dict[str, Any]] = {}
    skipped: Counter[str] = Counter()
    for row in raw:
        why = None
        if row.get("valid") is False:
            why = "invalid"
        elif not row.get("outputs"):
            why = "no gold outputs"
        elif row.get("problem_id") is None:
            row["problem_id"] = records.problem_id(
                row["env"], row["code"] or "", row.get("inputs") or [], row.get("message")
            )
        if why is None and row["problem_id"] in rows:
            why = "duplicate"
        if why:
            skipped[why] += 1
            continue
        rows[row["problem_id"]] = row if keep is None else {k: row.get(k) for k in keep}
    if skipped:
        log.info("training data: skipped %s", ", ".join(f"{n} {why}" for why, n in sorted(skipped.items())))
    if not rows:
        raise UserError(f"no scorable problems under {', '.join(str(d) for d in dirs)}")
    return [rows[k] for k in sorted(rows)]


def to_dataset(rows: Sequence[dict], prompt_fn: PromptFn | None = None):
    """A `datasets.Dataset`: `prompt` (messages) plus the problem's columns, in a stable order."""
    from datasets import Dataset

    records = []
    for row in rows:
        try:
            messages = (prompt_fn or student_prompt)(row)
        except UserError:
            raise
        except Exception as exc:
            raise UserError(
                f"cannot render the student prompt of problem {row.get('problem_id')} ({row.get('env')}): {exc}"
            ) from None
        rec = dict(row)
        rec["prompt"] = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
        # Lists stay lists (never None) so that Arrow gives the column one type; other nulls are fine.
        rec["inputs"] = [str(x) for x in (rec.get("inputs") or [])]
        rec["outputs"] = [str(x) for x in (rec.get("outputs") or [])]
        records.append(rec)
    return Dataset.from_list(records)


def bin_counts(rows: Sequence[dict]) -> dict[str, int]:
    return dict(sorted(Counter(row["difficulty"] for row in rows).items()))
