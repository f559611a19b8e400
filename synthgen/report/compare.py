"""`synthgen compare RUN_OR_OUTPUT...`: one self-contained HTML page comparing runs, the paper's way.

    synthgen compare outputs/chains-soft-s0 outputs/chains-soft-s1 outputs/disjoint-soft-s0 --output fig10.html
    synthgen compare data/runs/multi data/runs/single --output yield.html

Every curve of the paper is averaged over seeds; so is this page: runs whose settings differ only
in `--seed` form one curve, the mean over them shaded by their spread. The plots: pass@k per
benchmark and split over training steps (`eval_pass_at_k.csv`), the cumulative solve rate per
split (the paper's Fig. 9, `bin_solve_rates_cumulative.csv`), and kept problems per seed by teacher
turn and in total, with the multi-turn / single-turn ratio (the paper's "about 4x": a run made with
`generate --single-turn K` beside one without). Needs matplotlib.

An input is a training output (`train --output`), a run directory with a generate stage (its own
`train/` and training outputs directly inside it are read too), or a folder whose sub-folders are
either. A training run is grouped by the settings its `train_summary.json` records, a generate run
by its seeds and generate stages' settings; one that recorded none (still training) is a group of
its own. The yield ratio compares runs whose generate settings differ only in seed, turns and
single-turn samples, or the two modes inside one run.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from synthgen.errors import UserError
from synthgen.report import need_matplotlib, render_page, write_page
from synthgen.report.plots import ENV_COLORS, WIDE, legend_above, png, pyplot
from synthgen.report.settings import CompareSettings
from synthgen.stages.stats.run import read_columns
from synthgen.store.layout import StageDir
from synthgen.store.paths import output_file
from synthgen.store.run_info import stages
from synthgen.train.solve_rates import CUMULATIVE_FILE

EVAL_FILE = "eval_pass_at_k.csv"  # synthgen.train.evaluation.EVAL_FILE (that module imports transformers)
SUMMARY_FILE = "train_summary.json"
TRAIN_FILES = (EVAL_FILE, CUMULATIVE_FILE, SUMMARY_FILE)
# Settings that tell runs of one comparison apart without making them a different experiment.
SEED_KEYS = frozenset({"seed"})
YIELD_KEYS = frozenset({"seed", "turns", "single_turn"})


@dataclass
class TrainRun:
    path: Path
    settings: dict[str, Any] | None
    evals: list[dict[str, Any]]  # step, suite, split, k, pass_at_k
    cumulative: list[dict[str, Any]]  # step, bin, rate

    @property
    def seed(self) -> Any:  # the page's table of runs
        return (self.settings or {}).get("seed")


@dataclass
class GenerateRun:
    path: Path
    settings: dict[str, Any] | None  # {"seeds": {...}, "generate": {...}}
    seeds: dict[str, int]  # mode -> seeds with rows of that mode
    kept: dict[tuple[str, int], int]  # (mode, turn) -> kept problems

    @property
    def seed(self) -> Any:
        return ((self.settings or {}).get("generate") or {}).get("seed")

    def kept_per_seed(self, mode: str) -> float | None:
        seeds = self.seeds.get(mode)
        if not seeds:
            return None
        return sum(n for (m, _), n in self.kept.items() if m == mode) / seeds


@dataclass
class RunGroup:
    """Runs whose settings differ only in seed: one curve of the comparison."""

    key: str
    runs: list[Any]
    label: str = ""


@dataclass
class Ratio:
    label: str
    multi: list[float]  # kept per seed of each multi-turn run
    single: list[float]

    @property
    def ratio(self) -> float | None:
        single = sum(self.single) / len(self.single) if self.single else 0
        return sum(self.multi) / len(self.multi) / single if self.multi and single else None


@dataclass
class CompareData:
    train: list[RunGroup] = field(default_factory=list)
    generate: list[RunGroup] = field(default_factory=list)
    ratios: list[Ratio] = field(default_factory=list)


def is_train_output(path: Path) -> bool:
    return path.is_dir() and any((path / name).is_file() for name in TRAIN_FILES)


def is_generate_run(path: Path) -> bool:
    return path.is_dir() and bool(StageDir(path, "generate").parts())


def resolve_inputs(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(training outputs, generate runs) named by the inputs; an input that holds neither is an error."""
    train, generate = [], []
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise UserError(f"compare: {path} not found")
        if not path.is_dir():
            raise UserError(f"compare: {path} is a file; give a training output or a run directory")
        found_train = [path] if is_train_output(path) else []
        found_generate = [path] if is_generate_run(path) else []
        if not found_train:
            children = sorted(p for p in path.iterdir() if p.is_dir())
            found_train += [c for c in children if is_train_output(c)]
            if not found_generate:
                found_generate += [c for c in children if is_generate_run(c)]
        if not found_train and not found_generate:
            raise UserError(
                f"compare: {path} is neither a training output ({', '.join(TRAIN_FILES)}) nor a run directory "
                "with a generate stage, nor a folder holding them"
            )
        train += [p for p in found_train if p not in train]
        generate += [p for p in found_generate if p not in generate]
    return train, generate


