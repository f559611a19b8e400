"""What every command shares: the config file named by `--config`, and mapping errors to exit codes."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from synthgen.config.base import SECTIONS, Settings, load_config_file, resolve_settings
from synthgen.errors import EXIT_BAD_INPUT, EXIT_INFRA, InfraIncomplete, Interrupted, UserError


@dataclass
class AppState:
    config_path: Path | None = None
    _data: dict[str, Any] | None = field(default=None, repr=False)

    def config(self) -> dict[str, Any]:
        if self._data is None:
            self._data = load_config_file(self.config_path)
        return self._data


def config_settings(ctx: typer.Context, model: type[Settings]) -> Settings:
    """`model` as the config file (`--config`) sets it, for commands that only read settings."""
    state: AppState = ctx.find_object(AppState) or AppState()
    return resolve_settings(model, state.config(), {}, known_sections=SECTIONS)


# Typer vendors its own Click; reach its exception base through a public class, not a private path.
_CLICK_EXCEPTION = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def run_guarded(app: typer.Typer, argv: list[str] | None) -> int:
    """Run the Typer app: bad input -> one line + exit 2, unfinished infra work -> exit 3,
    a signal -> 128 + signal, a bug -> exit 1 with its traceback."""
    try:
        rc = app(args=argv, standalone_mode=False)
    except UserError as exc:
        print(f"synthgen: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InfraIncomplete as exc:
        print(f"synthgen: incomplete: {exc}", file=sys.stderr)
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
    except Exception:
        import traceback

        traceback.print_exc()
        print("synthgen: internal error (the traceback above is a bug; please report it)", file=sys.stderr)
        return 1
    return rc if isinstance(rc, int) else 0
