"""Train / test splits of an export (`--test-fraction F` or `--test-bins BIN,...`), deterministic.

    splits = assign(problems, test_fraction=0.1, seed=0, bin_order=["hard", "medium", "easy"])
    splits = assign(problems, test_bins=["hard"])

Both work on whole groups so that nothing the student could learn in train reappears in test:

* a **group** is a lineage (one seed's problem and the teacher's mutations of it: near-copies of
  one another) together with every chain one of its problems belongs to, and every lineage those
  chains touch (a chain's steps share its hard start's lineage; a step that is also a binned
  problem of another lineage joins the two). A chain therefore never straddles train and test.
* `--test-fraction F` draws, per bin, groups in the order of a seeded hash of their name until the
  test rows come closest to F times the bin's rows (a group counts towards the bin most of its
  rows are in). The same run, F and seed give the same split; another seed gives another.
* `--test-bins` puts every problem of those bins in test, except that a chain goes where its hard
  start goes (its position-0 problem's bin, or level `hard` when no bin holds it). Lineages are not
  kept together here: holding out a difficulty *is* the experiment, and the easier variants of a
  held-out problem are what the model trains on.

Either way a split with no rows is an error (exit 2): a trainer given an empty file fails later
and less clearly.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict

import polars as pl

from synthgen.errors import UserError

TRAIN, TEST = "train", "test"


def assign(
    problems: pl.DataFrame,
    *,
    test_fraction: float | None = None,
    test_bins: list[str] | None = None,
    seed: int = 0,
    bin_order: list[str] | None = None,
) -> list[str]:
    """`train` or `test` for each row of `problems` (its order); all `train` when no split is asked."""
    if test_fraction is None and not test_bins:
        return [TRAIN] * problems.height
    if test_bins:
        splits = _by_bins(problems, test_bins)
        what = f"--test-bins {','.join(test_bins)}"
    else:
        splits = _by_fraction(problems, float(test_fraction or 0), seed, bin_order or [])
        what = f"--test-fraction {test_fraction:g}"
    counts = Counter(splits)
    for split in (TRAIN, TEST):
        if not counts[split]:
            raise UserError(
                f"{what} leaves the {split} split empty ({problems.height} problems, "
                f"{_group_count(problems)} lineages); choose another split"
            )
    return splits


def groups(problems: pl.DataFrame) -> list[str]:
    """Each row's group: lineages joined by the chains through them (see the module docstring)."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        parent.setdefault(key, key)
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:  # the smaller name names the group, whatever the order rows come in
            parent[max(ra, rb)] = min(ra, rb)

    keys = []
    for lineage, chain in problems.select("lineage_id", "chain_id").iter_rows():
        key = f"lineage:{lineage}"
        find(key)
        if chain is not None:
            union(key, f"chain:{chain}")
        keys.append(key)
    return [find(k) for k in keys]


def _group_count(problems: pl.DataFrame) -> int:
    return len(set(groups(problems))) if problems.height else 0


def _draw_key(seed: int, group: str) -> str:
    return hashlib.sha256(f"{seed}:{group}".encode()).hexdigest()


def _by_fraction(problems: pl.DataFrame, fraction: float, seed: int, bin_order: list[str]) -> list[str]:
    names = groups(problems)
    difficulties = problems["difficulty"].to_list()
    rank = {name: i for i, name in enumerate(bin_order)}
    by_group: dict[str, Counter] = defaultdict(Counter)
    for name, difficulty in zip(names, difficulties):
        by_group[name][difficulty] += 1
    # Each group counts towards the bin holding most of its rows (ties: the bin that comes first).
    stratum = {
        name: min(c.items(), key=lambda kv: (-kv[1], rank.get(kv[0], len(rank)), str(kv[0])))[0]
        for name, c in by_group.items()
    }
    test: set[str] = set()
    members: dict[str, list[str]] = defaultdict(list)
    for name in sorted(by_group):
        members[stratum[name]].append(name)
    for part in members.values():
        target = fraction * sum(sum(by_group[name].values()) for name in part)
        taken = 0
        for name in sorted(part, key=lambda g: _draw_key(seed, g)):
            size = sum(by_group[name].values())
            if abs(taken + size - target) < abs(taken - target):  # closer to the target with it than without
                test.add(name)
                taken += size
    return [TEST if name in test else TRAIN for name in names]


def _by_bins(problems: pl.DataFrame, test_bins: list[str]) -> list[str]:
    present = sorted(set(problems["difficulty"].drop_nulls().to_list()))
    unknown = [b for b in test_bins if b not in present]
    if unknown:
        raise UserError(f"--test-bins: no exported problem is in bin {unknown[0]!r}; bins here: {', '.join(present)}")
    wanted = set(test_bins)
    # A chain follows its hard start (position 0).
    starts = problems.filter(pl.col("position") == 0).select("chain_id", "difficulty")
    chain_bin = dict(starts.iter_rows())
    out = []
    for difficulty, chain in problems.select("difficulty", "chain_id").iter_rows():
        if chain is not None:
            difficulty = chain_bin.get(chain, difficulty)
        out.append(TEST if difficulty in wanted else TRAIN)
    return out
