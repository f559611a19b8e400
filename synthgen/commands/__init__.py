"""The command-line commands. Stage commands are derived from their settings models
(synthgen.commands.derive); the tools (verify, sandbox, scripted-server) take plain flags.
Imports here must stay cheap: stages, torch and TRL load inside the commands."""

from __future__ import annotations

import typer

from synthgen.commands import config, prompts, sandbox, scripted_server, slurm, stages, train, verify


def register_all(app: typer.Typer) -> None:
    settings_commands = [*stages.COMMANDS, train.COMMAND, scripted_server.COMMAND]
    for command in settings_commands:
        command.register(app)
    slurm.register(app)
    # `config show slurm` prints the cluster settings every slurm sub-command shares.
    config.register(app, [*settings_commands, slurm.SHOW])
    for module in (verify, prompts, sandbox):
        module.register(app)
