"""The command-line commands. Stage commands are derived from their settings models
(synthgen.cli_flags); the tools (verify, sandbox, prompts) take plain flags.
Imports here must stay cheap: stages, torch and TRL load inside the commands."""

from __future__ import annotations

import typer

from synthgen.commands import config, evaluate, prompts, publish, scripted_server, slurm, stages, tools, train


def register_all(app: typer.Typer) -> None:
    settings_commands = [
        *stages.COMMANDS,
        train.COMMAND,
        *evaluate.COMMANDS,
        scripted_server.COMMAND,
        *publish.COMMANDS,
    ]
    for command in settings_commands:
        command.register(app)
    slurm.register(app)
    # `config show slurm` prints the cluster settings every slurm sub-command shares.
    config.register(app, [*settings_commands, slurm.SHOW])
    for module in (tools, prompts, evaluate):
        module.register(app)
