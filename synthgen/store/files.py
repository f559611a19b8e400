"""Atomic files: a Parquet part or a text file either exists whole or not at all (temp file, fsync,
rename), two folders swap in one step, and readers list only finished files."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from synthgen import __version__
from synthgen.errors import OutOfSpace, is_out_of_space
from synthgen.store import record_checks as checks
from synthgen.store.records import SCHEMA_VERSION


def file_metadata(stage: str, settings_hash: str, extra: dict[str, Any] | None = None) -> dict[str, str]:
    meta = {"schema_version": SCHEMA_VERSION, "settings_hash": settings_hash, "stage": stage, "version": __version__}
    meta |= {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in (extra or {}).items()}
    return {checks.META_PREFIX + k: v for k, v in meta.items()}


def write_parquet_atomic(path: Path, table: pa.Table, metadata: dict[str, str] | None = None) -> Path:
    """Write `table` to `path` so that `path` either does not exist or is complete."""
    if metadata:
        merged = {**(table.schema.metadata or {}), **{k.encode(): v.encode() for k, v in metadata.items()}}
        table = table.replace_schema_metadata(merged)
    return _write_atomic(Path(path), lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def write_text_atomic(path: Path, text: str) -> Path:
    return _write_atomic(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _write_atomic(path: Path, write: Callable[[Path], object]) -> Path:
    """`write` to a temp file beside `path`, fsync it, rename it over `path`; a full disk is OutOfSpace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp-{os.getpid()}"
    try:
        write(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        if is_out_of_space(exc):
            raise OutOfSpace(path, exc) from None
        raise
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """`_fsync` a folder where the filesystem allows it (where it does not, there is nothing to do)."""
    with contextlib.suppress(OSError):
        _fsync(path)


def read_metadata(path: Path) -> dict[str, str]:
    """The synthgen.* metadata of a Parquet file, without the prefix."""
    return checks.file_metadata_of(checks.read_schema(Path(path)))


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False where not supported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def list_parquet(folder: Path, *, recursive: bool = False) -> list[Path]:
    """Finished Parquet files in `folder`: never temp files or anything under a dot-folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = folder.rglob("*.parquet") if recursive else folder.glob("*.parquet")
    return sorted(
        p for p in found if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
