"""`synthgen generate`: multi-turn teacher/student problem generation over a seeds stage."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from synthgen.commands._common import PARTIAL_HELP, default, settings_from, shared_base_url
from synthgen.config.generate import GenerateSettings

D = GenerateSettings


def register(app: typer.Typer) -> None:
    @app.command("generate")
    def generate(
        ctx: typer.Context,
        run_dir: Path = typer.Option(default(D, "run_dir"), help="Run directory; rows go to RUN_DIR/generate/."),
        input_dir: Optional[str] = typer.Option(None, help="Seeds stage folder (default RUN_DIR/seeds)."),
        allow_partial: bool = typer.Option(False, "--allow-partial", help=PARTIAL_HELP),
        envs: str = typer.Option(",".join(default(D, "envs")), help="Comma-separated environments."),
        turns: int = typer.Option(default(D, "turns"), help="Teacher turns per lineage (SPEC: 6)."),
        attempts: int = typer.Option(default(D, "attempts"), help="Student attempts M per problem (SPEC: 32)."),
        lineages_per_seed: int = typer.Option(default(D, "lineages_per_seed"), help="Lineages per seed, spread over the environments."),
        single_turn: int = typer.Option(default(D, "single_turn"), help="K > 0: single-turn baseline, K first-turn samples per lineage."),
        max_seeds: Optional[int] = typer.Option(None, help="Use at most this many seeds."),
        base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible server for both roles (e.g. vLLM)."),
        teacher_base_url: Optional[str] = typer.Option(None, "--teacher-url", help="Teacher server (overrides --base-url)."),
        student_base_url: Optional[str] = typer.Option(None, "--student-url", help="Student server (overrides --base-url)."),
        teacher_model: str = typer.Option(default(D, "teacher").model, help="Teacher model name."),
        student_model: str = typer.Option(default(D, "student").model, help="Student model name."),
        teacher_reasoning_effort: str = typer.Option("high", "--teacher-effort", help="Teacher reasoning effort."),
        student_reasoning_effort: str = typer.Option("low", "--student-effort", help="Student reasoning effort."),
        max_in_flight: int = typer.Option(default(D, "max_in_flight"), help="LLM requests in flight at most."),
        sandbox_workers: Optional[int] = typer.Option(None, help="Sandbox worker processes (default: CPU count)."),
        shard: int = typer.Option(default(D, "shard"), envvar="SLURM_ARRAY_TASK_ID", help="This task's shard index."),
        num_shards: int = typer.Option(default(D, "num_shards"), envvar="SLURM_ARRAY_TASK_COUNT", help="Number of shards."),
        seed: int = typer.Option(default(D, "seed"), "--seed", help="Random seed recorded in the settings."),
        keep_reasoning: bool = typer.Option(False, "--keep-reasoning", help="Store the teacher's reasoning text (large)."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Show live progress."),
        force: bool = typer.Option(False, "--force", help="Restart a shard written with other settings."),
    ) -> None:
        """Run the teacher/student turn loop (SPEC §4) on the seeds; resumable, shardable."""
        from synthgen.stages import generate as stage

        extra = shared_base_url(ctx, base_url)
        settings = settings_from(
            ctx, GenerateSettings, extra=extra, run_dir=run_dir, input_dir=input_dir, envs=envs, turns=turns,
            attempts=attempts, lineages_per_seed=lineages_per_seed, single_turn=single_turn, max_seeds=max_seeds,
            **{
                "teacher.base_url": teacher_base_url, "student.base_url": student_base_url,
                "teacher.model": teacher_model, "student.model": student_model,
                "teacher.reasoning_effort": teacher_reasoning_effort,
                "student.reasoning_effort": student_reasoning_effort,
                "sandbox.workers": sandbox_workers,
            },
            max_in_flight=max_in_flight, shard=shard, num_shards=num_shards, seed=seed,
            keep_reasoning=keep_reasoning, progress=progress, allow_partial=allow_partial,
        )
        try:
            stage.run(settings, force=force)
        except stage.Interrupted as exc:
            typer.echo(f"synthgen: generate stopped by {exc}; finished rows are saved, re-run to continue", err=True)
            raise typer.Exit(130 if exc.signum == 2 else 143)
