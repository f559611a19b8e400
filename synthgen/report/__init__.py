"""`synthgen report` and `synthgen compare`: self-contained HTML pages about a run, and across runs.

    synthgen report data/runs/demo                  # writes data/runs/demo/report.html
    synthgen report data/runs/exp1 --output exp1.html --examples 10 --chains 5

The page holds its plots as embedded PNG images (no network, no scripts, nothing beside it):
yield per teacher turn, the student's pass rate by turn and by strategy, pass-rate histograms
with the bins and the filter's band drawn, drop reasons, counts per environment, tokens per
kept problem, and a few example problems and chains with their code and gold outputs.
Numbers are those of `synthgen stats` (synthgen.stages.stats.run.collect); like `stats`, a report
reads whatever the run holds: an unfinished stage is shown as far as it is written and marked so,
so a report can follow a run in progress. Needs matplotlib (the plot extra).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from synthgen import __version__
from synthgen.errors import UserError
from synthgen.report import plots
from synthgen.report.settings import ReportSettings
from synthgen.sandbox import values
from synthgen.stages.bin.run import rank
from synthgen.stages.stats.run import collect, read_columns
from synthgen.stages.stats.settings import StatsSettings
from synthgen.store import run_info
from synthgen.store.bins import Bin
from synthgen.store.files import write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.paths import output_file
from synthgen.store.records import PROBLEM_COLUMNS
from synthgen.text import jinja_env
from synthgen.turns.report import TOKEN_COLUMNS

TEMPLATES = Path(__file__).parent / "templates"
PAPER = (
    'Sancaktar et al., "A Deep Dive into Scaling RL for Code Generation with Synthetic Data and Curricula" '
    "(arXiv:2603.24202, 2026)"
)


def need_matplotlib(command: str) -> None:
    """Checked before any reading; the plots import it when drawing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError(f"synthgen {command} needs matplotlib: pip install 'synthgen[plot]'") from None


def render_page(template: str, **context: object) -> str:
    """A page from templates/, stamped with the version, the time and the paper it follows."""
    templates = jinja_env(TEMPLATES, keep_trailing_newline=False, autoescape=True)
    written = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return templates.get_template(template).render(version=__version__, written=written, paper=PAPER, **context)


def write_page(output: Path, html: str, console: Console, what: str, detail: str = "") -> Path:
    write_text_atomic(output, html)
    console.print(f"{what}: {output} ({len(html.encode()) / 1024:.0f} KiB{detail}); open it in a browser")
    return output


def run(settings: ReportSettings, console: Console | None = None) -> Path:
    console = console or Console(stderr=True)
    need_matplotlib("report")
    if settings.output:
        output_file(settings.output, "--output")  # before any reading
    data = collect_report(settings)
    output = output_file(Path(settings.output) if settings.output else data.run_dir / "report.html", "--output")
    return write_page(output, render(data), console, "report")


def render(data: ReportData) -> str:
    stage_rows = [
        {
            "name": name,
            "rows": info.rows,
            "finished": "yes" if info.finished else f"no ({len(info.missing)} shard(s) unmarked)",
            "hash": info.settings_hash,
            "what": run_info.STAGES[name] + (" (read from a partial input)" if info.partial_input else ""),
        }
        for name, info in data.stages.items()
    ]
    bin_table: dict[str, dict[str, int]] = {}
    if data.binned is not None:
        for (env, difficulty), part in data.binned.group_by(["env", "difficulty"]):
            bin_table.setdefault(env, {})[difficulty] = part.height
    bin_names = [b.name for b in data.bins] or sorted({d for counts in bin_table.values() for d in counts})
    reason_rows = [
        (code, "generation" if stage == "generation" else "filter", n, run_info.REASON_TEXT.get(code, ""))
        for stage, counts in data.drop_reasons.items()
        for code, n in sorted(counts.items(), key=lambda kv: -kv[1])
    ]
    return render_page(
        "report.html.j2",
        d=data,
        name=data.run_dir.resolve().name,
        fig={
            "yield": plots.yield_per_turn(data.stats.get("turns") or []),
            "pass_rates": plots.pass_rates(data.generate, data.targets),
            "bins": plots.bin_histograms(data.generate, data.kept, data.bins, data.band),
            "reasons": plots.drop_reasons(data.drop_reasons),
            "envs": plots.per_env(data.generate, data.kept, data.binned, data.bins),
            "tokens": plots.tokens_per_kept(data.generate, data.kept),
        },
        stage_rows=stage_rows,
        bin_table=dict(sorted(bin_table.items())),
        bin_names=bin_names,
        reason_rows=reason_rows,
    )


