"""`synthgen filter`: drop invalid, out-of-band, contaminated and near-duplicate problems, with reasons."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from synthgen.commands._common import PARTIAL_HELP, default, settings_from
from synthgen.config.filter import ContaminationSettings, DedupSettings, FilterSettings

D = FilterSettings
DD = DedupSettings
DC = ContaminationSettings


def register(app: typer.Typer) -> None:
    @app.command("filter")
    def filter_(
        ctx: typer.Context,
        run_dir: Path = typer.Option(default(D, "run_dir"), help="Run directory; output goes to RUN_DIR/filter/."),
        input_dir: Optional[str] = typer.Option(None, "--input", help="Folder of problem Parquet files (default RUN_DIR/generate)."),
        allow_partial: bool = typer.Option(False, "--allow-partial", help=PARTIAL_HELP),
        band_low: float = typer.Option(default(D, "band_low"), help="Lowest pass rate kept (inclusive)."),
        band_high: float = typer.Option(default(D, "band_high"), help="Highest pass rate kept (inclusive)."),
        dedup_enabled: bool = typer.Option(True, "--dedup/--no-dedup", help="Remove MinHash near-duplicates."),
        dedup_threshold: float = typer.Option(default(DD, "threshold"), "--threshold", help="Jaccard threshold of a near-duplicate."),
        dedup_num_perm: int = typer.Option(default(DD, "num_perm"), "--num-perm", help="MinHash permutations."),
        dedup_ngram: int = typer.Option(default(DD, "ngram"), "--ngram", help="Tokens per shingle."),
        dedup_against: Optional[List[str]] = typer.Option(None, "--against", help="An earlier run (or its filter folder) whose kept problems count as already taken; repeatable."),
        dedup_workers: Optional[int] = typer.Option(None, "--workers", help="Processes for MinHash signatures (default: usable CPUs)."),
        contamination_references: Optional[List[str]] = typer.Option(None, "--reference", help="Reference texts (Parquet/JSONL) to check for n-gram overlap; repeatable."),
        contamination_columns: Optional[List[str]] = typer.Option(None, "--reference-column", help="Text column(s) of the reference files (default: text); repeatable."),
        contamination_ngram: int = typer.Option(default(DC, "ngram"), "--contamination-ngram", help="Words per n-gram in the overlap check."),
        rejects: bool = typer.Option(True, "--rejects/--no-rejects", help="Write rejected rows with their reason to RUN_DIR/filter/rejects/."),
        force: bool = typer.Option(False, "--force", help="Redo a filter made with other settings."),
    ) -> None:
        """Filter generated problems (SPEC §5): every rejected row gets one reason code, counted in stats.json."""
        from synthgen.stages import filter as stage

        settings = settings_from(
            ctx, FilterSettings, run_dir=run_dir, input_dir=input_dir, band_low=band_low, band_high=band_high,
            rejects=rejects, allow_partial=allow_partial,
            **{
                "dedup.enabled": dedup_enabled, "dedup.threshold": dedup_threshold,
                "dedup.num_perm": dedup_num_perm, "dedup.ngram": dedup_ngram,
                "dedup.against": list(dedup_against) if dedup_against else None,
                "dedup.workers": dedup_workers,
                "contamination.references": list(contamination_references) if contamination_references else None,
                "contamination.columns": list(contamination_columns) if contamination_columns else None,
                "contamination.ngram": contamination_ngram,
            },
        )
        stage.run(settings, force=force)
