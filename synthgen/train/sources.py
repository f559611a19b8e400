"""Training data sources: `--data` entries -> named, optionally weighted sources -> rows with a `source`.

The paper's headline runs mix real code-contest problems with synthetic ones (REAL 25K + SYNTH
20K). A `--data` entry is one of

    DIR                  a folder (or Parquet file) of problems; entries without a name pool into one source
    NAME=DIR[:WEIGHT]    a named source, e.g. real=data/real:0.55 (a name may be given several folders)
    FILE.yaml            sources: [{name: real, path: data/real, weight: 0.55}, ...] (`path` may be a list)

Either every source has a weight or none does. With weights, a training prompt first picks a
source by weight, then a problem inside it (synthgen.train.mix); without, all problems pool. A
problem found in two sources is kept in the first.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthgen.errors import UserError

log = logging.getLogger(__name__)

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
        old = merged.get(spec.name)
        if old is None:
            merged[spec.name] = spec
            continue
        if old.weight is not None and spec.weight is not None and old.weight != spec.weight:
            raise UserError(f"--data: source {spec.name!r} is given two weights ({old.weight} and {spec.weight})")
        merged[spec.name] = SourceSpec(
            spec.name, old.paths + spec.paths, old.weight if spec.weight is None else spec.weight
        )
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
