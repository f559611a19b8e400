"""Where seed snippets come from: source trees, starcoderdata-style Parquet, solution files, and the
solved completions a training run logged (`train --save-completions`).

Each source yields `Document`s (an origin plus its text); `stages.seeds` cuts windows from them.
Every problem with a path or a file is a one-line UserError naming it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from synthgen.errors import UserError
from synthgen.store.record_checks import compatible
from synthgen.text import safe_text

# starcoderdata names its repository and path columns like this; others use plain names.
REPO_COLUMNS = ("max_stars_repo_name", "repo_name", "repo")
PATH_COLUMNS = ("max_stars_repo_path", "path", "file_path")
ID_COLUMNS = ("problem_id", "id", "task_id")


@dataclass(frozen=True)
class Document:
    origin: str
    text: str
    repo: str | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        # Text from user files (JSON escapes, undecodable file names) made safe once, here.
        for name in ("origin", "text", "repo", "path"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, safe_text(value))


def default_source_dir() -> Path:
    """The running Python's standard library: present on every machine, no download needed."""
    return Path(sysconfig.get_paths()["stdlib"])


# Installed third-party packages live inside the standard library's folder; the default source
# leaves them out, so the same Python version gives the same seeds whatever else is installed.
THIRD_PARTY_DIRS = frozenset({"site-packages", "dist-packages"})


def iter_dir(paths: list[str], extensions: list[str]) -> Iterator[Document]:
    roots = [Path(p) for p in paths] or [default_source_dir()]
    skip = frozenset() if paths else THIRD_PARTY_DIRS
    for root in roots:
        if not root.exists():
            raise UserError(f"source path not found: {root}")
    exts = tuple(e if e.startswith(".") else "." + e for e in extensions)
    for root in roots:
        files = [root] if root.is_file() else sorted(_walk(root, exts, skip))
        for file in files:
            try:
                text = file.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue  # binary or unreadable files inside a tree are not seeds; skip quietly
            yield Document(origin=str(file), text=text, path=str(file))


def _walk(root: Path, exts: tuple[str, ...], skip: frozenset[str] = frozenset()) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__" and d not in skip)
        for name in filenames:
            if name.endswith(exts):
                yield Path(dirpath) / name


def _open_parquet(file: Path) -> pq.ParquetFile:
    if not file.is_file():
        raise UserError(f"file not found: {file}")
    try:
        return pq.ParquetFile(file)
    except (pa.ArrowInvalid, OSError) as exc:
        raise UserError(f"cannot read Parquet file {file}: {str(exc).splitlines()[0]}") from None


def _pick(names: list[str], candidates: tuple[str, ...]) -> str | None:
    return next((c for c in candidates if c in names), None)


def iter_parquet(files: list[str], text_column: str, *, id_columns: tuple[str, ...] = ()) -> Iterator[Document]:
    """Rows of Parquet shards; `text_column` holds the code."""
    if not files:
        raise UserError("no input files given")
    for name in files:
        file = Path(name)
        pf = _open_parquet(file)
        columns = pf.schema_arrow.names
        if text_column not in columns:
            raise UserError(f"{file} has no column {text_column!r} (columns: {', '.join(columns)})")
        found = pf.schema_arrow.field(text_column).type
        if not compatible(found, pa.string()):
            raise UserError(f"{file}: column {text_column!r} is {found}, expected string (the code as text)")
        repo_col = _pick(columns, REPO_COLUMNS)
        path_col = _pick(columns, PATH_COLUMNS)
        id_col = _pick(columns, id_columns)
        wanted = [c for c in (text_column, repo_col, path_col, id_col) if c]
        row = 0
        try:
            for batch in pf.iter_batches(columns=wanted, batch_size=1024):
                data = batch.to_pydict()
                for i, text in enumerate(data[text_column]):
                    repo, path, ident = (data[c][i] if c else None for c in (repo_col, path_col, id_col))
                    if ident is not None:
                        origin = f"{file}#{ident}"
                    elif repo or path:
                        origin = f"{repo or ''}:{path or ''}"
                    else:
                        origin = f"{file}#{row + i}"
                    yield Document(origin=origin, text=text or "", repo=repo, path=path)
                row += batch.num_rows
        except (pa.ArrowInvalid, OSError) as exc:
            raise UserError(f"cannot read Parquet file {file}: {str(exc).splitlines()[0]}") from None


def iter_jsonl(files: list[str], text_column: str) -> Iterator[Document]:
    for name in files:
        file = Path(name)
        if not file.is_file():
            raise UserError(f"file not found: {file}")
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read {file}: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise UserError(f"{file}:{number}: not a JSON object") from None
            if not isinstance(record, dict) or text_column not in record:
                raise UserError(f"{file}:{number}: no {text_column!r} field")
            ident = next((record[c] for c in ID_COLUMNS if c in record), None)
            origin = f"{file}#{ident}" if ident is not None else f"{file}:{number}"
            yield Document(origin=origin, text=str(record[text_column] or ""), path=str(file))


def iter_solutions(files: list[str], code_column: str) -> Iterator[Document]:
    if not files:
        raise UserError("no input files given")
    for name in files:
        if name.endswith((".jsonl", ".json")):
            yield from iter_jsonl([name], code_column)
        else:
            yield from iter_parquet([name], code_column, id_columns=ID_COLUMNS)


_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)```", re.S)


def solution_code(text: str) -> str | None:
    """The last fenced code block of a completion that parses as Python (parsed, never run), else None."""
    for block in reversed(_FENCE.findall(text or "")):
        try:
            ast.parse(block)
        except (SyntaxError, ValueError):
            continue
        if block.strip():
            return block
    return None


def completion_files(paths: list[str]) -> list[Path]:
    """The completion files of training runs: OUTPUT/completions/*.parquet (or such a folder, or files)."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_file():
            files.append(path)
        elif (path / "completions").is_dir():
            files += sorted((path / "completions").glob("*.parquet"))
        elif path.is_dir():
            files += sorted(path.glob("*.parquet"))
        else:
            raise UserError(f"training output not found: {path}")
    if not files:
        raise UserError(
            f"no logged completions under {', '.join(paths)}; train with --save-completions solved (or all)"
        )
    return files


def iter_completions(paths: list[str]) -> Iterator[Document]:
    """The solved completions (reward 1) of training runs, as their code: one whole solution each."""
    if not paths:
        raise UserError("no training output given (the folder `synthgen train --output` wrote)")
    for file in completion_files(paths):
        table = _open_parquet(file).read(columns=["problem_id", "round", "completion", "reward"])
        for i, row in enumerate(table.to_pylist()):
            if row["reward"] is None or float(row["reward"]) < 1.0:
                continue
            code = solution_code(row["completion"])
            if code is not None:
                yield Document(origin=f"{file}#{row['problem_id']}:{row['round']}:{i}", text=code, path=str(file))
