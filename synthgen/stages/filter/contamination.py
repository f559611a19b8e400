"""Benchmark contamination check: word n-gram overlap between problems and reference texts.

Reference files (Parquet, JSONL(.gz) or JSON, read as synthgen.evals.data.read_local reads local
copies) give texts in the chosen columns, e.g. HumanEval's `prompt` and `canonical_solution`. Every
text is cut into lower-cased words (`\\w+`, code and prose alike) and every run of `ngram` words
(13 by default, as in common decontamination practice) is indexed. A problem whose code, message,
inputs or tests share at least `min_matches` of those n-grams is contaminated; the detail names the
reference row and the first shared n-gram. Texts shorter than `ngram` words match nothing: the
price of few false positives on short, generic snippets.

The evaluation benchmarks (`benchmarks`: lcb, humaneval, math500, aime2024) are references too,
read where `synthgen eval` reads them (synthgen.evals.data, with the data set ids and splits of
synthgen.evals.settings; LiveCodeBench cut to its evaluation window), so problems are checked
against what the models will be evaluated on. A problem whose MinHash similarity with a benchmark
text reaches `minhash_threshold` is contaminated too (`minhash_matches`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.evals.data import read_local

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


def load_references(paths: Iterable[str | Path], columns: Sequence[str]) -> list[Reference]:
    """Every non-empty value of `columns` in every file, one Reference per (row, column)."""
    out: list[Reference] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_file():
            raise UserError(f"reference file not found: {path}")
        name = path.name.lower()
        if not name.endswith((".parquet", ".jsonl", ".jsonl.gz", ".ndjson", ".json")):
            raise UserError(f"reference file {path}: use .parquet, .jsonl, .jsonl.gz or .json")
        try:  # read_local takes a JSON object's "rows" and skips non-objects: here a .json must be exact
            rows = json.loads(path.read_text(encoding="utf-8")) if name.endswith(".json") else read_local([path])
        except ValueError as exc:
            raise UserError(f"reference file {path} is not valid JSON: {exc}") from None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise UserError(f"reference file {path} must hold a JSON array of objects")
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


def problem_text(code: str | None, message: str | None, inputs: Sequence[str] | None, *tests: str | None) -> str:
    """A problem's checked text: code, message, inputs and test code (pre_test_code, test_code)."""
    return "\n".join(p for p in (code, message, "\n".join(inputs or []), *tests) if p)


def _texts(row: dict, *columns: str) -> str:
    return "\n".join(str(row[c]) for c in columns if row.get(c) is not None)


def benchmark_references(names, data_dir: Path | None) -> tuple[list[Reference], dict[str, dict[str, Any]]]:
    """Reference texts of the benchmarks `names`, and what was loaded of each."""
    from synthgen.evals import humaneval
    from synthgen.evals.data import benchmark_rows, local_files
    from synthgen.evals.lcb import contest_date
    from synthgen.evals.settings import AIMESettings, LCBSettings, Math500Settings

    refs: list[Reference] = []
    versions: dict[str, dict[str, Any]] = {}
    for name in names:
        local = [str(p) for p in local_files(data_dir, name)]
        if name == "lcb":
            s = LCBSettings()
            dates = [(r, contest_date(r)) for r in benchmark_rows(name, s, data_dir)]
            rows = [r for r, d in dates if d is not None and s.start <= d <= s.end]
            texts = [
                (r.get("question_id", i), _texts(r, "question_content", "starter_code")) for i, r in enumerate(rows)
            ]
            version = {"dataset": s.dataset, "config": s.config, "split": s.split, "window": f"{s.start}..{s.end}"}
        elif name == "humaneval":
            rows = humaneval.rows(data_dir)
            texts = [(r.get("task_id", i), _texts(r, "prompt", "canonical_solution")) for i, r in enumerate(rows)]
            version = {"dataset": "openai/human-eval (HumanEval.jsonl.gz)", "split": "test"}
        elif name in ("math500", "aime2024"):
            s = Math500Settings() if name == "math500" else AIMESettings()
            rows = benchmark_rows(name, s, data_dir)
            texts = [
                (r.get("unique_id") or r.get("id") or i, _texts(r, "problem", "solution")) for i, r in enumerate(rows)
            ]
            version = {"dataset": s.dataset, "config": s.config, "split": s.split}
        else:
            raise ValueError(f"unknown benchmark {name!r}")
        if local:
            version["local_copy"] = local
        version["texts"] = len(texts)
        versions[name] = version
        refs += [Reference(f"{name}:{key}", i, text) for i, (key, text) in enumerate(texts) if text.strip()]
    return refs, versions


def minhash_matches(texts, refs: list[Reference], params, threshold: float) -> dict[int, str]:
    """{index: detail} for (code, message) `texts` whose estimated Jaccard (MinHash signatures of
    synthgen.stages.filter.dedup) with a reference text reaches `threshold`. Code is compared with code and prose
    with prose (synthgen.stages.filter.dedup shingles them differently): each reference is signed both ways, a
    problem's code and message each one way, and the larger similarity wins. Texts without a
    shingle never match."""
    import numpy as np

    from synthgen.stages.filter import dedup

    if not texts or not refs:
        return {}
    empty = np.uint32(0xFFFFFFFF)
    best = np.zeros(len(texts))
    which = np.zeros(len(texts), dtype=np.int64)
    for side in (0, 1):
        mine = [(c, None) if side == 0 else (None, m) for c, m in texts]
        problems = dedup.signatures(mine, params, workers=1)
        theirs = dedup.signatures([(r.text, None) if side == 0 else (None, r.text) for r in refs], params, workers=1)
        void = (theirs == empty).all(axis=1)
        for start in range(0, len(texts), 256):
            block = problems[start : start + 256]
            similar = (block[:, None, :] == theirs[None, :, :]).mean(axis=2)
            similar[:, void] = 0.0
            similar[(block == empty).all(axis=1), :] = 0.0
            top, arg = similar.max(axis=1), similar.argmax(axis=1)
            better = top > best[start : start + 256]
            best[start : start + 256][better] = top[better]
            which[start : start + 256][better] = arg[better]
    return {
        int(k): f"MinHash Jaccard {best[k]:.2f} with {refs[which[k]].source} (threshold {threshold})"
        for k in np.flatnonzero(best >= threshold)
    }
