"""The paper's disjoint baseline for chains: per level, problems from independent lineages whose
pass-rate histogram matches the chained set's (SPEC §7).

For each level, every chained problem is matched to the unused candidate in the same band with
the nearest pass rate, and no two picks (nor any chain) share a lineage. The distance between
the chained and the disjoint histograms (total variation over `histogram_bins` bins of [0, 1])
is reported per level, so a user can see how well the baseline is matched.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from rich.console import Console

from synthgen.config.chain import ChainSettings
from synthgen.record_checks import DISJOINT_SPEC, LEVELS
from synthgen.records import PROBLEMS, table_from_rows
from synthgen.shards import StageDir, file_metadata, write_text_atomic
from synthgen.stages.common import read_input

DISJOINT = DISJOINT_SPEC.schema  # PROBLEMS plus a non-null `difficulty`


def histogram_distance(a: list[float], b: list[float], bins: int) -> float:
    """Total variation distance between the normalised histograms of `a` and `b` over [0, 1]."""
    if not a or not b:
        return 1.0
    edges = np.linspace(0.0, 1.0, bins + 1)
    ha, _ = np.histogram(a, bins=edges)
    hb, _ = np.histogram(b, bins=edges)
    return float(0.5 * np.abs(ha / ha.sum() - hb / hb.sum()).sum())


def match_level(targets: list[float], candidates: pl.DataFrame, used_lineages: set[str]) -> list[dict]:
    """Greedy nearest-pass-rate matching (ties: lowest problem id); each lineage used once."""
    pool = candidates.sort(["pass_rate", "problem_id"]).to_dicts()
    taken = [False] * len(pool)
    picks = []
    for target in sorted(targets):
        free = (j for j, row in enumerate(pool) if not taken[j] and row["lineage_id"] not in used_lineages)
        best = min(free, key=lambda j: (abs(pool[j]["pass_rate"] - target), j), default=None)
        if best is None:
            break
        taken[best] = True
        used_lineages.add(pool[best]["lineage_id"])
        picks.append(pool[best])
    return picks


def write_disjoint(settings: ChainSettings, console: Console) -> dict:
    run_dir = Path(settings.run_dir)
    links = StageDir.of(run_dir, "chain/links").status()
    if not links.parts:
        console.print("chain: no accepted chains, so no disjoint baseline")
        return {}
    chained = links.read()
    pool = read_input(settings, "filter", console, "chain --disjoint", hint=", or pass --input-dir").read()
    pool = pool.filter(pl.col("valid") & pl.col("pass_rate").is_not_null())
    starts = set(chained.filter(pl.col("level") == "hard")["problem_id"])
    used = set(pool.filter(pl.col("problem_id").is_in(list(starts)))["lineage_id"])
    rows, report = [], {}
    for level in LEVELS:
        lo, hi = settings.bands[level]
        targets = chained.filter(pl.col("level") == level)["pass_rate"].to_list()
        candidates = pool.filter(pl.col("pass_rate").is_between(lo, hi) & ~pl.col("lineage_id").is_in(list(used)))
        picks = match_level(targets, candidates, used)
        distance = histogram_distance(targets, [p["pass_rate"] for p in picks], settings.histogram_bins)
        report[level] = {"chained": len(targets), "disjoint": len(picks), "histogram_distance": round(distance, 4)}
        rows += [{**{k: p.get(k) for k in PROBLEMS.names}, "difficulty": level} for p in picks]
    out = StageDir.of(run_dir, "chain/disjoint")
    meta = file_metadata(out.stage, settings.settings_hash(), {"report": report})
    # Built beside the old baseline and swapped in: a killed run leaves the old one or none.
    with out.rebuild() as build:
        build.write_part(out.whole_shard, 0, table_from_rows(rows, DISJOINT), meta)
        build.mark_done(out.whole_shard, {"settings_hash": settings.settings_hash(), **report})
    write_text_atomic(run_dir / "chain" / "disjoint.json", json.dumps(report, indent=1) + "\n")
    for level, figures in report.items():
        console.print(f"chain --disjoint {level}: {figures['disjoint']}/{figures['chained']} matched, "
                      f"histogram distance {figures['histogram_distance']:.3f} (total variation)")
    return report
