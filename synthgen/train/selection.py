"""Which problems a run trains on: environment filter, held-out splits, a per-environment budget.

Every choice is a seeded order over problem ids (sha256 of seed and id), so it does not depend on
file or row order, is the same on every process, and a larger budget contains a smaller one.
`select_data(settings)` applies them to the `--data` sources: a `DataSelection` of training rows
and held-out splits (`per_env_budget` is the paper's 4 x 5K against 20K comparison, Section 4.5).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.train.sources import SourceSpec, check_curriculum_sources, load_source_rows, parse_sources, source_weights

log = logging.getLogger(__name__)

Row = dict[str, Any]


def seeded_order(rows: Sequence[Row], seed: int, salt: str = "") -> list[Row]:
    def key(row: Row) -> str:
        return hashlib.sha256(f"{seed}:{salt}:{row['problem_id']}".encode()).hexdigest()

    return sorted(rows, key=key)


def group_by(rows: Sequence[Row], column: str) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for row in rows:
        out.setdefault(str(row.get(column)), []).append(row)
    return dict(sorted(out.items()))


def filter_envs(rows: Sequence[Row], envs: Sequence[str]) -> list[Row]:
    if not envs:
        return list(rows)
    present = group_by(rows, "env")
    unknown = [e for e in envs if e not in present]
    if unknown:
        raise UserError(
            f"--envs: no problems of environment {unknown[0]!r} in the data "
            f"(present: {', '.join(f'{e} ({len(v)})' for e, v in present.items())})"
        )
    return [r for r in rows if str(r.get("env")) in set(envs)]


def split_heldout(rows: Sequence[Row], fraction: float, seed: int) -> tuple[list[Row], list[Row]]:
    """(training rows, held-out rows): `fraction` of every bin held out, chosen by seeded order."""
    if fraction <= 0:
        return list(rows), []
    held: set[str] = set()
    for _, members in group_by(rows, "difficulty").items():
        n = max(1, round(fraction * len(members)))
        if n >= len(members):
            raise UserError(
                f"--eval-heldout-fraction {fraction} would hold out all {len(members)} problem(s) of "
                f"bin {members[0]['difficulty']!r}"
            )
        held.update(r["problem_id"] for r in seeded_order(members, seed, "heldout")[:n])
    return [r for r in rows if r["problem_id"] not in held], [r for r in rows if r["problem_id"] in held]


def per_env_budget(rows: Sequence[Row], n: int | None, seed: int) -> list[Row]:
    """N problems of each environment present (a seeded choice); an environment with fewer is an error."""
    if n is None:
        return list(rows)
    by_env = group_by(rows, "env")
    short = {e: len(v) for e, v in by_env.items() if len(v) < n}
    if short:
        raise UserError(
            f"--per-env {n}: environment(s) with fewer problems: "
            f"{', '.join(f'{e} ({c})' for e, c in short.items())}; lower N or narrow --envs"
        )
    keep = {r["problem_id"] for members in by_env.values() for r in seeded_order(members, seed, "budget")[:n]}
    return [r for r in rows if r["problem_id"] in keep]


def counts(rows: Sequence[Row], column: str) -> dict[str, int]:
    return {k: len(v) for k, v in group_by(rows, column).items()}


@dataclass
class DataSelection:
    """The training problems (each with `source` and `difficulty`) and the held-out splits (bin -> problems)."""

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


def select_data(settings) -> DataSelection:
    """Sources -> environment filter -> held-out splits -> per-env budget, in that order: held-out
    problems are taken out before the budget, so `--per-env N` always means N *training* problems
    per environment; a problem in a held-out folder is removed from every training source."""
    from synthgen.train.data import load_problem_rows

    specs = parse_sources(list(settings.data) or [str(Path(settings.run_dir) / "bin")])
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
    return DataSelection(rows, specs, weights, scope, splits, len(held) + len(folder_rows))
