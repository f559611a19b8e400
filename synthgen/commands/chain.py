"""`synthgen chain`: hard -> medium -> easy stepping-stone chains built by the teacher (SPEC §7)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from synthgen.commands._common import default, settings_from, shared_base_url
from synthgen.config.chain import ChainSettings

D = ChainSettings


def register(app: typer.Typer) -> None:
    @app.command("chain")
    def chain(
        ctx: typer.Context,
        run_dir: Path = typer.Option(default(D, "run_dir"), help="Run directory; chains go to RUN_DIR/chain/."),
        input_dir: Optional[str] = typer.Option(None, help="Hard problems to start from (default RUN_DIR/bin/hard)."),
        tries: int = typer.Option(default(D, "tries"), help="Teacher tries per step before giving a chain up."),
        attempts: int = typer.Option(default(D, "attempts"), help="Student attempts M per variant."),
        max_chains: Optional[int] = typer.Option(None, help="Hard problems to start from, at most."),
        disjoint: bool = typer.Option(
            False, "--disjoint", help="Also write the paper's disjoint baseline (unrelated problems, same pass rates)."
        ),
        base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible server for both roles."),
        teacher_model: str = typer.Option(default(D, "teacher").model, help="Teacher model name."),
        student_model: str = typer.Option(default(D, "student").model, help="Student model name."),
        max_in_flight: int = typer.Option(default(D, "max_in_flight"), help="LLM requests in flight at most."),
        shard: int = typer.Option(default(D, "shard"), envvar="SLURM_ARRAY_TASK_ID", help="This task's shard index."),
        num_shards: int = typer.Option(default(D, "num_shards"), envvar="SLURM_ARRAY_TASK_COUNT", help="Number of shards."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Show live progress."),
        force: bool = typer.Option(False, "--force", help="Restart a shard written with other settings."),
    ) -> None:
        """Build hard -> medium -> easy chains from the bin stage's hard problems."""
        from synthgen.stages import chain as stage

        extra = shared_base_url(ctx, base_url)
        settings = settings_from(
            ctx, ChainSettings, extra=extra, run_dir=run_dir, input_dir=input_dir, tries=tries, attempts=attempts,
            max_chains=max_chains, disjoint=disjoint, max_in_flight=max_in_flight, shard=shard,
            num_shards=num_shards, progress=progress,
            **{"teacher.model": teacher_model, "student.model": student_model},
        )
        try:
            stage.run(settings, force=force)
        except stage.Interrupted as exc:
            typer.echo(f"synthgen: chain stopped by {exc}; finished rows are saved, re-run to continue", err=True)
            raise typer.Exit(130 if exc.signum == 2 else 143)
