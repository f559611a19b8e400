"""What `synthgen report` shows, read from a run's stage folders.

The numbers are `synthgen stats`' (synthgen.stages.stats.run.collect); the frames behind the plots and
the example problems are read here, each file checked against its schema. Like `stats`, a report
reads whatever the run holds: an unfinished stage is shown as far as it is written and marked as
unfinished, so a report can follow a run in progress.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from synthgen.report.settings import ReportSettings
from synthgen.sandbox import values
from synthgen.stages.stats.run import collect, read_columns
from synthgen.stages.stats.settings import StatsSettings
from synthgen.store.bins import Bin
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEM_COLUMNS
from synthgen.store.run_info import StageInfo, bins_of, check_run_dir, filter_reasons, is_scripted, models, stages
from synthgen.turns.report import TOKEN_COLUMNS

GENERATE_COLUMNS = ("env", "mode", "turn", "strategy", "valid", "pass_rate", "reason", "turn_id", *TOKEN_COLUMNS)
GENERATE_COLUMNS += ("teacher_model", "student_model", "scored")
EXAMPLE_COLUMNS = (*PROBLEM_COLUMNS, "turn", "strategy", "pass_rate", "pass_rate_low", "pass_rate_high")
EXAMPLE_COLUMNS += ("scored", "correct")
HISTOGRAM_BUCKETS = 20


@dataclass
class ReportData:
    run_dir: Path
    stats: dict[str, Any]
    stages: dict[str, StageInfo]
    generate: pl.DataFrame | None
    kept: pl.DataFrame | None
    binned: pl.DataFrame | None
    bins: list[Bin]
    band: tuple[float, float] | None  # the filter's kept band
    targets: tuple[float, float] | None  # the teacher's medium target band (generate's progression)
    drop_reasons: dict[str, dict[str, int]]  # {"generation": {...}, "filter": {...}}
    models: dict[str, dict[str, int]]
    examples: list[dict[str, Any]]
    chains: list[list[dict[str, Any]]]
    unparsed: list[dict[str, Any]]  # teacher answers that did not parse

    @property
    def scripted(self) -> bool:
        return is_scripted(self.models)


def collect_report(settings: ReportSettings) -> ReportData:
    run = check_run_dir(settings.run_dir)
    numbers = collect(StatsSettings(run_dir=run, buckets=HISTOGRAM_BUCKETS))
    found = stages(run)
    gen = read_columns(StageDir(run, "generate"), GENERATE_COLUMNS)
    kept = read_columns(StageDir(run, "filter"), ("turn_id", "problem_id", "env", "pass_rate"))
    binned_stage = StageDir(run, "bin")
    binned = read_columns(binned_stage, (*EXAMPLE_COLUMNS, "difficulty")) if binned_stage.parts() else None
    return ReportData(
        run_dir=run,
        stats=numbers,
        stages=found,
        generate=gen,
        kept=kept,
        binned=binned,
        bins=bins_of(found.get("bin")),
        band=_pair(_settings(found, "filter"), "band_low", "band_high"),
        targets=_pair(_settings(found, "generate").get("progression"), "target_low", "target_high"),
        drop_reasons=_reasons(numbers, run),
        models=models(gen) if gen is not None else {},
        examples=pick_examples(binned, settings.examples, settings.seed),
        chains=pick_chains(run, settings.chains, settings.seed),
        unparsed=unparsed_answers(run, settings.examples),
    )


def unparsed_answers(run: Path, count: int) -> list[dict[str, Any]]:
    """Up to `count` teacher answers that did not parse, as their rows keep them (what the model wrote)."""
    columns = ("turn_id", "env", "reason", "reason_detail", "teacher_answer")
    gen = read_columns(StageDir(run, "generate"), columns)
    if gen is None or count == 0:
        return []
    found = gen.filter(pl.col("teacher_answer").is_not_null()).sort("turn_id").head(count)
    return found.to_dicts()


def _settings(found: dict[str, StageInfo], stage: str) -> dict[str, Any]:
    info = found.get(stage)
    return (info.settings if info else None) or {}


def _pair(values: Any, low: str, high: str) -> tuple[float, float] | None:
    """(values[low], values[high]) of recorded settings, None when they are not there."""
    if not isinstance(values, dict) or low not in values or high not in values:
        return None
    return float(values[low]), float(values[high])


def _reasons(numbers: dict[str, Any], run: Path) -> dict[str, dict[str, int]]:
    generation = dict(numbers.get("reasons", {}).get("generation", {}))
    generation.pop("infra", None)  # never in a finished stage; not a property of problems
    dropped = filter_reasons(run)
    in_filter = {k: v for k, v in numbers.get("reasons", {}).get("filter", {}).items() if v}
    # Without generate's rows, the filter's own count of generation reasons stands in for them.
    if not generation:
        generation = {k: v for k, v in dropped.items() if k not in in_filter}
    return {"generation": generation, "filter": in_filter}


def _order(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def pick_examples(binned: pl.DataFrame | None, count: int, seed: int) -> list[dict[str, Any]]:
    """`count` problems: bins in turn (hard first), each from the environment shown least so far.

    The same run and seed give the same examples."""
    if binned is None or binned.height == 0 or count == 0:
        return []
    frame = binned.with_columns(
        pl.col("problem_id").map_elements(lambda p: _order(seed, p), return_dtype=pl.String).alias("_order")
    ).sort("_order")
    pools: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in frame.drop("_order").iter_rows(named=True):
        pools.setdefault(row["difficulty"] or "", {}).setdefault(row["env"], []).append(row)
    hardest_first = sorted(pools, key=lambda d: min(r["pass_rate"] or 0 for rows in pools[d].values() for r in rows))
    shown: dict[str, int] = {}
    picked: list[dict[str, Any]] = []
    while len(picked) < count and any(rows for envs in pools.values() for rows in envs.values()):
        for difficulty in hardest_first:
            envs = [env for env, rows in pools[difficulty].items() if rows]
            if not envs or len(picked) >= count:
                continue
            env = min(envs, key=lambda e: (shown.get(e, 0), e))
            picked.append(_readable(pools[difficulty][env].pop(0)))
            shown[env] = shown.get(env, 0) + 1
    return picked


def pick_chains(run: Path, count: int, seed: int) -> list[list[dict[str, Any]]]:
    """Up to `count` chains, each its problems from hard to easy."""
    links_stage, problems_stage = StageDir(run, "chain/links"), StageDir(run, "chain/problems")
    links = read_columns(links_stage, ("chain_id", "level", "position", "problem_id"))
    problems = read_columns(problems_stage, EXAMPLE_COLUMNS)
    if links is None or problems is None or count == 0:
        return []
    by_id = {row["problem_id"]: row for row in problems.iter_rows(named=True)}
    chain_ids = sorted(set(links["chain_id"].to_list()), key=lambda c: _order(seed, c))[:count]
    out = []
    for chain_id in chain_ids:
        steps = links.filter(pl.col("chain_id") == chain_id).sort("position")
        chain = []
        for step in steps.iter_rows(named=True):
            row = by_id.get(step["problem_id"])
            if row is not None:
                chain.append(_readable({**row, "difficulty": step["level"]}))
        out.append(chain)
    return out


def _readable(row: dict[str, Any]) -> dict[str, Any]:
    """A problem row with its gold outputs shown as Python values, pairs zipped for display."""
    row = dict(row)
    shown = []
    for text in row.get("outputs") or []:
        try:
            shown.append(values.display(values.decode(text), limit=200))
        except ValueError:
            shown.append(text)
    inputs = row.get("inputs") or []
    row["pairs"] = list(zip(inputs, shown + [""] * (len(inputs) - len(shown))))
    return row
