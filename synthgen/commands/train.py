"""`synthgen train`: GRPO (TRL) on binned problems under a curriculum schedule.

    synthgen train --data data/runs/demo/bin --model PATH --curriculum reverse-medium --max-steps 3 \
        --recipe tiny-cpu --output data/runs/demo/train
    synthgen train --recipe qwen3-8b-base --data real=data/real:0.55 --data synth=RUN_DIR/bin:0.45 \
        --curriculum-sources synth --curriculum reverse-medium --eval-every 500 --eval-heldout-fraction 0.02
    synthgen train --show-schedule reverse-medium [--max-steps 400]   # print, no training
    synthgen train --make-tiny-model data/tiny-model                  # offline tiny model for demos

torch and TRL are imported only inside the command body, so `synthgen --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from synthgen.commands.derive import SettingsCommand, option
from synthgen.config.train import TrainSettings


def train(settings: TrainSettings, show_schedule: Optional[str], make_tiny_model: Optional[Path]) -> None:
    """Train with GRPO (TRL) on binned problems, drawing bins by a curriculum schedule."""
    import typer

    if show_schedule is not None:
        typer.echo(render_schedule(show_schedule, settings.max_steps))
        return
    from synthgen.train.preflight import require_train_extra

    require_train_extra()
    if make_tiny_model is not None:
        from synthgen.train.tiny import make_tiny_model as build

        typer.echo(f"tiny model written to {build(make_tiny_model)}")
        return
    import logging

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from synthgen.train.quiet import quiet_libraries
    from synthgen.train.run import run

    quiet_libraries()

    typer.echo(f"train: checkpoints and metrics in {run(settings)}")


def render_schedule(name: str, max_steps: int | None) -> str:
    """The --show-schedule text (pure Python: no torch)."""
    from synthgen.curriculum import ADAPTIVE, FrontierPolicy, get_schedule

    if name in ADAPTIVE:
        doc = (FrontierPolicy.__doc__ or "").splitlines()
        return "schedule frontier: adaptive, no fixed table\n" + "\n".join(line.removeprefix("    ") for line in doc)
    schedule = get_schedule(name)
    text = schedule.render()
    if max_steps is not None and max_steps < schedule.length:
        text += f"\n\nfor a run of {max_steps} steps:\n{schedule.scaled(max_steps).render()}"
    else:
        text += (f"\n\nruns shorter than {schedule.length} steps scale every boundary b to "
                 f"round(b * N / {schedule.length}); longer runs keep the last phase")
    return text


COMMAND = SettingsCommand("train", TrainSettings, train, extras=[
    option("show_schedule", Optional[str], "--show-schedule", metavar="NAME|FILE",
           help="Print a curriculum's weights by step (scaled to --max-steps if given) and exit."),
    option("make_tiny_model", Optional[Path], "--make-tiny-model", metavar="DIR",
           help="Write a tiny random model and tokenizer to DIR (offline demos) and exit."),
])
