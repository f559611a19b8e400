"""Live progress and end-of-run statistics for `synthgen generate` (and `chain`)."""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from synthgen.shards import write_text_atomic


@dataclass
class TurnStats:
    """Counts that add up across shards: per-turn validity, pass rates and reject reasons."""

    lineages_total: int = 0
    lineages_done: int = 0
    turns: int = 0
    valid: int = 0
    pass_rate_sum: float = 0.0
    pass_rate_count: int = 0
    reasons: Counter = field(default_factory=Counter)
    per_turn: dict[int, Counter] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def record(self, row: dict[str, Any]) -> None:
        self.turns += 1
        turn = self.per_turn.setdefault(int(row["turn"]), Counter())
        turn["rows"] += 1
        self.reasons[row["reason"]] += 1
        if row["valid"]:
            self.valid += 1
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

    def as_dict(self) -> dict[str, Any]:
        return {
            "lineages_total": self.lineages_total,
            "lineages_done": self.lineages_done,
            "turns": self.turns,
            "valid": self.valid,
            "valid_rate": round(self.valid_rate, 4),
            "mean_pass_rate": None if self.mean_pass_rate is None else round(self.mean_pass_rate, 4),
            "reasons": dict(sorted(self.reasons.items())),
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
    """A rich progress bar over lineages with the figures a run operator watches."""

    def __init__(self, stats: TurnStats, llm, console: Console, enabled: bool = True, label: str = "generate"):
        self.stats, self.llm, self.console = stats, llm, console
        self.progress = Progress(
            TextColumn(f"[bold]{label}[/bold]"),
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TextColumn("{task.fields[figures]}"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
            transient=False,
        )
        self.task = self.progress.add_task(label, total=stats.lineages_total, figures="")

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.refresh()
        self.progress.__exit__(*exc)

    def refresh(self) -> None:
        s, total = self.stats, self.llm.usage.total()
        elapsed = max(1e-6, time.monotonic() - s.started)
        mean = "-" if s.mean_pass_rate is None else f"{s.mean_pass_rate:.2f}"
        failures = f"infra {total.samples_infra} trunc {total.samples_truncated} retry {total.retries}"
        figures = (
            f"turns {s.turns} valid {s.valid_rate:.0%} pass {mean} | flight {self.llm.in_flight} "
            f"{total.completion_tokens / elapsed:,.0f} tok/s | {failures}"
        )
        self.progress.update(self.task, completed=s.lineages_done, total=s.lineages_total, figures=figures)


def summary_table(stats: TurnStats, usage_line: str, title: str) -> Table:
    table = Table(title=title, show_header=True)
    table.add_column("turn", justify="right")
    table.add_column("rows", justify="right")
    table.add_column("valid", justify="right")
    table.add_column("mean pass rate", justify="right")
    for turn, figures in stats.as_dict()["per_turn"].items():
        mean = figures["mean_pass_rate"]
        table.add_row(turn, str(figures["rows"]), str(figures["valid"]), "-" if mean is None else f"{mean:.3f}")
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(stats.reasons.items()))
    table.caption = f"reasons: {reasons}\nllm: {usage_line}"
    return table


def write_stats(path: Path, stats: TurnStats, usage: dict[str, Any], extra: dict[str, Any]) -> None:
    payload = {**extra, **stats.as_dict(), "llm": usage}
    write_text_atomic(path, json.dumps(payload, indent=1, sort_keys=True) + "\n")
