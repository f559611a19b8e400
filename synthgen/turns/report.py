"""Live progress and end-of-run statistics of the stages that run teacher turns (generate, chain).

Progress counts teacher turns (the unit of work) and student attempts, with an ETA from the rate
of finished turns; the units a stage plans (lineages, chains) are figures on the line, not the bar.

One token account everywhere (this line, the per-shard stats file, `synthgen stats`): the token
columns of the rows, where prompt tokens count once per request (M samples asked with n = M share
one prompt) and completion tokens (reasoning included) once per attempt. A row's tokens are what
producing it cost, also when a re-run replayed its answers from the request cache.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from synthgen.store.files import write_text_atomic
from synthgen.turns.settings import TurnLoopSettings

TOKEN_COLUMNS = ("teacher_tokens_in", "teacher_tokens_out", "student_tokens_in", "student_tokens_out")
TOKEN_RULE = "in: prompt tokens once per request; out: completion tokens (reasoning included) per attempt"


@dataclass
class TurnStats:
    """Counts that add up across shards: per-turn validity, pass rates, reasons, attempts, tokens."""

    units: str = "lineages"  # what the stage plans: lineages (generate) or chains
    units_total: int = 0
    units_done: int = 0
    turns: int = 0
    valid: int = 0
    attempts: int = 0  # student attempts of the evaluated (valid) turns
    pass_rate_sum: float = 0.0
    pass_rate_count: int = 0
    reasons: Counter = field(default_factory=Counter)
    per_turn: dict[int, Counter] = field(default_factory=dict)
    tokens: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    def record(self, row: dict[str, Any]) -> None:
        self.turns += 1
        turn = self.per_turn.setdefault(int(row["turn"]), Counter())
        turn["rows"] += 1
        self.reasons[row["reason"]] += 1
        for column in TOKEN_COLUMNS:
            self.tokens[column] += int(row.get(column) or 0)
        if row["valid"]:
            self.valid += 1
            self.attempts += int(row.get("attempts") or 0)
            turn["valid"] += 1
            if row.get("pass_rate") is not None:
                self.pass_rate_sum += row["pass_rate"]
                self.pass_rate_count += 1
                turn["scored"] += 1
                turn["pass_rate_sum_x1000"] += round(1000 * row["pass_rate"])

    @property
    def valid_rate(self) -> float:
        return self.valid / self.turns if self.turns else 0.0

    @property
    def mean_pass_rate(self) -> float | None:
        return self.pass_rate_sum / self.pass_rate_count if self.pass_rate_count else None

    def token_totals(self) -> dict[str, int]:
        out = {c: int(self.tokens[c]) for c in TOKEN_COLUMNS}
        out["in"] = out["teacher_tokens_in"] + out["student_tokens_in"]
        out["out"] = out["teacher_tokens_out"] + out["student_tokens_out"]
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "units": self.units,
            f"{self.units}_total": self.units_total,
            f"{self.units}_done": self.units_done,
            "turns": self.turns,
            "valid": self.valid,
            "valid_rate": round(self.valid_rate, 4),
            "student_attempts": self.attempts,
            "mean_pass_rate": None if self.mean_pass_rate is None else round(self.mean_pass_rate, 4),
            "reasons": dict(sorted(self.reasons.items())),
            "tokens": {**self.token_totals(), "counting": TOKEN_RULE},
            "per_turn": {
                str(t): {
                    "rows": c["rows"],
                    "valid": c["valid"],
                    "mean_pass_rate": round(c["pass_rate_sum_x1000"] / 1000 / c["scored"], 4) if c["scored"] else None,
                }
                for t, c in sorted(self.per_turn.items())
            },
            "wall_s": round(time.monotonic() - self.started, 2),
        }


class LiveProgress:
    """Two live lines: a bar over teacher turns with its ETA, then the figures a run operator watches.

    `done` counts the turns already on disk (a resumed shard); `total` is the stage's plan
    of turns, which it corrects as it learns (a chain's extra try, a lineage stopped by a failure).
    """

    def __init__(
        self, stats: TurnStats, llm, console: Console, settings: TurnLoopSettings, *, label: str, total: int, done: int
    ):
        self.stats, self.llm, self.console, self.enabled = stats, llm, console, settings.progress
        # Without a terminal, a live display writes nothing readable: a plain line every `progress_every_s`.
        self.plain = self.enabled and not console.is_terminal
        self.label, self.every_s, self.last_line = label, settings.progress_every_s, time.monotonic()
        self.total, self.completed = total, done
        self.progress = Progress(
            TextColumn(f"[bold]{label}[/bold] turns"),
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[units]}"),
            console=console,
        )
        self.task = self.progress.add_task(label, total=total, completed=done, units="")
        self.line = Text("", no_wrap=False)
        self.live = Live(Group(self.progress, self.line), console=console, refresh_per_second=4, transient=False)

    def __enter__(self):
        if self.enabled and not self.plain:
            self.live.__enter__()
        return self

    def __exit__(self, *exc):
        self.refresh()
        if self.plain:
            self.print_line()
        elif self.enabled:
            self.live.__exit__(*exc)

    def advance(self, turns: int = 1) -> None:
        self.completed += turns
        self.total = max(self.total, self.completed)
        self.progress.update(self.task, completed=self.completed, total=self.total)

    def expect(self, delta: int) -> None:
        """The stage now expects `delta` more (or, negative, fewer) turns than planned."""
        self.total = max(self.completed, self.total + delta)
        self.progress.update(self.task, total=self.total)

    def figures(self) -> str:
        s, usage = self.stats, self.llm.usage.total()
        mean = "-" if s.mean_pass_rate is None else f"{s.mean_pass_rate:.2f}"
        tokens = s.token_totals()
        return (
            f"valid {s.valid_rate:.0%} pass {mean} | tokens in {tokens['in']:,} (prompt, once per request) "
            f"out {tokens['out']:,} (per attempt) | in flight {self.llm.in_flight} | retries {usage.retries} "
            f"infra {usage.samples_infra}"
        )

    def units(self) -> str:
        s = self.stats
        return f"{s.units} {s.units_done}/{s.units_total} | attempts {s.attempts:,}"

    def refresh(self) -> None:
        self.progress.update(self.task, completed=self.completed, total=self.total, units=self.units())
        self.line.plain = "  " + self.figures()
        if self.plain and time.monotonic() - self.last_line >= self.every_s:
            self.print_line()

    def print_line(self) -> None:
        """One plain progress line (no terminal: a Slurm log reads it as it grows)."""
        self.last_line = time.monotonic()
        elapsed = time.monotonic() - self.stats.started
        self.console.print(
            f"{self.label} turns {self.completed}/{self.total} | {self.units()} | {elapsed:.0f} s | {self.figures()}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def summary_table(stats: TurnStats, usage_line: str, title: str) -> Group:
    """The end-of-shard table (rows, valid, mean pass rate per turn) and its reasons and tokens."""
    table = Table(show_header=True)
    for column in ("turn", "rows", "valid", "mean pass rate"):
        table.add_column(column, justify="right")
    for turn, figures in stats.as_dict()["per_turn"].items():
        mean = figures["mean_pass_rate"]
        table.add_row(turn, str(figures["rows"]), str(figures["valid"]), "-" if mean is None else f"{mean:.3f}")
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.reasons.items())) or "none"
    tokens = stats.token_totals()
    notes = Text(
        f"reasons: {reasons}\n"
        f"tokens of these rows: in {tokens['in']:,} out {tokens['out']:,} ({TOKEN_RULE})\n"
        f"requests sent by this run: {usage_line}"
    )
    return Group(Text(title, style="bold"), table, notes)


def write_stats(path: Path, stats: TurnStats, usage: dict[str, Any], extra: dict[str, Any]) -> None:
    """The per-shard stats file: `stats` (recounted from every row of the shard) plus `llm_this_run`,
    the requests this process sent (cache replays are hits there, not tokens)."""
    payload = {**extra, **stats.as_dict(), "llm_this_run": usage}
    write_text_atomic(path, json.dumps(payload, indent=1, sort_keys=True) + "\n")
