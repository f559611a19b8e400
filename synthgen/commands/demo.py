"""`synthgen demo`: the README's main job, the whole pipeline on built-in defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from synthgen.commands._common import default, settings_from
from synthgen.config.demo import DemoSettings

D = DemoSettings


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo(
        ctx: typer.Context,
        run_dir: Path = typer.Option(default(D, "run_dir"), help="Where the run's stages are written."),
        seeds: int = typer.Option(default(D, "seeds"), help="Seeds taken from the standard library."),
        turns: int = typer.Option(default(D, "turns"), help="Teacher turns per lineage."),
        attempts: int = typer.Option(default(D, "attempts"), help="Student attempts per problem."),
        envs: str = typer.Option(",".join(default(D, "envs")), help="Comma-separated environments."),
        seed: int = typer.Option(default(D, "seed"), "--seed", help="Random seed."),
        base_url: Optional[str] = typer.Option(
            None, help="A real OpenAI-compatible server (e.g. vLLM). Default: start the scripted server."
        ),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Show live progress."),
    ) -> None:
        """Run seeds -> generate -> filter -> bin -> chain end to end (scripted server unless --base-url)."""
        from synthgen.stages import demo as stage

        settings = settings_from(
            ctx, DemoSettings, run_dir=run_dir, seeds=seeds, turns=turns, attempts=attempts, envs=envs,
            seed=seed, base_url=base_url, progress=progress,
        )
        stage.run(settings)
