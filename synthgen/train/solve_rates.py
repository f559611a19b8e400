"""Solve rates per difficulty split during training, per round and cumulative (the paper's Fig. 9).

Two CSV files in the output folder, one row per generation round and split:
`bin_solve_rates_per_round.csv`, the share of that round's scored completions solved (noisy, and
over the problems drawn that round only), and `bin_solve_rates_cumulative.csv`, the paper's Fig. 9
metric: the share of the split's problems solved at least once so far (`cumulative_solve_rate`
over the split's size, `solved_of_seen` over the problems drawn so far). `CumulativeSolveRates`
keeps the round each problem was first drawn and solved, so a resume drops exactly the rounds it redoes.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PER_ROUND_FILE = "bin_solve_rates_per_round.csv"
PER_ROUND_FIELDS = ["round", "step", "bin", "weight", "groups", "solved", "scored", "infra", "solve_rate", "regret"]
CUMULATIVE_FILE = "bin_solve_rates_cumulative.csv"
CUMULATIVE_FIELDS = [
    "round",
    "step",
    "bin",
    "problems",
    "seen",
    "solved_ever",
    "cumulative_solve_rate",
    "solved_of_seen",
]


class CumulativeSolveRates:
    """Per split: which problems have been drawn, and which solved at least once, by round."""

    def __init__(self, split_sizes: Mapping[str, int]):
        self.sizes = dict(split_sizes)
        self.first_seen: dict[str, dict[str, int]] = {b: {} for b in self.sizes}  # split -> problem -> round
        self.first_solved: dict[str, dict[str, int]] = {b: {} for b in self.sizes}

    def update(self, round_: int, groups: Iterable[tuple[str, str, int]]) -> None:
        """One round's groups as (split, problem_id, solved completions); a group with 0 scored still counts as seen."""
        for split, problem, solved in groups:
            self.first_seen.setdefault(split, {}).setdefault(problem, round_)
            if solved > 0:
                self.first_solved.setdefault(split, {}).setdefault(problem, round_)

    def rows(self, round_: int, step: int) -> list[dict[str, Any]]:
        """The cumulative figures after `round_`, one row per split."""
        out = []
        for split in sorted(set(self.sizes) | set(self.first_seen)):
            seen = sum(r <= round_ for r in self.first_seen.get(split, {}).values())
            solved = sum(r <= round_ for r in self.first_solved.get(split, {}).values())
            size = self.sizes.get(split, 0)
            rates = (round(solved / size, 6) if size else "", round(solved / seen, 6) if seen else "")
            out.append(dict(zip(CUMULATIVE_FIELDS, (round_, step, split, size, seen, solved, *rates))))
        return out

    def forget_from(self, round_: int) -> None:
        """Drop what rounds >= `round_` contributed (they are redone after a resume)."""
        for table in (self.first_seen, self.first_solved):
            for split, firsts in table.items():
                table[split] = {p: r for p, r in firsts.items() if r < round_}

    def state_dict(self) -> dict[str, Any]:
        return {"sizes": self.sizes, "first_seen": self.first_seen, "first_solved": self.first_solved}

    def load_state_dict(self, data: Mapping[str, Any]) -> None:
        self.first_seen = {b: {} for b in self.sizes} | {b: dict(v) for b, v in data.get("first_seen", {}).items()}
        self.first_solved = {b: {} for b in self.sizes} | {b: dict(v) for b, v in data.get("first_solved", {}).items()}


def append_csv(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> None:
    new = not path.exists()
    with open(path, "a", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def truncate_csv(path: Path, from_round: int) -> None:
    """Keep the header and the rows before `from_round` (the first column is the round, or the step)."""
    keep_lines(path, lambda line, i: i == 0 or int(line.split(",", 1)[0]) < from_round)


def keep_lines(path: Path, keep) -> None:
    """Rewrite `path` (if it exists) with the lines for which `keep(line, index)` holds, atomically."""
    from synthgen.store.files import write_text_atomic

    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        write_text_atomic(path, "".join(ln for i, ln in enumerate(lines) if keep(ln, i)))
