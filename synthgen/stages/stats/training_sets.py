"""The problem sets a run offers for training and export: what `synthgen stats` lists under "sets".

Each set is a folder `train --data` reads as it is (synthgen.train.data), named by its path under
the run directory:

- `filter`: every problem the filter kept (pass rate in [0.01, 0.97] by default), one split `kept`:
  the paper's "all synthetic" training set;
- `bin`: every binned problem, split by bin; `bin/<name>`: one bin;
- `chain`: every level of every chain, split hard / medium / easy (what the chain curricula use);
- `chain/disjoint`: the disjoint baseline, split the same way.

Counts come from the finished outputs only (an unfinished stage is listed with its rows so far
and `finished: false`), read as the training loader reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthgen.store.layout import StageDir


def _splits(stage: StageDir, column: str) -> dict[str, int]:
    frame = stage.read([column])
    return dict(sorted((str(k), n) for k, n in frame.group_by(column).len().iter_rows()))


def _entry(name: str, path: Path, splits: dict[str, int], finished: bool) -> dict[str, Any]:
    return {"name": name, "data": str(path), "problems": sum(splits.values()), "splits": splits, "finished": finished}


def training_sets(run: Path) -> list[dict[str, Any]]:
    """The sets of `run` that hold rows, in pipeline order: name, `--data` folder, counts per split."""
    out: list[dict[str, Any]] = []
    kept = StageDir.of(run, "filter")
    if kept.parts():
        out.append(_entry("filter", kept.path, {"kept": kept.count_rows()}, bool(kept.done_shards())))
    binned = StageDir.of(run, "bin")
    if binned.nested_parts():
        splits = _splits(binned, "difficulty")
        finished = binned.is_done(binned.whole_shard)
        out.append(_entry("bin", binned.path, splits, finished))
        out += [_entry(f"bin/{b}", binned.path / b, {b: n}, finished) for b, n in splits.items()]
    links = StageDir.of(run, "chain/links")
    if links.parts():
        finished = not links.status().missing
        out.append(_entry("chain", links.path.parent, _splits(links, "level"), finished))
    disjoint = StageDir.of(run, "chain/disjoint")
    if disjoint.parts():
        out.append(_entry("chain/disjoint", disjoint.path, _splits(disjoint, "difficulty"), True))
    return out
