"""The `synthgen` command line: a Typer app that registers the commands of its table (synthgen/cli/table.py).

A stage command is its settings model plus the function that runs it; its flags are derived from
the model (synthgen.cli.flags). No command does work at import time. Exit codes: 0 success,
2 bad input (one line on stderr), 3 work left unfinished by infrastructure failures (re-run to
retry it), 128 + N stopped by signal N after saving, 1 internal failure (a bug: traceback).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import typer

from synthgen import __version__
from synthgen.cli.table import config_file, register_all
from synthgen.errors import (
    EXIT_BAD_INPUT,
    EXIT_INFRA,
    InfraIncomplete,
    Interrupted,
    OutOfSpace,
    UserError,
    is_out_of_space,
    stop_on_sigterm,
)

app = typer.Typer(
    name="synthgen",
    help="Make verifiable coding problems with a controlled difficulty progression, and train on them.",
    epilog='"The paper" in the help texts: Sancaktar et al., "A Deep Dive into Scaling RL for Code Generation '
    'with Synthetic Data and Curricula", arXiv:2603.24202 (2026); its tables and sections are named as it '
    "numbers them.",
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
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        metavar="FILE",
        help="YAML or TOML settings file (also accepted after the command); keys mirror the flags, flags win. "
        "`synthgen config init` writes one.",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, metavar="", help="Print the version."
    ),
) -> None:
    """Stages: seeds -> generate -> filter -> bin -> chain -> train (run `synthgen STAGE --help`)."""
    ctx.obj = config_file(config)


register_all(app)


# Typer vendors its own Click; reach its exception base through a public class, not a private path.
_CLICK_EXCEPTION = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def command_tree(app: typer.Typer):
    """The app as the Click command Typer builds, with an empty metavar on every flag (the help option
    included, built per command with its context's names): Typer would print `<bool>` after them."""
    command = typer.main.get_command(app)
    _flags_as_flags(command, typer.Context(command, **command.context_settings))
    return command


def _flags_as_flags(command, ctx: typer.Context) -> None:
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    for name, sub in getattr(command, "commands", {}).items():
        _flags_as_flags(sub, typer.Context(sub, parent=ctx, info_name=name, **sub.context_settings))


def run_guarded(app: typer.Typer, argv: list[str] | None) -> int:
    """Run the Typer app: bad input -> one line + exit 2, unfinished infra work -> exit 3,
    a signal -> 128 + signal, a bug -> exit 1 with its traceback."""
    try:
        rc = command_tree(app)(args=argv, standalone_mode=False)
    except UserError as exc:
        print(f"synthgen: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InfraIncomplete as exc:
        name = _command_name(argv) if isinstance(exc, OutOfSpace) else ""
        print(f"synthgen: incomplete: {name + ': ' if name else ''}{exc}", file=sys.stderr)
        return EXIT_INFRA
    except Interrupted as exc:
        print(f"synthgen: {exc}", file=sys.stderr)
        return 128 + exc.signum
    except _CLICK_EXCEPTION as exc:  # a bad flag or value: one line, like every other bad input
        message = " ".join(exc.format_message().split())
        hint = f" (see `{exc.ctx.command_path} --help`)" if getattr(exc, "ctx", None) is not None else ""
        print(f"synthgen: error: {message}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except typer.Exit as exc:
        return exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        print("synthgen: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if is_out_of_space(exc):  # a full disk anywhere else (SQLite, a library's own files): infrastructure
            written = getattr(exc, "filename", None) or "a file"  # SQLite's error names no file
            print(f"synthgen: incomplete: {_command_name(argv)}: {OutOfSpace(written, exc)}", file=sys.stderr)
            return EXIT_INFRA

        import traceback

        traceback.print_exc()
        print("synthgen: internal error (the traceback above is a bug; please report it)", file=sys.stderr)
        return 1
    return rc if isinstance(rc, int) else 0


def _command_name(argv: list[str] | None) -> str:
    """The command a command line runs (`generate`), for messages that have no other context."""
    names = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    return next((a for a in (sys.argv[1:] if argv is None else argv) if a in names), "")


# Without a terminal (a Slurm log, a pipe) rich wraps every console line at 80 columns, mid-phrase,
# which breaks grep; this width keeps each line whole (help panels keep 80: synthgen.cli.flags).
PLAIN_COLUMNS = 100_000


@contextlib.contextmanager
def plain_lines():
    """Unwrapped console lines when neither output is a terminal, unless COLUMNS says otherwise; the
    width is taken back after the run, so that an in-process caller (a test) keeps its own."""
    import os

    plain = "COLUMNS" not in os.environ and not any(_isatty(s) for s in (sys.stdout, sys.stderr))
    if plain:
        os.environ["COLUMNS"] = str(PLAIN_COLUMNS)
    try:
        yield
    finally:
        if plain:
            os.environ.pop("COLUMNS", None)


def _isatty(stream) -> bool:
    with contextlib.suppress(AttributeError, ValueError):
        return stream.isatty()
    return False


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app with one-line errors instead of tracebacks."""
    stop_on_sigterm()
    with plain_lines():
        rc = run_guarded(app, argv)
    if rc > 128:  # stopped by a signal, everything saved: leave now, not after tearing down every object
        _exit_now(rc)
    sys.exit(rc)


def _exit_now(rc: int) -> None:
    """Exit without the interpreter's teardown, which frees a big run's objects one by one (tens of
    seconds on a busy machine, past a preemption's grace period). Streams and logs are flushed first."""
    import logging
    import os

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(rc)


if __name__ == "__main__":
    main()
