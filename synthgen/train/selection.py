"""Which problems a run trains on: `--data` sources, environment filter, held-out splits, a per-env budget.

The paper's headline runs mix real code-contest problems with synthetic ones (REAL 25K + SYNTH
20K). A `--data` entry is one of

    DIR                  a folder (or Parquet file) of problems; entries without a name pool into one source
    NAME=DIR[:WEIGHT]    a named source, e.g. real=data/real:0.55 (a name may be given several folders)
    FILE.yaml            sources: [{name: real, path: data/real, weight: 0.55}, ...] (`path` may be a list)

Either every source has a weight or none does. With weights, a training prompt first picks a
source by weight, then a problem inside it (synthgen.train.curriculum.SourceMix); without, all
problems pool. A problem found in two sources is kept in the first.

Every choice is a seeded order over problem ids (sha256 of seed and id), so it does not depend on
file or row order, is the same on every process, and a larger budget contains a smaller one.
`select_data(settings)` applies them to the `--data` sources: a `DataSelection` of training rows
and held-out splits (`per_env_budget` is the paper's 4 x 5K against 20K comparison, Section 4.5).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthgen.errors import UserError

log = logging.getLogger(__name__)

Row = dict[str, Any]
DEFAULT_SOURCE = "data"
_NAMED = re.compile(r"^([A-Za-z][\w.-]*)=(.+)$")


@dataclass(frozen=True)
class SourceSpec:
    name: str
    paths: tuple[str, ...]
    weight: float | None = None


def _weight(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"--data {where}: the weight after ':' must be a number, not {text!r}") from None
    if not value > 0:
        raise UserError(f"--data {where}: a source weight must be above 0, not {text}")
    return value


def _split_weight(text: str, where: str) -> tuple[str, float | None]:
    """`DIR:0.5` -> (DIR, 0.5); a tail after ':' that is not a number stays part of the path."""
    head, sep, tail = text.rpartition(":")
    if sep and head and re.fullmatch(r"[-+0-9.eE]+", tail):
        return head, _weight(tail, where)
    return text, None


def _from_yaml(path: Path) -> list[SourceSpec]:
    from synthgen.train.curriculum import read_yaml

    data = read_yaml(path, "data sources file")
    items = data.get("sources") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise UserError(f"{path}: expected 'sources:' with a list of {{name, path, weight}}")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("path") or set(item) - {"name", "path", "weight"}:
            raise UserError(f"{path}: source {i + 1} needs 'path' (and may have 'name', 'weight'), got {item!r}")
        paths = item["path"] if isinstance(item["path"], list) else [item["path"]]
        # Relative paths in the file are relative to the file, so the file can travel with its data.
        paths = tuple(str(p if Path(p).is_absolute() else path.parent / p) for p in map(str, paths))
        weight = None if item.get("weight") is None else _weight(str(item["weight"]), str(path))
        out.append(SourceSpec(str(item.get("name") or Path(paths[0]).name), paths, weight))
    return out


def parse_sources(entries: Sequence[str]) -> list[SourceSpec]:
    """The sources named by `--data` entries, merged by name, with weights checked."""
    raw: list[SourceSpec] = []
    for entry in entries:
        entry = str(entry)
        if entry.lower().endswith((".yaml", ".yml")) and Path(entry).is_file():
            raw.extend(_from_yaml(Path(entry)))
            continue
        named = _NAMED.match(entry)
        if named and not Path(entry).exists():
            path, weight = _split_weight(named.group(2), entry)
            raw.append(SourceSpec(named.group(1), (path,), weight))
        else:
            path, weight = _split_weight(entry, entry) if not Path(entry).exists() else (entry, None)
            raw.append(SourceSpec(Path(path).name if weight is not None else DEFAULT_SOURCE, (path,), weight))
    merged: dict[str, SourceSpec] = {}
    for spec in raw:
        old = merged.get(spec.name, SourceSpec(spec.name, ()))
        if old.weight is not None and spec.weight is not None and old.weight != spec.weight:
            raise UserError(f"--data: source {spec.name!r} is given two weights ({old.weight} and {spec.weight})")
        weight = old.weight if spec.weight is None else spec.weight
        merged[spec.name] = SourceSpec(spec.name, old.paths + spec.paths, weight)
    specs = list(merged.values())
    weighted = [s.name for s in specs if s.weight is not None]
    if weighted and len(weighted) != len(specs):
        bare = next(s.name for s in specs if s.weight is None)
        raise UserError(
            f"--data: give every source a weight or none (source {bare!r} has none); e.g. "
            f"--data real=DIR:0.55 --data synth=DIR:0.45"
        )
    return specs


def source_weights(specs: Sequence[SourceSpec]) -> dict[str, float] | None:
    """Normalised source weights, or None when the sources pool (no weights given)."""
    if not specs or specs[0].weight is None:
        return None
    total = sum(s.weight for s in specs)  # type: ignore[misc]
    return {s.name: s.weight / total for s in specs}  # type: ignore[operator]


def load_source_rows(specs: Sequence[SourceSpec]) -> list[dict[str, Any]]:
    """Every source's scorable rows, each tagged with `source`; a problem in two sources stays in the first."""
    from synthgen.train.data import load_problem_rows

    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    shared: dict[tuple[str, str], int] = {}
    for spec in specs:
        for row in load_problem_rows(list(spec.paths)):
            first = seen.setdefault(row["problem_id"], spec.name)
            if first != spec.name:
                shared[(first, spec.name)] = shared.get((first, spec.name), 0) + 1
                continue
            rows.append({**row, "source": spec.name})
    for (first, later), n in shared.items():
        log.warning(
            "training data: %d problem(s) of source %r are also in %r; kept once, in %r", n, later, first, first
        )
    return rows


def check_curriculum_sources(names: Sequence[str], specs: Sequence[SourceSpec]) -> set[str] | None:
    """The sources the curriculum applies to (None: all); names must be weighted sources."""
    if not names:
        return None
    known = [s.name for s in specs]
    if source_weights(specs) is None:
        raise UserError("--curriculum-sources needs weighted sources (--data NAME=DIR:WEIGHT ...)")
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(f"--curriculum-sources: no source named {unknown[0]!r} (sources: {', '.join(known)})")
    return set(names)


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