GENERATE_COLUMNS = ("env", "mode", "turn", "strategy", "valid", "pass_rate", "reason", "turn_id", *TOKEN_COLUMNS)
GENERATE_COLUMNS += ("teacher_model", "student_model", "scored")
EXAMPLE_COLUMNS = (*PROBLEM_COLUMNS, "turn", "strategy", "pass_rate", "pass_rate_low", "pass_rate_high")
EXAMPLE_COLUMNS += ("scored", "correct")
HISTOGRAM_BUCKETS = 20


@dataclass
class ReportData:
    run_dir: Path
    stats: dict[str, Any]
    stages: dict[str, run_info.StageInfo]
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
        return run_info.is_scripted(self.models)


def collect_report(settings: ReportSettings) -> ReportData:
    run = run_info.check_run_dir(settings.run_dir)
    numbers = collect(StatsSettings(run_dir=run, buckets=HISTOGRAM_BUCKETS))
    found = run_info.stages(run)
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
        bins=run_info.bins_of(found.get("bin")),
        band=_pair(_settings(found, "filter"), "band_low", "band_high"),
        targets=_pair(_settings(found, "generate").get("progression"), "target_low", "target_high"),
        drop_reasons=_reasons(numbers, run),
        models=run_info.models(gen) if gen is not None else {},
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
    return gen.filter(pl.col("teacher_answer").is_not_null()).sort("turn_id").head(count).to_dicts()


def _settings(found: dict[str, run_info.StageInfo], stage: str) -> dict[str, Any]:
    return getattr(found.get(stage), "settings", None) or {}


def _pair(values: Any, low: str, high: str) -> tuple[float, float] | None:
    """(values[low], values[high]) of recorded settings, None when they are not there."""
    if not isinstance(values, dict) or low not in values or high not in values:
        return None
    return float(values[low]), float(values[high])


def _reasons(numbers: dict[str, Any], run: Path) -> dict[str, dict[str, int]]:
    generation = dict(numbers.get("reasons", {}).get("generation", {}))
    generation.pop("infra", None)  # never in a finished stage; not a property of problems
    dropped = run_info.filter_reasons(run)
    in_filter = {k: v for k, v in numbers.get("reasons", {}).get("filter", {}).items() if v}
    # Without generate's rows, the filter's own count of generation reasons stands in for them.
    if not generation:
        generation = {k: v for k, v in dropped.items() if k not in in_filter}
    return {"generation": generation, "filter": in_filter}


def pick_examples(binned: pl.DataFrame | None, count: int, seed: int) -> list[dict[str, Any]]:
    """`count` problems: bins in turn (hard first), each from the environment shown least so far.

    The same run and seed give the same examples."""
    if binned is None or binned.height == 0 or count == 0:
        return []
    frame = binned.with_columns(
        pl.col("problem_id").map_elements(lambda p: rank(seed, p), return_dtype=pl.Binary).alias("_order")
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
    chain_ids = sorted(set(links["chain_id"].to_list()), key=lambda c: rank(seed, c))[:count]
    out = []
    for chain_id in chain_ids:
        steps = links.filter(pl.col("chain_id") == chain_id).sort("position").iter_rows(named=True)
        known = [step for step in steps if step["problem_id"] in by_id]
        out.append([_readable({**by_id[step["problem_id"]], "difficulty": step["level"]}) for step in known])
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
