"""Parquet shard IO: atomic writes, completion markers, reading a whole stage.

Layout of one stage under a run directory::

    <run_dir>/<stage>/
        <shard>.part-00000.parquet   rows, written atomically (temp file + fsync + rename)
        <shard>.part-00001.parquet
        <shard>.done                 JSON marker: the shard finished, with its row count and hash
        .<name>.tmp-<pid>            a write in progress; never read, removed by the next writer

A part file exists only once complete, so a reader never sees a half-written file; a shard is
finished only when its `.done` marker exists, so a re-run skips exactly the finished shards.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from synthgen import __version__
from synthgen.errors import UserError
from synthgen.records import SCHEMA_VERSION

META_PREFIX = "synthgen."


def file_metadata(stage: str, settings_hash: str, extra: dict[str, Any] | None = None) -> dict[str, str]:
    meta = {
        "schema_version": SCHEMA_VERSION,
        "settings_hash": settings_hash,
        "stage": stage,
        "version": __version__,
    }
    for key, value in (extra or {}).items():
        meta[key] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return {META_PREFIX + k: v for k, v in meta.items()}


def write_parquet_atomic(path: Path, table: pa.Table, metadata: dict[str, str] | None = None) -> Path:
    """Write `table` to `path` so that `path` either does not exist or is complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if metadata:
        merged = dict(table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in metadata.items()})
        table = table.replace_schema_metadata(merged)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        pq.write_table(table, tmp, compression="zstd")
        _fsync(tmp)
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_metadata(path: Path) -> dict[str, str]:
    """The synthgen.* metadata of a Parquet file, without the prefix."""
    raw = pq.read_schema(path).metadata or {}
    out = {}
    for key, value in raw.items():
        k = key.decode()
        if k.startswith(META_PREFIX):
            out[k[len(META_PREFIX):]] = value.decode()
    return out


class StageDir:
    """One stage's folder in a run: finished part files plus per-shard completion markers."""

    def __init__(self, run_dir: Path, stage: str):
        self.run_dir = Path(run_dir)
        self.stage = stage
        self.path = self.run_dir / stage

    def __repr__(self) -> str:
        return f"StageDir({str(self.path)!r})"

    # -- writing -------------------------------------------------------------------------
    def part_path(self, shard: str, index: int) -> Path:
        return self.path / f"{shard}.part-{index:05d}.parquet"

    def write_part(self, shard: str, index: int, table: pa.Table, metadata: dict[str, str]) -> Path:
        return write_parquet_atomic(self.part_path(shard, index), table, metadata)

    def marker_path(self, shard: str) -> Path:
        return self.path / f"{shard}.done"

    def mark_done(self, shard: str, info: dict[str, Any]) -> None:
        write_text_atomic(self.marker_path(shard), json.dumps(info, sort_keys=True, indent=1) + "\n")

    def is_done(self, shard: str) -> bool:
        return self.marker_path(shard).is_file()

    def done_info(self, shard: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.marker_path(shard).read_text())
        except (OSError, ValueError):
            return None

    def shard_parts(self, shard: str) -> list[Path]:
        return sorted(self.path.glob(f"{shard}.part-*.parquet"))

    def clear_shard(self, shard: str) -> None:
        """Remove a shard's parts, marker and stale temp files (before rewriting it whole)."""
        for p in self.shard_parts(shard):
            p.unlink(missing_ok=True)
        self.marker_path(shard).unlink(missing_ok=True)
        self.remove_stale_temps(shard)

    def remove_stale_temps(self, shard: str) -> None:
        """Temp files a killed writer of `shard` left behind (other shards' writers may be live)."""
        if self.path.is_dir():
            for p in self.path.glob(f".{shard}.*.tmp-*"):
                p.unlink(missing_ok=True)

    # -- reading -------------------------------------------------------------------------
    def parts(self) -> list[Path]:
        if not self.path.is_dir():
            return []
        return sorted(p for p in self.path.glob("*.parquet") if not p.name.startswith("."))

    def done_shards(self) -> list[str]:
        if not self.path.is_dir():
            return []
        return sorted(p.name[: -len(".done")] for p in self.path.glob("*.done"))

    def exists(self) -> bool:
        return bool(self.parts())

    def read_table(self) -> pa.Table:
        return read_parquet_files(self.parts(), what=f"stage {self.stage!r} in {self.run_dir}")

    def read(self) -> pl.DataFrame:
        return pl.from_arrow(self.read_table())


def read_parquet_files(paths: list[Path], *, what: str) -> pa.Table:
    """Concatenate Parquet files; a missing, corrupt or mismatched file is a one-line UserError."""
    if not paths:
        raise UserError(f"no Parquet files found for {what}")
    tables = []
    for p in paths:
        try:
            tables.append(pq.read_table(p))
        except FileNotFoundError:
            raise UserError(f"file not found: {p}") from None
        except (pa.ArrowInvalid, OSError) as exc:
            raise UserError(f"cannot read Parquet file {p}: {str(exc).splitlines()[0]}") from None
    try:
        return pa.concat_tables(tables, promote_options="default")
    except pa.ArrowInvalid as exc:
        raise UserError(f"Parquet files of {what} do not share a schema: {str(exc).splitlines()[0]}") from None
