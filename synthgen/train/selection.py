"""Which problems a run trains on: environment filter, held-out splits, a per-environment budget.

Every choice is a seeded order over problem ids (sha256 of seed and id), so it does not depend on
file or row order, is the same on every process, and a larger budget contains a smaller one.

  * `filter_envs(rows, envs)`: keep the named environments.
  * `split_heldout(rows, fraction, seed)`: hold `round(fraction * n)` problems of each bin (at
    least one when the fraction is above 0) out of training, as that bin's evaluation split.
  * `per_env_budget(rows, n, seed)`: N problems of each environment, for the paper's comparison of
    5K problems from each of four environments against 20K from one (its Section 4.5).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from synthgen.errors import UserError

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
