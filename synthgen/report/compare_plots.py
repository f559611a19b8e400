"""The figures of `synthgen compare`, drawn with matplotlib (Agg) as PNG data URIs, like the report's.

One curve per group of runs (runs that differ only in seed): the mean over its runs, shaded by
their spread (`--band range`: min to max, `std`: one standard deviation). Each function returns
None when the inputs hold nothing of its kind, and the page says what would fill it.
"""

from __future__ import annotations

import math

from synthgen.report.compare_data import GenerateRun, Ratio, RunGroup, TrainRun, series
from synthgen.report.plots import ENV_COLORS, WIDE, _legend_above, _png
from synthgen.stages.bin.run import pyplot

PANEL = (3.0, 2.4)  # inches per panel of a grid
COLUMNS = 4
# One colour per group: the report's environment colours first, then matplotlib's cycle.
GROUP_COLORS = (*ENV_COLORS[:4], "#C44E52", "#55A868", "#DA8BC3", "#CCB974", "#64B5CD", "#8C8C8C")


def _color(i: int) -> str:
    return GROUP_COLORS[i % len(GROUP_COLORS)]


def _grid(panels: int):
    columns = min(COLUMNS, panels)
    rows = math.ceil(panels / columns)
    fig, axes = pyplot().subplots(
        rows, columns, figsize=(max(WIDE[0], PANEL[0] * columns), PANEL[1] * rows + 0.8), squeeze=False
    )
    flat = [ax for row in axes for ax in row]
    for ax in flat[panels:]:
        ax.set_axis_off()
    return fig, flat[:panels]


def _curve(ax, points, color: str, label: str) -> None:
    steps = [p[0] for p in points]
    ax.plot(steps, [p[1] for p in points], marker="o", markersize=3, color=color, label=label)
    if any(p[4] > 1 for p in points):
        ax.fill_between(steps, [p[2] for p in points], [p[3] for p in points], color=color, alpha=0.18)


def _legend_png(fig, groups: list[RunGroup]) -> str:
    """The figure as a PNG data URI with one legend above all its panels (kept inside the image)."""
    handles = [pyplot().Line2D([0], [0], color=_color(i), marker="o", markersize=3) for i in range(len(groups))]
    fig.tight_layout()  # before the legend, which then sits above the panels
    labels = [g.label for g in groups]
    fig.legend(
        handles,
        labels,
        loc="lower center",
        ncol=min(3, len(groups)),
        fontsize=7,
        frameon=False,
        bbox_to_anchor=(0.5, 1.0),
    )
    return _png(fig, bbox_inches="tight")


def _panels(groups: list[RunGroup], keys: list, rows_of, title, band: str) -> str | None:
    """A panel per key, a curve per group: `rows_of(run, key)` gives a run's (step, value) rows."""
    if not keys:
        return None
    fig, axes = _grid(len(keys))
    for ax, key in zip(axes, keys):
        for i, group in enumerate(groups):
            points = series(group.runs, lambda run, key=key: rows_of(run, key), band)
            if points:
                _curve(ax, points, _color(i), group.label)
        ax.set_title(title(key), fontsize=8)
        ax.set_xlabel("training step", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.set_ylim(-0.03, 1.03)
    return _legend_png(fig, groups)


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
