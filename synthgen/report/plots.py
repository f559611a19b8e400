"""The figures of `synthgen report` and `synthgen compare`, drawn with matplotlib (Agg) and returned as PNG data URIs.

Each function takes what synthgen.report read and returns `data:image/png;base64,...`, or
None when the run has nothing to draw yet (the page then says which stage is missing). Figures
are small (about 900 x 330 pixels) so a report of a large run stays a few hundred kilobytes.

Compare's figures draw one curve per group of runs (runs that differ only in seed): the mean over
its runs, shaded by their spread (`--band range`: min to max, `std`: one standard deviation).
"""

from __future__ import annotations

import base64
import io
import math
from typing import TYPE_CHECKING, Any

import polars as pl

from synthgen.envs.summary import STRATEGIES
from synthgen.settings.base import ENV_NAMES
from synthgen.stages.bin.run import pyplot
from synthgen.store.bins import Bin
from synthgen.turns.report import TOKEN_COLUMNS

if TYPE_CHECKING:
    from synthgen.report.compare import GenerateRun, Ratio, RunGroup, TrainRun
WIDE, TALL = (9.0, 3.3), (9.0, 5.2)
# Environments in colours that no bin uses; bins from red (hard) to green (easy).
ENV_COLORS = ("#4C72B0", "#DD8452", "#8172B3", "#937860", "#8C8C8C", "#64B5CD")
STAGE_COLORS = {"generated": "#B0B0B0", "valid": "#4C72B0", "kept": "#55A868", "binned": "#8172B3"}


def bin_colors(count: int) -> list:
    """One colour per bin, hard (red) to easy (green)."""
    cmap = pyplot().get_cmap("RdYlGn")
    return [cmap(0.12 + 0.76 * i / max(1, count - 1)) for i in range(count)]


def _legend_above(ax, columns: int, *handles_labels) -> None:
    """A legend above an axes (or, given a figure, above all its panels)."""
    ax.legend(*handles_labels, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=columns, frameon=False)


def _png(fig, **savefig) -> str:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=100, **savefig)
    pyplot().close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _envs(frame: pl.DataFrame) -> list[str]:
    present = set(frame["env"].to_list())
    return [e for e in ENV_NAMES if e in present] + sorted(present - set(ENV_NAMES))


