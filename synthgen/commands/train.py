"""`synthgen train`: GRPO (TRL) on binned problems under a curriculum schedule.

    synthgen train --data data/runs/demo/bin --model PATH --curriculum reverse-medium --max-steps 3 \
        --recipe tiny-cpu --output data/runs/demo/train
    synthgen train --recipe qwen3-8b-base --data real=data/real:0.55 --data synth=RUN_DIR/bin:0.45 \
        --curriculum-sources synth --curriculum reverse-medium --eval-every 500 --eval-heldout-fraction 0.02
    synthgen train --show-schedule reverse-medium [--max-steps 400]   # print, no training
    synthgen train --make-tiny-model data/tiny-model                  # offline tiny model for demos
    synthgen train --online --dry-run --data RUN_DIR/bin --model PATH  # the online run's plan
    synthgen train --async --dry-run --data RUN_DIR/bin --model PATH   # TRL's async GRPO: config, order

What the command does is synthgen.train.command, imported when it runs: `synthgen --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.cli.flags import Alias, SettingsCommand, option
from synthgen.train.settings import TrainSettings

# The client flags every command that talks to a server shares (online: the teacher's server; the
# student is the policy, whose server --online-student-url names).
ONLINE_CLIENT = [
    Alias("--base-url", ("online.teacher.base_url",), "With --online: the teacher's server (as --online-teacher-url)."),
    Alias("--llm-use-n", ("online.llm.use_n",), "With --online: as --online-llm-use-n.", bool),
]
COMMAND = SettingsCommand(
    "train",
    TrainSettings,
    "synthgen.train.command:run",
    aliases=ONLINE_CLIENT,
    help="Train with GRPO (TRL) on binned problems, drawing bins by a curriculum schedule (or, with --online, "
    "from a problem pool that a teacher keeps at the policy's frontier).",
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
            help="With --online: print the plan (servers, rates, budgets); with --async: the async trainer's "
            "config and prompt order. Then exit; nothing is contacted or trained.",
        ),
    ],
)
