"""What `synthgen train` does with its settings and its action flags: print a dry run or a schedule,
write a tiny model, or train (offline curriculum, `--async`, or `--online`). torch and TRL load only here."""

from __future__ import annotations

import logging
from pathlib import Path

from synthgen.errors import UserError
from synthgen.store.paths import output_folder


def run(settings, show_schedule: str | None, make_tiny_model: Path | None, dry_run: bool) -> None:
    if dry_run and settings.async_grpo:
        from synthgen.train.async_run import describe_setup, prepare
        from synthgen.train.preflight import require_train_extra

        require_train_extra()
        print(describe_setup(prepare(settings, dry_run=True)))  # checks, config and prompt order; loads nothing
        return
    if dry_run:
        if not settings.online.enabled:
            raise UserError("--dry-run prints the plan of an --online or --async run; add one of them")
        from synthgen.online.plan import describe_plan

        print(describe_plan(settings))
        return
    if show_schedule is not None:
        from synthgen.train.curriculum import describe_schedule

        print(describe_schedule(show_schedule, settings.max_steps))
        return
    if make_tiny_model is not None:
        output_folder(make_tiny_model, "--make-tiny-model")
    else:
        from synthgen.train.run import check_resume_from, output_dir

        output_folder(output_dir(settings), "--output" if settings.output else "--run-dir")
        check_resume_from(settings)
    from synthgen.train.preflight import require_train_extra

    require_train_extra()
    from synthgen.train.quiet import quiet_libraries

    quiet_libraries()  # before anything loads: no progress bars for shards and maps, no library noise
    if make_tiny_model is not None:
        from synthgen.train.tiny import make_tiny_model as build

        print(f"tiny model written to {build(make_tiny_model)}")
        return
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if settings.online.enabled:
        from synthgen.online.run import run_online as train
    elif settings.async_grpo:
        from synthgen.train.async_run import run_async as train
    else:
        from synthgen.train.run import run as train
    print(f"train: checkpoints and metrics in {train(settings)}")
