"""`synthgen config show [STAGE] [flags]`: the settings a command would run with, resolved.

    synthgen --config run.yaml config show                      # every stage, from the file alone
    synthgen --config run.yaml config show generate --base-url http://gpu01:8000/v1

The stage sub-commands take exactly the stage's own flags (the same derivation as the stage
itself), so what is printed is what the stage would use, including what each LLM role is sent.
"""

from __future__ import annotations

import typer

from synthgen.cli.flags import SettingsCommand, describe
from synthgen.errors import UserError
from synthgen.settings.base import ConfigFile

config_app = typer.Typer(
    name="config",
    help="Write a config file to start from (init), or print the settings a command would run with (show).",
    no_args_is_help=True,
    add_completion=False,
)
show_app = typer.Typer(
    name="show",
    help="Print the resolved settings of a command (no STAGE: every stage).",
    invoke_without_command=True,
    add_completion=False,
)


def register(app: typer.Typer, commands: list[SettingsCommand]) -> None:
    from synthgen.cli import config_init

    app.add_typer(config_app, name="config")
    config_init.register(config_app, commands)
    config_app.add_typer(show_app, name="show")
    for command in commands:
        command.register(show_app, show=True)

    @show_app.callback()
    def show_all(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is not None:
            return
        config: ConfigFile = ctx.find_object(ConfigFile) or ConfigFile()
        shown = set()
        for command in commands:
            if command.model in shown:
                continue
            shown.add(command.model)
            try:
                settings = config.settings(command.model)
            except UserError as exc:  # a stage with required flags (stats RUN_DIR) has nothing to show yet
                typer.echo(f"# synthgen {command.name}: needs flags ({exc})\n")
                continue
            typer.echo(describe(command.name, settings) + "\n")
