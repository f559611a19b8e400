"""`synthgen bin`: split kept problems into difficulty bins by pass rate (SPEC §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from synthgen.commands._common import PARTIAL_HELP, default, settings_from
from synthgen.config.bin import BinSettings

D = BinSettings


def register(app: typer.Typer) -> None:
    @app.command("bin")
    def bin_(
        ctx: typer.Context,
        run_dir: Path = typer.Option(default(D, "run_dir"), help="Run directory; bins go to RUN_DIR/bin/<difficulty>/."),
        input_dir: Optional[str] = typer.Option(None, "--input", help="Folder of kept problems (default RUN_DIR/filter)."),
        allow_partial: bool = typer.Option(False, "--allow-partial", help=PARTIAL_HELP),
        scheme: str = typer.Option(default(D, "scheme"), help="chains (App. B), broad (Table 3) or custom (with --bins)."),
        bins: Optional[str] = typer.Option(None, "--bins", help="Custom bins, e.g. 'easy=0.7:1,hard=0:0.3' (with --scheme custom)."),
        balance: bool = typer.Option(False, "--balance", help="Downsample every non-empty bin to the smallest one's count."),
        seed: int = typer.Option(default(D, "seed"), "--seed", help="Which rows --balance keeps."),
        write_outside: bool = typer.Option(False, "--write-outside", help="Also write problems outside every bin to RUN_DIR/bin_outside/."),
        plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the pass-rate histograms to this PNG (needs the plot extra)."),
        force: bool = typer.Option(False, "--force", help="Redo bins made with other settings."),
    ) -> None:
        """Bin kept problems by pass rate; a bin holds both ends except an edge shared with the bin above."""
        from synthgen.stages import bin as stage

        settings = settings_from(
            ctx, BinSettings, run_dir=run_dir, input_dir=input_dir, scheme=scheme, bins=bins, balance=balance,
            seed=seed, write_outside=write_outside, allow_partial=allow_partial,
        )
        stage.run(settings, force=force, plot_path=plot)
