"""The `synthgen` command line: a Typer app that registers one thin command per stage.

Each command lives in `synthgen/commands/<name>.py` and only turns flags into settings and calls
its stage; no command does work at import time. Exit codes: 0 success, 2 bad input (one line on
stderr), 1 internal failure.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from synthgen import __version__
from synthgen.commands import register_all
from synthgen.commands._common import AppState, run_guarded

app = typer.Typer(
    name="synthgen",
    help="Make verifiable coding problems with a controlled difficulty progression, and train on them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"synthgen {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    config: Optional[Path] = typer.Option(
        None, "--config", "-c", help="YAML or TOML settings file; keys mirror the flags, flags win."
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, metavar="",
                                 help="Print the version."),
) -> None:
    """Stages: seeds -> generate -> filter -> bin -> chain -> train (run `synthgen STAGE --help`)."""
    ctx.obj = AppState(config_path=config)


register_all(app)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app with one-line errors instead of tracebacks."""
    sys.exit(run_guarded(app, argv))


if __name__ == "__main__":
    main()