def yield_per_turn(turns: list[dict[str, Any]]) -> str | None:
    """Generated, valid and kept rows per teacher turn (multi-turn lineages; single-turn apart)."""
    if not turns:
        return None
    modes = sorted({t["mode"] for t in turns})
    fig, axes = pyplot().subplots(1, len(modes), figsize=WIDE, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        rows = sorted((t for t in turns if t["mode"] == mode), key=lambda t: t["turn"])
        x = [t["turn"] for t in rows]
        width = 0.8 / 3
        for i, key in enumerate(("generated", "valid", "kept")):
            heights = [t[key] or 0 for t in rows]
            ax.bar([v + (i - 1) * width for v in x], heights, width, label=key, color=STAGE_COLORS[key])
        for t in rows:
            if t["kept"] is not None and t["generated"]:
                share = f"{t['kept'] / t['generated']:.0%}"
                ax.annotate(share, (t["turn"] + width, t["kept"] or 0), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x)
        ax.set_xlabel(f"teacher turn ({mode}-turn lineages)")
        _legend_above(ax, 3)
    axes[0, 0].set_ylabel("rows")
    return _png(fig)


def _boxes(ax, groups: list[tuple[str, list[float]]], band: tuple[float, float] | None, label: str) -> None:
    shown = [(name, vals) for name, vals in groups if vals]
    ax.boxplot([v for _, v in shown], showmeans=True, widths=0.6)
    ax.set_xticks(range(1, len(shown) + 1), [f"{name}\nn={len(v)}" for name, v in shown], fontsize=8)
    if band:
        ax.axhspan(band[0], band[1], color="C2", alpha=0.12, label=label)
        ax.legend(fontsize=7, loc="lower right")
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel("student pass rate")


def pass_rates(gen: pl.DataFrame | None, targets: tuple[float, float] | None) -> str | None:
    """Pass rates of valid problems by teacher turn and by the strategy the teacher was given."""
    if gen is None:
        return None
    valid = gen.filter(pl.col("valid") & pl.col("pass_rate").is_not_null() & (pl.col("mode") != "single"))
    if valid.height == 0:
        return None
    fig, (by_turn, by_strategy) = pyplot().subplots(1, 2, figsize=WIDE, gridspec_kw={"width_ratios": [1, 1.2]})
    turns = sorted(set(valid["turn"].to_list()))
    _boxes(by_turn, [(str(t), _values(valid, "turn", t)) for t in turns], targets, "teacher's target")
    by_turn.set_xlabel("teacher turn")
    present = set(valid["strategy"].drop_nulls().to_list())
    order = [str(s) for s in STRATEGIES if s in present] + sorted(present - set(STRATEGIES))
    _boxes(by_strategy, [(s, _values(valid, "strategy", s)) for s in order], targets, "teacher's target")
    by_strategy.set_xlabel("strategy the teacher was given (the pass rate of what it wrote)")
    return _png(fig)


def _values(frame: pl.DataFrame, column: str, value: Any) -> list[float]:
    return frame.filter(pl.col(column) == value)["pass_rate"].to_list()


def bin_histograms(
    gen: pl.DataFrame | None, kept: pl.DataFrame | None, bins: list[Bin], band: tuple[float, float] | None
) -> str | None:
    """Pass-rate histograms (valid generated rows, kept problems) per environment, bins shaded."""
    panels = []
    if gen is not None:
        panels.append(("valid generated problems", gen.filter(pl.col("valid") & pl.col("pass_rate").is_not_null())))
    if kept is not None:
        panels.append(("kept problems (filter)", kept.filter(pl.col("pass_rate").is_not_null())))
    panels = [(title, frame) for title, frame in panels if frame.height]
    if not panels:
        return None
    fig, axes = pyplot().subplots(len(panels), 1, figsize=TALL if len(panels) > 1 else WIDE, sharex=True, squeeze=False)
    for ax, (title, frame) in zip(axes[:, 0], panels):
        for b, color in zip(bins, bin_colors(len(bins))):
            ax.axvspan(b.low, b.high, color=color, alpha=0.18)
            middle = (b.low + b.high) / 2
            ax.text(middle, 1.0, b.name, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=7)
        if band:
            for edge in band:
                ax.axvline(edge, color="k", linestyle="--", linewidth=0.8)
        envs = _envs(frame)
        stacks = [frame.filter(pl.col("env") == env)["pass_rate"].to_list() for env in envs]
        ax.hist(stacks, bins=33, range=(0, 1), stacked=True, label=envs, color=list(ENV_COLORS[: len(envs)]))
        ax.set_ylabel("problems")
        ax.set_title(f"{title}: {frame.height}", fontsize=9, loc="left")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    axes[-1, 0].set_xlabel("student pass rate (dashed: the filter's band; shaded: the bins)")
    return _png(fig)


def drop_reasons(reasons: dict[str, dict[str, int]]) -> str | None:
    """Rows dropped by reason: at generation (invalid problems) and in the filter."""
    rows = [(f"{code}", n, stage) for stage, counts in reasons.items() for code, n in counts.items() if n]
    if not rows:
        return None
    rows.sort(key=lambda r: r[1])
    fig, ax = pyplot().subplots(figsize=(WIDE[0], max(2.2, 0.32 * len(rows) + 0.9)))
    colors = {"generation": "#C44E52", "filter": "#DD8452"}
    ax.barh([r[0] for r in rows], [r[1] for r in rows], color=[colors.get(r[2], "C7") for r in rows])
    for i, (_, n, _) in enumerate(rows):
        ax.annotate(str(n), (n, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    handles = [pyplot().Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    ax.legend(handles, ["at generation", "in the filter"], fontsize=8, loc="lower right")
    ax.set_xlabel("rows dropped")
    return _png(fig)


def per_env(
    gen: pl.DataFrame | None, kept: pl.DataFrame | None, binned: pl.DataFrame | None, bins: list[Bin]
) -> str | None:
    """Per environment: generated, valid, kept and binned counts; and the bins each one fills."""
    frames = [f for f in (gen, kept, binned) if f is not None]
    if not frames:
        return None
    envs = _envs(pl.concat([f.select("env") for f in frames]))
    valid = None if gen is None else gen.filter(pl.col("valid"))
    named = (("generated", gen), ("valid", valid), ("kept", kept), ("binned", binned))
    series = [(name, frame) for name, frame in named if frame is not None]
    fig, (left, right) = pyplot().subplots(1, 2, figsize=WIDE)
    width = 0.8 / len(series)
    for i, (name, frame) in enumerate(series):
        counts = [frame.filter(pl.col("env") == env).height for env in envs]
        left.bar([j + i * width for j in range(len(envs))], counts, width, label=name, color=STAGE_COLORS[name])
    left.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(envs))], envs, fontsize=8)
    left.set_ylabel("rows")
    _legend_above(left, len(series))
    if binned is not None and binned.height:
        names = [b.name for b in bins] or sorted(set(binned["difficulty"].drop_nulls().to_list()))
        bottom = [0] * len(envs)
        for name, color in zip(names, bin_colors(len(names))):
            counts = [binned.filter((pl.col("env") == env) & (pl.col("difficulty") == name)).height for env in envs]
            right.bar(envs, counts, bottom=bottom, label=name, color=color)
            bottom = [a + b for a, b in zip(bottom, counts)]
        right.set_ylabel("binned problems")
        _legend_above(right, len(names))
        right.tick_params(axis="x", labelsize=8)
    else:
        right.text(0.5, 0.5, "no bin stage yet", ha="center", va="center", transform=right.transAxes)
        right.set_axis_off()
    return _png(fig)


def tokens_per_kept(gen: pl.DataFrame | None, kept: pl.DataFrame | None) -> str | None:
    """Tokens spent per kept problem, per environment and overall, split by role and direction."""
    if gen is None or kept is None or kept.height == 0:
        return None
    envs = _envs(kept)
    groups = [(env, gen.filter(pl.col("env") == env), kept.filter(pl.col("env") == env).height) for env in envs]
    groups.append(("all", gen, kept.height))
    fig, ax = pyplot().subplots(figsize=WIDE)
    labels = [g[0] for g in groups]
    left = [0.0] * len(groups)
    for i, column in enumerate(TOKEN_COLUMNS):
        per = [float(frame[column].fill_null(0).sum()) / n if n else 0.0 for _, frame, n in groups]
        color = ("#4C72B0", "#8DA0CB", "#55A868", "#A6D854")[i]
        ax.barh(labels, per, left=left, label=column.replace("_tokens_", " ").replace("_", " "), color=color)
        left = [a + b for a, b in zip(left, per)]
    for i, total in enumerate(left):
        ax.annotate(f"{total:,.0f}", (total, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("tokens per kept problem (prompt tokens once per request, completion tokens per attempt)")
    _legend_above(ax, len(TOKEN_COLUMNS))
    ax.margins(x=0.08)
    return _png(fig)


# -- synthgen compare ---------------------------------------------------------------------------
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
    _legend_above(fig, min(3, len(groups)), handles, [g.label for g in groups])
    return _png(fig, bbox_inches="tight")


def pass_at_k(groups: list[RunGroup], suite: str, band: str) -> str | None:
    """pass@k over training steps for one benchmark: a panel per split and k, a curve per group."""
    keys = sorted({(r["split"], r["k"]) for g in groups for run in g.runs for r in run.evals if r["suite"] == suite})

    def rows(run: TrainRun, key: tuple[str, int]) -> list[tuple[int, float]]:
        return [(r["step"], r["value"]) for r in run.evals if (r["suite"], r["split"], r["k"]) == (suite, *key)]

    return _panels(groups, keys, rows, lambda key: f"{suite} {key[0]}: pass@{key[1]}", band)


def cumulative_solve_rates(groups: list[RunGroup], band: str) -> str | None:
    """The paper's Fig. 9: per split, the share of its problems solved at least once so far."""
    splits = sorted({r["bin"] for g in groups for run in g.runs for r in run.cumulative})

    def rows(run: TrainRun, split: str) -> list[tuple[int, float]]:
        return [(r["step"], r["value"]) for r in run.cumulative if r["bin"] == split]

    return _panels(groups, splits, rows, lambda split: f"{split}: solved at least once", band)


def yields(groups: list[RunGroup], ratios: list[Ratio], band: str) -> str | None:
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
        _legend_above(per_turn, 1)
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
    return _png(fig)
