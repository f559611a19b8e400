"""The command-line commands, each derived from its settings model (synthgen.cli.flags), so that
every flag comes from one declaration. Imports here must stay cheap: stages, torch and TRL load inside the commands."""

from __future__ import annotations

import typer

from synthgen.cli import config_show as config
from synthgen.cli import evaluate, prompts, publish, scripted_server, slurm, stages, tools, train


def register_all(app: typer.Typer) -> None:
    settings_commands = [
        *stages.COMMANDS,
        train.COMMAND,
        *evaluate.COMMANDS,
        scripted_server.COMMAND,
        *publish.COMMANDS,
        *tools.COMMANDS,
    ]
    for command in settings_commands:
        command.register(app)
    slurm.register(app)
    # `config show slurm` prints the cluster settings every slurm sub-command shares.
    config.register(app, [*settings_commands, slurm.SHOW])
    prompts.register(app)
