"""Where a benchmark's rows come from: a local copy under `--data-dir`, else the Hugging Face hub.

    rows = benchmark_rows("math500", settings.math500, settings.data_dir)   # list of dicts, the data set's columns

A local copy is DATA_DIR/<benchmark>.parquet, .jsonl or .jsonl.gz, or a DATA_DIR/<benchmark>/
folder of such files, in the data set's own layout (the columns the hub gives). Without one the
data set is loaded with `datasets.load_dataset(id, config, split=...)`; offline, or without the
`datasets` package, that is one line naming the data set and how to point at a local copy.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

from synthgen.errors import UserError

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


def read_local(paths: list[Path]) -> list[dict]:
    rows: list[dict] = []
    for path in paths:
        rows.extend(_read_file(path))
    return rows


def _read_file(path: Path) -> list[dict]:
    try:
        if path.name.endswith(".parquet"):
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
        if path.name.endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            rows = data if isinstance(data, list) else data.get("rows") or data.get("data") or []
            return [r for r in rows if isinstance(r, dict)]
        return list(_jsonl(path))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise UserError(f"cannot read {path} as Parquet: {str(exc).splitlines()[0]}") from None


def _jsonl(path: Path) -> Iterator[dict]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
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


def benchmark_rows(name: str, bench, data_dir: Path | None) -> list[dict]:
    """The rows of benchmark `name` (BenchSettings `bench`): the local copy if there is one, else the hub."""
    local = local_files(data_dir, name)
    if local:
        rows = read_local(local)
        if not rows:
            raise UserError(f"{name}: the local copy ({', '.join(map(str, local))}) holds no rows")
        return rows
    return hub_rows(name, bench.dataset, bench.config, bench.split)


def column(row: dict, *names: str, default=None):
    """The first of `names` the row has (data set mirrors spell columns differently)."""
    for name in names:
        if name in row and row[name] is not None:
            return row[name]
    return default
