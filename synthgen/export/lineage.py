"""Where the exported problems came from: the card's lineage summary.

Every exported row already names its seed (`seed_id`), lineage (`lineage_id`), parent problem
(`parent_id`), teacher turn (`turn`) and the strategy the teacher was given (`strategy`); the chains
config adds each problem's chain and position. This module counts them for the card: how many
teacher turns a kept problem took, and the yield of each strategy (exported / generated valid).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from synthgen.store.layout import StageDir

GENERATED = ("turn_id", "turn", "strategy", "valid")


def lineage_summary(run_dir, exported: pl.DataFrame) -> dict[str, Any] | None:
    """Turns per exported problem and yield by strategy; None without a generate stage."""
    stage = StageDir(run_dir, "generate")
    if not stage.parts() or exported.height == 0:
        return None
    generated = stage.read(list(GENERATED)).filter(pl.col("valid"))
    ids = set(exported["turn_id"].to_list())
    generated = generated.with_columns(pl.col("turn_id").is_in(list(ids)).alias("exported"))
    turns = dict(sorted((int(t), n) for t, n in exported.group_by("turn").len().iter_rows()))
    strategies = []
    for strategy, part in sorted(generated.group_by("strategy"), key=lambda kv: str(kv[0][0])):
        kept = int(part["exported"].sum())
        strategies.append(
            {
                "strategy": strategy[0] or "-",
                "valid": part.height,
                "exported": kept,
                "yield": round(kept / part.height, 4),
            }
        )
    with_parent = exported.filter(pl.col("parent_id").is_not_null()).height if "parent_id" in exported.columns else 0
    return {
        "problems": exported.height,
        "seeds": exported["seed_id"].n_unique(),
        "lineages": exported["lineage_id"].n_unique(),
        "mean_turn": round(float(exported["turn"].mean()), 3),
        "turns": turns,
        "mutated": with_parent,
        "by_strategy": strategies,
    }
