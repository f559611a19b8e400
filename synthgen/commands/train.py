"""`synthgen train`: GRPO (TRL) on binned problems under a curriculum schedule.

    synthgen train --data data/runs/demo/bin --model PATH --curriculum reverse-medium --max-steps 3 \
        --recipe tiny-cpu --output data/runs/demo/train
    synthgen train --recipe qwen3-8b-base --data real=data/real:0.55 --data synth=RUN_DIR/bin:0.45 \
        --curriculum-sources synth --curriculum reverse-medium --eval-every 500 --eval-heldout-fraction 0.02
    synthgen train --show-schedule reverse-medium [--max-steps 400]   # print, no training
    synthgen train --make-tiny-model data/tiny-model                  # offline tiny model for demos
    synthgen train --online --dry-run --data RUN_DIR/bin --model PATH  # the online run's plan

torch and TRL are imported only inside the command body, so `synthgen --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.cli_flags import SettingsCommand, option
from synthgen.config.train import TrainSettings


def train(settings: TrainSettings, show_schedule: str | None, make_tiny_model: Path | None, dry_run: bool) -> None:
    """Train with GRPO (TRL) on binned problems, drawing bins by a curriculum schedule (or, with --online,
    from a problem pool that a teacher keeps at the policy's frontier)."""
    import typer

    if dry_run:
        if not settings.online.enabled:
            from synthgen.errors import UserError

            raise UserError("--dry-run prints the plan of an --online run; add --online")
        from synthgen.online.plan import describe_plan

        typer.echo(describe_plan(settings))
        return
    if show_schedule is not None:
        from synthgen.curriculum import describe_schedule

        typer.echo(describe_schedule(show_schedule, settings.max_steps))
        return
    from synthgen.train.preflight import require_train_extra

    require_train_extra()
    from synthgen.train.quiet import quiet_libraries

    quiet_libraries()  # before anything loads: no progress bars for shards and maps, no library noise
    if make_tiny_model is not None:
        from synthgen.train.tiny import make_tiny_model as build

        typer.echo(f"tiny model written to {build(make_tiny_model)}")
        return
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if settings.online.enabled:
        from synthgen.online.run import run_online as run
    else:
        from synthgen.train.run import run

    typer.echo(f"train: checkpoints and metrics in {run(settings)}")


COMMAND = SettingsCommand(
    "train",
    TrainSettings,
    train,
    extras=[
        option(
            "show_schedule",
            str | None,
            "--show-schedule",
            metavar="NAME|FILE",
            help="Print a curriculum's weights by step (scaled to --max-steps if given) and exit.",
        ),
        option(
            "make_tiny_model",
            Path | None,
            "--make-tiny-model",
            metavar="DIR",
            help="Write a tiny random model and tokenizer to DIR (offline demos) and exit.",
        ),
        option(
            "dry_run",
            bool,
            "--dry-run",
            default=False,
            help="With --online: print the plan (servers, rates, budgets) and exit; nothing is contacted or trained.",
        ),
    ],
)
