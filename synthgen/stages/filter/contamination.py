"""Benchmark contamination check: word n-gram overlap between problems and reference texts.

The user gives reference files (Parquet, JSONL, JSONL.gz or a JSON array of objects) and the
columns that hold text, e.g. HumanEval's `prompt` and `canonical_solution`. Every text is cut
into lower-cased words (`\\w+`, so code and prose alike) and every run of `ngram` words (13 by
default, as in common decontamination practice) is indexed. A problem whose code, message,
inputs or tests share at least `min_matches` of those n-grams with the references is
contaminated; the detail names the reference row and the first shared n-gram.

Texts shorter than `ngram` words cannot match anything; that is the price of a low false
positive rate on short, generic snippets.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from synthgen.errors import UserError

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(tokens: Sequence[str], n: int) -> Iterator[str]:
    for i in range(len(tokens) - n + 1):
        yield " ".join(tokens[i : i + n])


@dataclass(frozen=True)
class Reference:
    source: str  # file name
    row: int  # 0-based row in that file
    text: str


def _rows_jsonl(path: Path) -> Iterator[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise UserError(f"reference file {path} line {number} is not JSON: {exc}") from None
            if not isinstance(row, dict):
                raise UserError(f"reference file {path} line {number} is not a JSON object")
            yield row


def _rows(path: Path, columns: Sequence[str]) -> list[dict]:
    name = path.name.lower()
    try:
        if name.endswith(".parquet"):
            import pyarrow as pa
            import pyarrow.parquet as pq

            try:
                schema = pq.read_schema(path)
                missing = [c for c in columns if c not in schema.names]
                if missing:
                    raise UserError(
                        f"reference file {path} has no column {missing[0]!r} (columns: {', '.join(schema.names)})"
                    )
                return pq.read_table(path, columns=list(columns)).to_pylist()
            except (pa.ArrowInvalid, OSError) as exc:
                raise UserError(f"cannot read reference file {path}: {str(exc).splitlines()[0]}") from None
        if name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
            return list(_rows_jsonl(path))
        if name.endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
                raise UserError(f"reference file {path} must hold a JSON array of objects")
            return data
    except FileNotFoundError:
        raise UserError(f"reference file not found: {path}") from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise UserError(f"cannot read reference file {path}: {exc}") from None
    except ValueError as exc:
        raise UserError(f"reference file {path} is not valid JSON: {exc}") from None
    raise UserError(f"reference file {path}: use .parquet, .jsonl, .jsonl.gz or .json")


def load_references(paths: Iterable[str | Path], columns: Sequence[str]) -> list[Reference]:
    """Every non-empty value of `columns` in every file, one Reference per (row, column)."""
    out: list[Reference] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise UserError(f"reference file not found: {path}")
        rows = _rows(path, columns)
        if rows and not any(c in rows[0] for c in columns):
            raise UserError(
                f"reference file {path} has none of the columns {', '.join(columns)} "
                f"(first row has: {', '.join(map(str, rows[0]))})"
            )
        for i, row in enumerate(rows):
            for column in columns:
                value = row.get(column)
                if value is not None and str(value).strip():
                    out.append(Reference(path.name, i, str(value)))
    return out


class ReferenceIndex:
    """Every word n-gram of the references, mapped to the first reference that holds it."""

    def __init__(self, references: Sequence[Reference], n: int = 13):
        self.n = n
        self.references = list(references)
        self._first: dict[str, int] = {}
        for idx, ref in enumerate(self.references):
            for gram in ngrams(words(ref.text), n):
                self._first.setdefault(gram, idx)

    def __len__(self) -> int:
        return len(self._first)

    def check(self, text: str, min_matches: int = 1) -> str | None:
        """None if clean; else a one-line description of the overlap."""
        need = max(1, min_matches)
        shared: list[str] = []
        for gram in dict.fromkeys(ngrams(words(text), self.n)):
            if gram in self._first:
                shared.append(gram)
                if len(shared) >= need:
                    break
        if len(shared) < need:
            return None
        ref = self.references[self._first[shared[0]]]
        return f"{self.n}-gram overlap with {ref.source} row {ref.row}: {shared[0]!r}"


def problem_text(
    code: str | None,
    message: str | None,
    inputs: Sequence[str] | None,
    pre_test_code: str | None = None,
    test_code: str | None = None,
) -> str:
    parts = [code or "", message or "", "\n".join(inputs or []), pre_test_code or "", test_code or ""]
    return "\n".join(p for p in parts if p)
