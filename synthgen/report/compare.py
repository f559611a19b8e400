"""`synthgen compare RUN_OR_OUTPUT...`: one self-contained HTML page comparing runs, the paper's way.

    synthgen compare outputs/chains-soft-s0 outputs/chains-soft-s1 outputs/disjoint-soft-s0 --output fig10.html
    synthgen compare data/runs/multi data/runs/single --output yield.html

Every curve of the paper is a comparison averaged over seeds; so is this page. Runs whose settings
differ only in `--seed` form one curve: the mean over them, shaded by their spread. The plots
(embedded PNG, no network, no scripts, like `synthgen report`'s page):

  * pass@k per benchmark and split over training steps, from each training output's
    `eval_pass_at_k.csv` (`train --eval-every N` with held-out splits or `--eval-benchmarks`);
  * the cumulative solve rate per split over steps (the paper's Fig. 9), from
    `bin_solve_rates_cumulative.csv`;
  * kept problems per seed by teacher turn, and in total, from generate runs, with the
    multi-turn / single-turn ratio (the paper's "about 4x": a run made with `generate
    --single-turn K` beside one made without).

What is read, and how runs are grouped, is synthgen.report.compare_data. Needs matplotlib.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from synthgen.report import compare_plots, need_matplotlib, render_page, write_page
from synthgen.report.compare_data import CompareData, RunGroup, collect_compare, spread
from synthgen.report.settings import CompareSettings
from synthgen.store.paths import output_file


def run(settings: CompareSettings, console: Console | None = None) -> Path:
    console = console or Console(stderr=True)
    need_matplotlib("compare")
    output = output_file(Path(settings.output), "--output")  # before any reading
    data = collect_compare(list(settings.inputs))
    runs = sum(len(g.runs) for g in data.train + data.generate)
    return write_page(output, render(data, settings.band), console, "compare", f", {runs} runs")


def figures(data: CompareData, band: str) -> dict[str, object]:
    suites = sorted({r["suite"] for g in data.train for run in g.runs for r in run.evals})
    return {
        "pass_at_k": [(s, compare_plots.pass_at_k(data.train, s, band)) for s in suites],
        "cumulative": compare_plots.cumulative_solve_rates(data.train, band),
        "yield": compare_plots.yields(data.generate, data.ratios, band),
    }


def last_step_rows(groups: list[RunGroup]) -> list[dict[str, object]]:
    """Per group, benchmark, split and k: the mean and spread at each group's last logged step."""
    rows = []
    for group in groups:
        keys = sorted({(r["suite"], r["split"], r["k"]) for run in group.runs for r in run.evals})
        for suite, split, k in keys:
            finals = []
            for run in group.runs:
                logged = [r for r in run.evals if (r["suite"], r["split"], r["k"]) == (suite, split, k)]
                if logged:
                    finals.append(max(logged, key=lambda r: r["step"]))
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
    return render_page(
        "compare.html.j2",
        d=data,
        fig=figures(data, band),
        band="min to max" if band == "range" else "one standard deviation either side",
        finals=last_step_rows(data.train),
    )
