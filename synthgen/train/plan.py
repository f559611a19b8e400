"""What a run trains and evaluates on: sources -> environment filter -> held-out splits -> per-env budget.

    plan = plan_data(settings)
    plan.rows        # the training problems, each with `source` and `difficulty`
    plan.heldout     # evaluation splits: difficulty bin -> problems (never in plan.rows)
    plan.summary()   # counts for the run log and train_summary.json

Order matters and is fixed: held-out problems are taken out before the per-environment budget,
so `--per-env N` always means N *training* problems per environment; a problem in a held-out
folder is removed from every training source (no leak between the two).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.train.selection import counts, filter_envs, group_by, per_env_budget, seeded_order, split_heldout
from synthgen.train.sources import SourceSpec, check_curriculum_sources, load_source_rows, parse_sources, source_weights

log = logging.getLogger(__name__)


@dataclass
class DataPlan:
    rows: list[dict[str, Any]]
    specs: list[SourceSpec]
    weights: dict[str, float] | None = None
    curriculum_sources: set[str] | None = None
    heldout: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    heldout_out_of_training: int = 0  # held-out problems in total (before the per-split cap)

    def summary(self) -> dict[str, Any]:
        return {
            "sources": {
                s.name: {
                    "paths": list(s.paths),
                    "weight": (self.weights or {}).get(s.name),
                    "bins": counts([r for r in self.rows if r["source"] == s.name], "difficulty"),
                }
                for s in self.specs
            },
            "curriculum_sources": sorted(self.curriculum_sources) if self.curriculum_sources else "all",
            "envs": counts(self.rows, "env"),
            "heldout": {b: len(v) for b, v in self.heldout.items()},
            "heldout_out_of_training": self.heldout_out_of_training,
        }


def data_entries(settings) -> list[str]:
    return list(settings.data) or [str(Path(settings.run_dir) / "bin")]


def plan_data(settings) -> DataPlan:
    from synthgen.train.data import load_problem_rows

    specs = parse_sources(data_entries(settings))
    weights = source_weights(specs)
    scope = check_curriculum_sources(settings.curriculum_sources, specs)
    rows = filter_envs(load_source_rows(specs), settings.envs)
    ev = settings.eval
    folder_rows = filter_envs(load_problem_rows(ev.heldout), settings.envs) if ev.heldout else []
    if folder_rows:
        in_folders = {r["problem_id"] for r in folder_rows}
        before = len(rows)
        rows = [r for r in rows if r["problem_id"] not in in_folders]
        if before != len(rows):
            log.info("training data: %d problem(s) of the held-out folders left out of training", before - len(rows))
    rows, held = split_heldout(rows, ev.heldout_fraction, settings.seed)
    rows = per_env_budget(rows, settings.per_env, settings.seed)
    if not rows:
        raise UserError("no training problems left after --envs / held-out / --per-env")
    if weights:
        empty = [s.name for s in specs if not any(r["source"] == s.name for r in rows)]
        if empty:
            raise UserError(f"source {empty[0]!r} has no training problems left (after --envs / --per-env)")
    splits: dict[str, list[dict[str, Any]]] = {}
    for b, members in group_by(held + folder_rows, "difficulty").items():
        chosen = seeded_order(members, settings.seed, "eval")
        splits[b] = chosen[: ev.max_problems] if ev.max_problems else chosen
    return DataPlan(rows, specs, weights, scope, splits, len(held) + len(folder_rows))
