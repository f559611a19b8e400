"""The online run's Parquet log: what the pool held and when, written as it happens, cut back on resume.

One folder per table under OUTPUT/online/ (problems, turns, events, draws, buffer, controller), with
explicit schemas (synthgen.store.records.ONLINE_*); each part carries the schema version and the
settings hash and is written atomically. Rows are flushed every `log_every` steps, before every
checkpoint and at the end, so a checkpoint never refers to rows not on disk. A resumed run first
cuts every table back to its checkpoint's step (`truncate_after`), then appends: the log of a killed
and resumed run holds the rows an uninterrupted run would.

    import polars as pl
    pl.read_parquet("OUTPUT/online/events/*.parquet").filter(pl.col("event") == "admit")
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from synthgen.store import records
from synthgen.store.files import file_metadata, write_parquet_atomic

TABLES: dict[str, pa.Schema] = {
    "problems": records.ONLINE_PROBLEMS,
    "turns": records.ONLINE_TURNS,
    "events": records.ONLINE_EVENTS,
    "draws": records.ONLINE_DRAWS,
    "buffer": records.ONLINE_BUFFER,
    "controller": records.ONLINE_CONTROLLER,
}


class OnlineLog:
    """Buffered rows per table; only the main process writes (`enabled`)."""

    def __init__(self, root: Path, settings_hash: str, *, enabled: bool = True):
        self.root, self.settings_hash, self.enabled = Path(root), settings_hash, enabled
        self.rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}

    def add(self, table: str, row: dict[str, Any]) -> None:
        if self.enabled:
            self.rows[table].append(row)

    def flush(self) -> None:
        if not self.enabled:
            return
        for name, rows in self.rows.items():
            if not rows:
                continue
            parts = self.parts(name)  # part-000007.parquet: the numbers sort as the names do
            number = int(parts[-1].stem.split("-", 1)[1]) + 1 if parts else 0
            table = records.table_from_rows(rows, TABLES[name])
            meta = file_metadata(f"train/online/{name}", self.settings_hash)
            write_parquet_atomic(self.root / name / f"part-{number:06d}.parquet", table, meta)
            rows.clear()

    def parts(self, name: str) -> list[Path]:
        folder = self.root / name
        return sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []

    def read(self, name: str) -> pa.Table:
        parts = self.parts(name)
        if not parts:
            return TABLES[name].empty_table()
        return pa.concat_tables(pq.read_table(p, schema=TABLES[name]) for p in parts)

    def truncate_after(self, step: int) -> None:
        """Drop every row of a step after `step` (a resumed run redoes those steps)."""
        if not self.enabled:
            return
        for rows in self.rows.values():
            rows.clear()
        for name in TABLES:
            for part in self.parts(name):
                table = pq.read_table(part, schema=TABLES[name])
                keep = table.filter(pc.less_equal(table["step"], step))
                if keep.num_rows == table.num_rows:
                    continue
                if keep.num_rows == 0:
                    part.unlink()
                else:
                    write_parquet_atomic(part, keep, file_metadata(f"train/online/{name}", self.settings_hash))

    def clear(self) -> None:
        """A fresh run: no rows of an earlier run stay behind."""
        if not self.enabled:
            return
        for name in TABLES:
            shutil.rmtree(self.root / name, ignore_errors=True)
            self.rows[name].clear()
