"""`synthgen train`: GRPO (TRL) on binned problems under a curriculum schedule.

    synthgen train --data data/runs/demo/bin --model PATH --curriculum reverse-medium --max-steps 3 \
        --recipe recipes/tiny-cpu.yaml --output data/runs/demo/train
    synthgen train --show-schedule reverse-medium [--max-steps 400]   # print, no training
    synthgen train --make-tiny-model data/tiny-model                  # offline tiny model for demos

torch and TRL are imported only inside the command body, so `synthgen --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from synthgen.commands._common import default, settings_from
from synthgen.config.train import TrainSettings

D = TrainSettings


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train(
        ctx: typer.Context,
        data: Optional[List[str]] = typer.Option(None, "--data", help="Binned Parquet folder (repeatable). Default: RUN_DIR/bin."),
        model: Optional[str] = typer.Option(None, "--model", help="Model folder (or Hub id when online)."),
        curriculum: str = typer.Option(default(D, "curriculum"), "--curriculum",
                                       help="uniform | classic | reverse-hard | reverse-medium | soft | hard | medium-only | frontier | a YAML schedule file."),
        output: Optional[str] = typer.Option(None, "--output", help="Checkpoints and metrics. Default: RUN_DIR/train."),
        max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Optimizer steps. Default: the recipe's, else the schedule's length (40000)."),
        recipe: Optional[str] = typer.Option(None, "--recipe", help="YAML of TRL GRPOConfig settings (see recipes/)."),
        seed: int = typer.Option(default(D, "seed"), "--seed", help="Seeds the curriculum draws and TRL."),
        num_generations: Optional[int] = typer.Option(None, "--num-generations", help="G, completions per prompt (paper: 8)."),
        batch: Optional[int] = typer.Option(None, "--per-device-batch", help="Completions per device per step."),
        learning_rate: Optional[float] = typer.Option(None, "--learning-rate"),
        max_completion_length: Optional[int] = typer.Option(None, "--max-completion-length"),
        save_steps: Optional[int] = typer.Option(None, "--save-steps"),
        logging_steps: Optional[int] = typer.Option(None, "--logging-steps"),
        report_to: Optional[List[str]] = typer.Option(None, "--report-to", help="TRL reporting backend (wandb, tensorboard, ...); repeatable."),
        use_vllm: Optional[bool] = typer.Option(None, "--use-vllm/--no-vllm", help="Generate with vLLM (GPU only). Default: the recipe's."),
        vllm_mode: Optional[str] = typer.Option(None, "--vllm-mode", help="colocate (same GPUs) | server (`trl vllm-serve` on other GPUs)."),
        vllm_server_base_url: Optional[str] = typer.Option(None, "--vllm-server-url", help="server mode: e.g. http://gpu07:8000"),
        resume: bool = typer.Option(False, "--resume", help="Continue from the newest checkpoint in the output folder."),
        resume_from: Optional[str] = typer.Option(None, "--resume-from", help="Continue from this checkpoint folder."),
        missing_bins: str = typer.Option(default(D, "missing_bins"), "--missing-bins", help="share | error: when the data lacks a bin the schedule uses."),
        run_dir: Path = typer.Option(default(D, "run_dir"), "--run-dir", help="Run directory."),
        show_schedule: Optional[str] = typer.Option(None, "--show-schedule", metavar="NAME|FILE",
                                                    help="Print a curriculum's weights by step (scaled to --max-steps if given) and exit."),
        make_tiny_model: Optional[Path] = typer.Option(None, "--make-tiny-model", metavar="DIR",
                                                       help="Write a tiny random model + tokenizer to DIR (offline demos) and exit."),
    ) -> None:
        """Train with GRPO (TRL) on binned problems, drawing bins by a curriculum schedule."""
        if show_schedule is not None:
            typer.echo(render_schedule(show_schedule, max_steps))
            return
        if make_tiny_model is not None:
            from synthgen.train.tiny import make_tiny_model as build

            typer.echo(f"tiny model written to {build(make_tiny_model)}")
            return
        settings = settings_from(
            ctx, TrainSettings, data=list(data) if data else None, model=model, curriculum=curriculum,
            output=output, max_steps=max_steps, recipe=recipe, seed=seed, num_generations=num_generations,
            per_device_train_batch_size=batch, learning_rate=learning_rate,
            max_completion_length=max_completion_length, save_steps=save_steps, logging_steps=logging_steps,
            report_to=list(report_to) if report_to else None, use_vllm=use_vllm, vllm_mode=vllm_mode,
            vllm_server_base_url=vllm_server_base_url, resume=resume, resume_from=resume_from,
            missing_bins=missing_bins, run_dir=run_dir,
        )
        _setup_logging()
        from synthgen.train.run import run

        out = run(settings)
        typer.echo(f"train: checkpoints and metrics in {out}")


def render_schedule(name: str, max_steps: int | None) -> str:
    """The --show-schedule text (pure Python: no torch)."""
    from synthgen.curriculum import ADAPTIVE, FrontierPolicy, get_schedule

    if name in ADAPTIVE:
        doc = FrontierPolicy.__doc__ or ""
        return "schedule frontier: adaptive, no fixed table\n" + "\n".join(line[4:] if line.startswith("    ") else line for line in doc.splitlines())
    schedule = get_schedule(name)
    text = schedule.render()
    if max_steps is not None and max_steps < schedule.length:
        text += "\n\nfor a run of %d steps:\n%s" % (max_steps, schedule.scaled(max_steps).render())
    else:
        text += "\n\nruns shorter than %d steps scale every boundary b to round(b * N / %d); longer runs keep the last phase" % (
            schedule.length, schedule.length)
    return text


def _setup_logging() -> None:
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
