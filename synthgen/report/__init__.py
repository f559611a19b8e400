"""`synthgen report` and `synthgen compare`: self-contained HTML pages about a run, and across runs.

    synthgen report data/runs/demo                  # writes data/runs/demo/report.html
    synthgen report data/runs/exp1 --output exp1.html --examples 10 --chains 5

The page holds its plots as embedded PNG images (no network, no scripts, nothing beside it):
yield per teacher turn, the student's pass rate by turn and by strategy, pass-rate histograms
with the bins and the filter's band drawn, drop reasons, counts per environment, tokens per
kept problem, and a few example problems and chains with their code and gold outputs.
Numbers are those of `synthgen stats`; an unfinished stage is shown as far as it is written.
Needs matplotlib (the plot extra).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import jinja2
from rich.console import Console

from synthgen import __version__
from synthgen.errors import UserError
from synthgen.report import plots
from synthgen.report.data import ReportData, collect_report
from synthgen.report.settings import ReportSettings
from synthgen.store.files import write_text_atomic
from synthgen.store.paths import output_file
from synthgen.store.run_info import REASON_TEXT, STAGES

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
    templates = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
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


def figures(data: ReportData) -> dict[str, str | None]:
    return {
        "yield": plots.yield_per_turn(data.stats.get("turns") or []),
        "pass_rates": plots.pass_rates(data.generate, data.targets),
        "bins": plots.bin_histograms(data.generate, data.kept, data.bins, data.band),
        "reasons": plots.drop_reasons(data.drop_reasons),
        "envs": plots.per_env(data.generate, data.kept, data.binned, data.bins),
        "tokens": plots.tokens_per_kept(data.generate, data.kept),
    }


def render(data: ReportData) -> str:
    stage_rows = [
        {
            "name": name,
            "rows": info.rows,
            "finished": "yes" if info.finished else f"no ({len(info.missing)} shard(s) unmarked)",
            "hash": info.settings_hash,
            "what": STAGES[name] + (" (read from a partial input)" if info.partial_input else ""),
        }
        for name, info in data.stages.items()
    ]
    bin_table: dict[str, dict[str, int]] = {}
    if data.binned is not None:
        for (env, difficulty), part in data.binned.group_by(["env", "difficulty"]):
            bin_table.setdefault(env, {})[difficulty] = part.height
    bin_names = [b.name for b in data.bins] or sorted({d for counts in bin_table.values() for d in counts})
    reason_rows = [
        (code, "generation" if stage == "generation" else "filter", n, REASON_TEXT.get(code, ""))
        for stage, counts in data.drop_reasons.items()
        for code, n in sorted(counts.items(), key=lambda kv: -kv[1])
    ]
    return render_page(
        "report.html.j2",
        d=data,
        name=data.run_dir.resolve().name,
        fig=figures(data),
        stage_rows=stage_rows,
        bin_table=dict(sorted(bin_table.items())),
        bin_names=bin_names,
        reason_rows=reason_rows,
    )
