"""Where a benchmark's rows come from, and the `EvalItem`s the eval loop samples and scores.

    rows = benchmark_rows("math500", settings.math500, settings.data_dir)   # list of dicts, the data set's columns
    item = EvalItem("lcb", "abc301_a", ("2024.08-2025.05", "v5-easy"), messages, score)
    reward = await item.score(completion_text, truncated)     # synthgen.envs.problem.Reward

A local copy is DATA_DIR/<benchmark>.parquet, .jsonl, .jsonl.gz or .json, or a DATA_DIR/<benchmark>/
folder of them, in the data set's own layout. `--data-dir` means offline: a benchmark without a
local copy there is one line naming the file looked for, and the hub is never asked. Without it
the data set comes from `datasets.load_dataset(id, config, split=...)`; offline, or without
`datasets`, that is one line naming the data set and how to point at a local copy. Every row's
columns are checked against the benchmark's `Column`s before anything is scored: a wrong type is
one line naming the file (or data set), the row and the column.

A Reward with value None (status "infra") is an infrastructure failure: never written, never
counted. `choose(items, n, seed)` is the seeded subset of `--max-problems`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from synthgen.envs.problem import Reward
from synthgen.errors import UserError

Score = Callable[[str, bool], Awaitable[Reward]]

LOCAL_SUFFIXES = (".parquet", ".jsonl", ".jsonl.gz", ".json")


def local_files(data_dir: Path | None, name: str) -> list[Path]:
    """The local copy of benchmark `name` under `data_dir`, or [] when there is none."""
    if data_dir is None:
        return []
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise UserError(f"--data-dir {data_dir} is not a folder")
    found = [data_dir / f"{name}{suffix}" for suffix in LOCAL_SUFFIXES if (data_dir / f"{name}{suffix}").is_file()]
    folder = data_dir / name
    if folder.is_dir():
        found += sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(LOCAL_SUFFIXES))
    return found


@dataclass(frozen=True)
class Column:
    """A column a benchmark reads: its spellings (mirrors differ), the types it may hold, if required."""

    names: tuple[str, ...]
    types: tuple[type, ...]
    required: bool = True


TYPE_WORDS = {str: "text", int: "an integer", float: "a number", list: "a list", dict: "a mapping"}


def check_rows(rows: list[dict], columns: Sequence[Column], where: str) -> list[dict]:
    """`rows` unchanged if every row's columns have their types; else a one-line UserError."""
    for number, row in enumerate(rows, 1):
        for col in columns:
            name = next((n for n in col.names if row.get(n) is not None), None)
            if name is None and col.required:
                raise UserError(f"{where}: row {number} lacks column {col.names[0]!r} (columns: {', '.join(row)})")
            value = row.get(name)
            if name is not None and (isinstance(value, bool) or not isinstance(value, col.types)):
                wanted = " or ".join(TYPE_WORDS.get(t, t.__name__) for t in col.types)
                raise UserError(
                    f"{where}: row {number}: column {name!r} holds {type(value).__name__} {str(value)[:40]!r}, "
                    f"expected {wanted}"
                )
    return rows


def read_local(paths: list[Path], columns: Sequence[Column] = ()) -> list[dict]:
    return [row for path in paths for row in check_rows(_read_file(path), columns, str(path))]


def _read_file(path: Path) -> list[dict]:
    try:
        if path.name.lower().endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
        if path.name.lower().endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            rows = data if isinstance(data, list) else data.get("rows") or data.get("data") or []
            return [r for r in rows if isinstance(r, dict)]
        return list(_jsonl(path))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise UserError(f"cannot read {path} as Parquet: {str(exc).splitlines()[0]}") from None


def _jsonl(path: Path) -> Iterator[dict]:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {number} is not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise ValueError(f"line {number} is not a JSON object")
            yield row


def hub_rows(name: str, dataset: str, config: str | None, split: str) -> list[dict]:
    """Rows of a Hugging Face data set; any failure to get it is one line that says what to do."""
    where = f"{dataset}" + (f" ({config})" if config else "") + f", split {split}"
    hint = f"download it while online, or give a local copy: --data-dir DIR with DIR/{name}.parquet or DIR/{name}.jsonl"
    try:
        import datasets
    except ImportError:
        raise UserError(
            f"{name}: loading {where} needs the `datasets` package (pip install 'synthgen[eval]'); or {hint}"
        ) from None
    try:
        loaded = datasets.load_dataset(dataset, config, split=split)
    except Exception as exc:  # offline, unknown id, missing split: the datasets library raises many kinds
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise UserError(f"{name}: data set {where} is not available here ({first}); {hint}") from None
    return [dict(row) for row in loaded]


def benchmark_rows(name: str, bench, data_dir: Path | None, columns: Sequence[Column] = ()) -> list[dict]:
    """The rows of benchmark `name` (BenchSettings `bench`), their columns checked: the local copy
    under `data_dir` (which must be there: `--data-dir` means offline), else the hub."""
    local = local_files(data_dir, name)
    if local:
        rows = read_local(local, columns)
        if not rows:
            raise UserError(f"{name}: the local copy ({', '.join(map(str, local))}) holds no rows")
        return rows
    if data_dir is not None:
        raise UserError(
            f"{name}: no local copy in --data-dir {data_dir}: expected {Path(data_dir) / name}.jsonl "
            f"(or .parquet, .jsonl.gz, .json, or a {name}/ folder of them); --data-dir reads nothing from the hub"
        )
    return check_rows(hub_rows(name, bench.dataset, bench.config, bench.split), columns, f"{name} ({bench.dataset})")


def column(row: dict, *names: str, default=None):
    """The first of `names` the row has (data set mirrors spell columns differently)."""
    return next((row[name] for name in names if row.get(name) is not None), default)


@dataclass
class EvalItem:
    benchmark: str
    problem_id: str
    splits: tuple[str, ...]
    messages: list[dict]
    score: Score


def choose(items: Sequence[EvalItem], limit: int | None, seed: int) -> list[EvalItem]:
    """At most `limit` items, a choice that depends only on the ids and the seed (stable across runs)."""
    items = list(items)
    if limit is None or len(items) <= limit:
        return items
    key = lambda item: hashlib.sha256(f"{seed}:{item.problem_id}".encode()).hexdigest()  # noqa: E731
    chosen = {id(i) for i in sorted(items, key=key)[:limit]}
    return [i for i in items if id(i) in chosen]


def env_scorer(env, problem, pool, sandbox) -> Score:
    """An item's score through an environment's own verifier (contest, induction, ...)."""

    async def score(text: str, truncated: bool) -> Reward:
        return await env.score(problem, text, pool, sandbox, truncated=truncated)

    return score
