"""`synthgen chain --disjoint`: the paper's baseline for chains (its Section 4.2), written beside them.

Do chains help because their levels are related, or only because of their difficulty mix? The
baseline has the same mix and no relations: for each level and each chained problem, the unused
kept problem (`RUN_DIR/filter/`) with the closest pass rate, from a lineage no chain and no other
pick comes from. The picks go to `RUN_DIR/chain/disjoint/` with a `difficulty` column.

Per level it reports how many chained problems found a partner and how far apart the two
pass-rate histograms are (total variation over `histogram_bins` bins: 0 = the same mix, 1 = no
overlap); few matches or a large distance mean the run has too few independent problems near
those pass rates for a fair comparison. The same figures go to `RUN_DIR/chain/disjoint.json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from rich.console import Console

from synthgen.stages.chain.settings import ChainSettings
from synthgen.store.bins import SCHEMES
from synthgen.store.files import file_metadata, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.readiness import WholeStage
from synthgen.store.record_checks import DISJOINT_SPEC, LEVELS
from synthgen.store.records import PROBLEMS, table_from_rows

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


def disjoint_finished(settings: ChainSettings) -> bool:
    """`chain/disjoint/` is marked finished with these settings (a killed build leaves no marker)."""
    run_dir = Path(settings.run_dir)
    out = StageDir(run_dir, "chain/disjoint")
    marked = (out.done_info(out.whole_shard) or {}).get("settings_hash") == settings.settings_hash()
    return marked and (run_dir / "chain" / "disjoint.json").is_file()


class DisjointStage(WholeStage):
    """Reads the chains (chain/links) and the kept problems (filter/); builds chain/disjoint/."""

    settings: ChainSettings

    def build(self, build: StageDir) -> dict:
        run_dir = Path(self.settings.run_dir)
        chained = StageDir(run_dir, "chain/links").status().read()
        # The pool is every kept problem (the filter stage), not the bin folder the chains start from.
        pool = StageDir(run_dir, "filter").require_complete(self.settings.allow_partial).read()
        pool = pool.filter(pl.col("valid") & pl.col("pass_rate").is_not_null())
        starts = set(chained.filter(pl.col("level") == "hard")["problem_id"])
        used = set(pool.filter(pl.col("problem_id").is_in(list(starts)))["lineage_id"])
        rows = []
        for level in LEVELS:
            targets = chained.filter(pl.col("level") == level)["pass_rate"].to_list()
            # The level's `chains` band, widened to the chained pass rates (hard starts come from the
            # wider `--start-band`).
            lo, hi = SCHEMES["chains"][level]
            lo, hi = min([lo, *targets]), max([hi, *targets])
            candidates = pool.filter(pl.col("pass_rate").is_between(lo, hi) & ~pl.col("lineage_id").is_in(list(used)))
            picks = match_level(targets, candidates, used)
            distance = histogram_distance(targets, [p["pass_rate"] for p in picks], self.settings.histogram_bins)
            figures = {"chained": len(targets), "disjoint": len(picks), "histogram_distance": round(distance, 4)}
            self.summary[level] = figures
            rows += [{**{k: p.get(k) for k in PROBLEMS.names}, "difficulty": level} for p in picks]
        meta = file_metadata(build.stage, self.digest, {"report": self.summary})
        build.write_part(build.whole_shard, 0, table_from_rows(rows, DISJOINT), meta)
        return self.summary


def write_disjoint(settings: ChainSettings, console: Console) -> dict:
    run_dir = Path(settings.run_dir)
    if not StageDir(run_dir, "chain/links").status().parts:
        console.print("chain --disjoint: no accepted chains, so no baseline to match")
        return {}
    stage = DisjointStage(settings, StageDir(run_dir, "chain/disjoint"), console)
    stage.run(force=True)  # the chains passed their settings check: the baseline always follows them
    report = stage.summary
    write_text_atomic(run_dir / "chain" / "disjoint.json", json.dumps(report, indent=1) + "\n")
    # The path stays on one line (to copy it); the prose wraps at the terminal's width.
    console.print(f"chain --disjoint: the baseline is in {stage.output.path}", soft_wrap=True)
    console.print(
        "  per level, kept problems from lineages no chain uses, pass rates matched: the chains' difficulty "
        "mix with no relation between levels"
    )
    for level, figures in report.items():
        console.print(
            f"  {level}: {figures['disjoint']} of {figures['chained']} chained problems matched; "
            f"pass-rate histograms differ by {figures['histogram_distance']:.2f} "
            "(0 = the same mix, 1 = no overlap)"
        )
    return report
