"""`synthgen seeds`: sample 25-50-line code snippets to seed problem generation."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from synthgen.commands._common import default, settings_from
from synthgen.config.seeds import SeedsSettings

D = SeedsSettings


def register(app: typer.Typer) -> None:
    @app.command("seeds")
    def seeds(
        ctx: typer.Context,
        source: str = typer.Argument(
            default(D, "source"),
            help="dir (source trees), starcoder (Parquet with a `content` column) or solutions (JSONL/Parquet with a code column).",
        ),
        paths: Optional[List[str]] = typer.Argument(
            None, help="Folders or files to read. dir: default is this Python's standard library."
        ),
        n: int = typer.Option(default(D, "n"), "--n", help="Seeds to write, over all shards."),
        min_lines: int = typer.Option(default(D, "min_lines"), help="Shortest snippet, in lines."),
        max_lines: int = typer.Option(default(D, "max_lines"), help="Longest snippet, in lines."),
        seed: int = typer.Option(default(D, "seed"), "--seed", help="Random seed: same seed, same snippets."),
        shard: int = typer.Option(default(D, "shard"), envvar="SLURM_ARRAY_TASK_ID", help="This task's shard index."),
        num_shards: int = typer.Option(default(D, "num_shards"), envvar="SLURM_ARRAY_TASK_COUNT", help="Number of shards."),
        run_dir: Path = typer.Option(default(D, "run_dir"), help="Run directory; seeds go to RUN_DIR/seeds/."),
        code_column: str = typer.Option(default(D, "code_column"), help="solutions: column holding the code."),
        content_column: str = typer.Option(default(D, "content_column"), help="starcoder: column holding the text."),
        force: bool = typer.Option(False, "--force", help="Rewrite a shard finished with other settings."),
    ) -> None:
        """Sample code snippets (seeds) from source trees, starcoderdata-style Parquet or solutions."""
        from synthgen.errors import UserError
        from synthgen.stages import seeds as stage

        if source not in ("dir", "starcoder", "solutions"):
            raise UserError(f"unknown seed source {source!r}; choose dir, starcoder or solutions")
        settings = settings_from(
            ctx, SeedsSettings, source=source, paths=list(paths) if paths else None, n=n, min_lines=min_lines,
            max_lines=max_lines, seed=seed, shard=shard, num_shards=num_shards, run_dir=run_dir,
            code_column=code_column, content_column=content_column,
        )
        stage.run(settings, force=force)