def _csv_rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            return list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"compare: cannot read {path}: {exc}") from None


def _number(row: dict[str, str], key: str, path: Path, kind=float):
    value = row.get(key)
    if value in (None, ""):
        return None
    try:
        number = kind(value)
    except ValueError:
        raise UserError(f"compare: {path}: column {key!r} holds {value!r}, not a number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise UserError(f"compare: {path}: column {key!r} holds {value!r}, not a finite number")
    return number


def read_train_run(path: Path) -> TrainRun:
    evals = []
    for row in _csv_rows(path / EVAL_FILE):
        step, k, value = _number(row, "step", path, int), _number(row, "k", path, int), _number(row, "pass_at_k", path)
        if step is not None and k is not None and value is not None:
            evals.append(
                {"step": step, "suite": row.get("suite", ""), "split": row.get("split", ""), "k": k, "value": value}
            )
    cumulative = []
    for row in _csv_rows(path / CUMULATIVE_FILE):
        step, rate = _number(row, "step", path, int), _number(row, "cumulative_solve_rate", path)
        if step is not None and rate is not None:
            cumulative.append({"step": step, "bin": row.get("bin", ""), "value": rate})
    settings = None
    if (path / SUMMARY_FILE).is_file():
        try:
            summary = json.loads((path / SUMMARY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"compare: cannot read {path / SUMMARY_FILE}: {exc}") from None
        settings = summary.get("settings") if isinstance(summary, dict) else None
    return TrainRun(path, settings if isinstance(settings, dict) else None, evals, cumulative)


def read_generate_run(path: Path) -> GenerateRun:
    gen = read_columns(StageDir(path, "generate"), ("mode", "turn", "seed_id", "turn_id"))
    if gen is None:
        raise UserError(f"compare: {path}/generate holds no rows")
    kept_frame = read_columns(StageDir(path, "filter"), ("turn_id",))
    if kept_frame is None:
        raise UserError(f"compare: {path} has no filter stage yet: yield counts kept problems (run `synthgen filter`)")
    gen = gen.with_columns(pl.col("turn_id").is_in(kept_frame["turn_id"].to_list()).alias("kept"))
    seeds = {str(mode): part["seed_id"].n_unique() for (mode,), part in gen.group_by(["mode"])}
    kept = {(str(mode), int(turn)): int(part["kept"].sum()) for (mode, turn), part in gen.group_by(["mode", "turn"])}
    found = stages(path)
    settings = {name: found[name].settings for name in ("seeds", "generate") if name in found}
    return GenerateRun(path, settings if settings.get("generate") else None, seeds, kept)


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, dict):
        return {prefix[:-1]: data}
    return {k: v for key, value in data.items() for k, v in _flat(value, f"{prefix}{key}.").items()}


def _flat_without(settings: dict[str, Any] | None, drop: frozenset[str]) -> dict[str, Any]:
    """Nested settings as dotted keys, without those whose last part is in `drop`."""
    return {k: v for k, v in _flat(settings or {}).items() if k.split(".")[-1] not in drop}


def group_key(settings: dict[str, Any] | None, drop: frozenset[str], fallback: Path) -> str:
    """A hash of the settings without `drop` (at any depth), or the run's own path when it has none."""
    if not settings:
        return f"path:{fallback.resolve()}"
    flat = _flat_without(settings, drop)
    return hashlib.sha256(json.dumps(flat, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(_text(v) for v in value) or "none"
    return str(value)


def _shortened(values: list[str]) -> list[str]:
    """Paths without the leading folders they all share (`runs/exp1/chain`, `runs/exp1/chain/disjoint`
    -> `chain`, `chain/disjoint`); every value at most 40 characters."""
    if len(values) > 1 and all("/" in v for v in values):
        split = [v.rstrip("/").split("/") for v in values]
        common = 0
        while all(len(p) > common + 1 for p in split) and len({p[common] for p in split}) == 1:
            common += 1
        values = ["/".join(p[common:]) for p in split]
    return [v if len(v) <= 40 else "..." + v[-37:] for v in values]


def label_groups(groups: list[RunGroup]) -> None:
    """Name each group by the settings that tell it from the others (the folder name when none do)."""
    flats = [_flat_without(g.runs[0].settings, SEED_KEYS) for g in groups]
    keys = sorted({k for f in flats for k in f})
    varying = [k for k in keys if len({json.dumps(f.get(k), sort_keys=True, default=str) for f in flats}) > 1]
    # Settings every group has tell them apart best; one only some have (a stage the others lack) is a last resort.
    varying = [k for k in varying if all(k in f for f in flats if f)] or varying
    varying.sort(key=lambda k: (k.split(".")[-1] not in ("data", "curriculum"), k))
    shown = {k: _shortened([_text(f.get(k, "-")) for f in flats]) for k in varying}
    for i, (group, flat) in enumerate(zip(groups, flats)):
        parts = [f"{k.split('.')[-1]}={shown[k][i]}" for k in varying if k in flat]
        names = sorted({r.path.name for r in group.runs})
        label = ", ".join(parts[:3]) if parts and flat else ", ".join(names[:2]) + (" ..." if len(names) > 2 else "")
        seeds = len(group.runs)
        group.label = label + (f" ({seeds} seeds)" if seeds > 1 else "")


def _groups(runs: list[Any]) -> list[RunGroup]:
    """Runs grouped by their settings without the seed, each group labelled."""
    by_key: dict[str, RunGroup] = {}
    for run in runs:
        key = group_key(run.settings, SEED_KEYS, run.path)
        by_key.setdefault(key, RunGroup(key, [])).runs.append(run)
    groups = list(by_key.values())
    label_groups(groups)
    return groups


def _ratios(runs: list[GenerateRun]) -> list[Ratio]:
    families: dict[str, list[GenerateRun]] = {}
    for run in runs:
        # The generate stage's settings only: a run seeded from another run's seeds has no seeds stage.
        generate = (run.settings or {}).get("generate")
        families.setdefault(group_key(generate, YIELD_KEYS, run.path), []).append(run)
    out = []
    for members in families.values():
        multi = [v for r in members if (v := r.kept_per_seed("multi")) is not None]
        single = [v for r in members if (v := r.kept_per_seed("single")) is not None]
        if multi and single:
            names = sorted({r.path.name for r in members})
            out.append(Ratio(", ".join(names[:4]) + (" ..." if len(names) > 4 else ""), multi, single))
    return out


def collect_compare(inputs: list[Path]) -> CompareData:
    if not inputs:
        raise UserError("compare: give at least one training output or run directory")
    train_paths, generate_paths = resolve_inputs(inputs)
    train_runs = [read_train_run(p) for p in train_paths]
    generate_runs = [read_generate_run(p) for p in generate_paths]
    empty = [r.path for r in train_runs if not r.evals and not r.cumulative]
    if empty and len(empty) == len(train_runs) and not generate_runs:
        raise UserError(f"compare: {empty[0]} has logged no evaluation and no solve rates yet: nothing to plot")
    train_runs = [r for r in train_runs if r.evals or r.cumulative]
    return CompareData(train=_groups(train_runs), generate=_groups(generate_runs), ratios=_ratios(generate_runs))


def run(settings: CompareSettings, console: Console | None = None) -> Path:
    console = console or Console(stderr=True)
    need_matplotlib("compare")
    output = output_file(Path(settings.output), "--output")  # before any reading
    data = collect_compare(list(settings.inputs))
    runs = sum(len(g.runs) for g in data.train + data.generate)
    return write_page(output, render(data, settings.band), console, "compare", f", {runs} runs")


def last_step_rows(groups: list[RunGroup]) -> list[dict[str, object]]:
    """Per group, benchmark, split and k: the mean and spread at each group's last logged step."""
    rows = []
    for group in groups:
        keys = sorted({(r["suite"], r["split"], r["k"]) for run in group.runs for r in run.evals})
        for suite, split, k in keys:
            key = (suite, split, k)
            logged = [[r for r in run.evals if (r["suite"], r["split"], r["k"]) == key] for run in group.runs]
            finals = [max(rows, key=lambda r: r["step"]) for rows in logged if rows]
            values = [r["value"] for r in finals]
            mean, std = spread(values)
            steps = sorted({r["step"] for r in finals})
            rows.append(
                {
                    "group": group.label,
                    "metric": f"{suite} {split} pass@{k}",
                    "step": ", ".join(str(s) for s in steps),
                    "mean": mean,
                    "std": std,
                    "runs": len(values),
                }
            )
    return rows


def render(data: CompareData, band: str) -> str:
    suites = sorted({r["suite"] for g in data.train for run in g.runs for r in run.evals})
    return render_page(
        "compare.html.j2",
        d=data,
        fig={
            "pass_at_k": [(s, pass_at_k_figure(data.train, s, band)) for s in suites],
            "cumulative": cumulative_figure(data.train, band),
            "yield": yields_figure(data.generate, data.ratios, band),
        },
        band="min to max" if band == "range" else "one standard deviation either side",
        finals=last_step_rows(data.train),
    )


# -- figures: one curve per group of runs (the mean, shaded by `--band` range or std) -------------
def spread(values: list[float]) -> tuple[float, float]:
    """(mean, standard deviation) of a non-empty list."""
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def series(runs: list[Any], rows_of, band: str) -> list[tuple[int, float, float, float, int]]:
    """Per step: (step, mean, low, high, runs) over the runs that logged it; low/high: range or mean +- std."""
    by_step: dict[int, list[float]] = {}
    for run in runs:
        for step, value in rows_of(run):
            by_step.setdefault(step, []).append(value)
    out = []
    for step in sorted(by_step):
        values = by_step[step]
        mean, std = spread(values)
        low, high = (mean - std, mean + std) if band == "std" else (min(values), max(values))
        out.append((step, mean, low, high, len(values)))
    return out


PANEL = (3.0, 2.4)  # inches per panel of a grid
COLUMNS = 4
# One colour per group: the report's environment colours first, then matplotlib's cycle.
GROUP_COLORS = (*ENV_COLORS[:4], "#C44E52", "#55A868", "#DA8BC3", "#CCB974", "#64B5CD", "#8C8C8C")


def _color(i: int) -> str:
    return GROUP_COLORS[i % len(GROUP_COLORS)]


def _curve(ax, points, color: str, label: str) -> None:
    steps = [p[0] for p in points]
    ax.plot(steps, [p[1] for p in points], marker="o", markersize=3, color=color, label=label)
    if any(p[4] > 1 for p in points):
        ax.fill_between(steps, [p[2] for p in points], [p[3] for p in points], color=color, alpha=0.18)


def _panels(groups: list[RunGroup], keys: list, rows_of, title, band: str) -> str | None:
    """A panel per key, a curve per group: `rows_of(run, key)` gives a run's (step, value) rows; one
    legend above all the panels, kept inside the image."""
    if not keys:
        return None
    columns = min(COLUMNS, len(keys))
    rows = math.ceil(len(keys) / columns)
    size = (max(WIDE[0], PANEL[0] * columns), PANEL[1] * rows + 0.8)
    fig, grid = pyplot().subplots(rows, columns, figsize=size, squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[len(keys) :]:
        ax.set_axis_off()
    for ax, key in zip(axes, keys):
        for i, group in enumerate(groups):
            points = series(group.runs, lambda run, key=key: rows_of(run, key), band)
            if points:
                _curve(ax, points, _color(i), group.label)
        ax.set_title(title(key), fontsize=8)
        ax.set_xlabel("training step", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.set_ylim(-0.03, 1.03)
    handles = [pyplot().Line2D([0], [0], color=_color(i), marker="o", markersize=3) for i in range(len(groups))]
    fig.tight_layout()  # before the legend, which then sits above the panels
    legend_above(fig, min(3, len(groups)), handles, [g.label for g in groups])
    return png(fig, bbox_inches="tight")


def pass_at_k_figure(groups: list[RunGroup], suite: str, band: str) -> str | None:
    """pass@k over training steps for one benchmark: a panel per split and k, a curve per group."""
    keys = sorted({(r["split"], r["k"]) for g in groups for run in g.runs for r in run.evals if r["suite"] == suite})

    def rows(run: TrainRun, key: tuple[str, int]) -> list[tuple[int, float]]:
        return [(r["step"], r["value"]) for r in run.evals if (r["suite"], r["split"], r["k"]) == (suite, *key)]

    return _panels(groups, keys, rows, lambda key: f"{suite} {key[0]}: pass@{key[1]}", band)


def cumulative_figure(groups: list[RunGroup], band: str) -> str | None:
    """The paper's Fig. 9: per split, the share of its problems solved at least once so far."""
    splits = sorted({r["bin"] for g in groups for run in g.runs for r in run.cumulative})

    def rows(run: TrainRun, split: str) -> list[tuple[int, float]]:
        return [(r["step"], r["value"]) for r in run.cumulative if r["bin"] == split]

    return _panels(groups, splits, rows, lambda split: f"{split}: solved at least once", band)


def yields_figure(groups: list[RunGroup], ratios: list[Ratio], band: str) -> str | None:
    """Kept problems per seed by teacher turn (multi-turn runs), and in total per group and mode,
    with the multi-turn / single-turn ratio of each comparable family."""
    if not groups:
        return None
    fig, (per_turn, total) = pyplot().subplots(1, 2, figsize=WIDE, gridspec_kw={"width_ratios": [1.3, 1]})
    bars: list[tuple[str, float, float, float, str]] = []
    for i, group in enumerate(groups):
        runs: list[GenerateRun] = group.runs

        def rows(run: GenerateRun):
            seeds = run.seeds.get("multi") or 0
            return [(t, n / seeds) for (m, t), n in sorted(run.kept.items()) if m == "multi" and seeds]

        points = series(runs, rows, band)
        if points:
            _curve(per_turn, points, _color(i), group.label)
        for mode in ("multi", "single"):
            values = [v for r in runs if (v := r.kept_per_seed(mode)) is not None]
            if values:
                bars.append(
                    (f"{group.label}\n{mode}-turn", sum(values) / len(values), min(values), max(values), _color(i))
                )
    per_turn.set_xlabel("teacher turn (multi-turn lineages)")
    per_turn.set_ylabel("kept problems per seed")
    if per_turn.lines:
        legend_above(per_turn, 1)
    else:
        per_turn.text(0.5, 0.5, "no multi-turn rows", ha="center", va="center", transform=per_turn.transAxes)
    ys = list(range(len(bars)))
    total.barh(ys, [b[1] for b in bars], color=[b[4] for b in bars], alpha=0.85)
    for y, (_, mean, low, high, _) in zip(ys, bars):
        if high > low:
            total.plot([low, high], [y, y], color="k", linewidth=1)
        total.annotate(f"{mean:.2f}", (high, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    total.set_yticks(ys, [b[0] for b in bars], fontsize=7)
    total.invert_yaxis()
    total.set_xlabel("kept problems per seed (all turns)")
    shown = [f"{r.ratio:.2f}x" for r in ratios if r.ratio is not None]
    total.set_title(
        "multi-turn / single-turn: " + (", ".join(shown) if shown else "no single-turn run to compare"), fontsize=8
    )
    total.margins(x=0.15)
    return png(fig)
