"""`synthgen stats RUN_DIR`: counts, yield per turn, reject reasons, pass rates and tokens of a run."""

from __future__ import annotations

from pathlib import Path

import typer

from synthgen.commands._common import default, settings_from
from synthgen.config.stats import StatsSettings

D = StatsSettings


def register(app: typer.Typer) -> None:
    @app.command("stats")
    def stats(
        ctx: typer.Context,
        run_dir: Path = typer.Argument(..., help="Run directory (the one holding seeds/, generate/, filter/, ...)."),
        buckets: int = typer.Option(default(D, "buckets"), help="Pass-rate histogram buckets over [0, 1]."),
        as_json: bool = typer.Option(False, "--json", help="Print the numbers as JSON (for scripts)."),
    ) -> None:
        """Summarise a run from whatever stages it has: per-stage counts, per-turn yield, reasons, tokens."""
        import json

        from rich.console import Console

        from synthgen.stages import stats as stage

        settings = settings_from(ctx, StatsSettings, run_dir=run_dir, buckets=buckets)
        data = stage.collect(settings)
        if as_json:
            typer.echo(json.dumps(data, indent=1, sort_keys=True))
        else:
            stage.show(data, Console(soft_wrap=True))
