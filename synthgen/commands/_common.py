"""What every command shares: the config file, settings from flags, and error handling."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import typer

from synthgen.config.base import Settings, load_config_file, resolve_settings
from synthgen.errors import EXIT_BAD_INPUT, EXIT_INFRA, InfraIncomplete, UserError

S = TypeVar("S", bound=Settings)

# `--allow-partial` on every stage that reads another stage's folder (InputSettings.allow_partial).
PARTIAL_HELP = "Read an unfinished input stage as far as it is finished, on purpose (the output records it)."

# Sections a config file may hold: one per command that takes settings.
SECTIONS = frozenset({"seeds", "generate", "filter", "bin", "chain", "train", "slurm", "stats", "demo"})


@dataclass
class AppState:
    config_path: Path | None = None
    _data: dict[str, Any] | None = field(default=None, repr=False)

    def config(self) -> dict[str, Any]:
        if self._data is None:
            self._data = load_config_file(self.config_path)
        return self._data


def default(model: type[Settings], name: str) -> Any:
    """A field's default, so that `--help` shows the same default the settings use."""
    f = model.model_fields[name]
    return f.get_default(call_default_factory=True)


def settings_from(ctx: typer.Context, model: type[S], /, extra: dict[str, Any] | None = None, **flags: Any) -> S:
    """Settings for `model`: defaults < config file < flags the user actually typed.

    A flag left at its default does not override the file; Click tells us which were given.
    Nested settings are passed as `teacher={"model": ...}`-style dicts in `flags`, or as
    `"teacher.model"` keys, each overriding only that key. `extra` holds values the command
    derived itself (already known to be explicit); typed flags still win over it.
    """
    state: AppState = ctx.find_object(AppState) or AppState()
    given: dict[str, Any] = {}
    for name, value in (extra or {}).items():
        _put(given, name.split("."), value)
    for name, value in flags.items():
        param = name.split(".")[0].replace("-", "_")
        source = ctx.get_parameter_source(name.replace(".", "_")) if "." in name else ctx.get_parameter_source(param)
        if getattr(source, "name", None) not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        _put(given, name.split("."), value)
    return resolve_settings(model, state.config(), given, known_sections=SECTIONS)


def shared_base_url(ctx: typer.Context, base_url: str | None) -> dict[str, Any]:
    """`--base-url` as explicit overrides of both roles' URLs (role-specific flags still win)."""
    if not base_url or getattr(ctx.get_parameter_source("base_url"), "name", None) != "COMMANDLINE":
        return {}
    return {"teacher.base_url": base_url, "student.base_url": base_url}


def _put(target: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


# Typer vendors its own Click; reach its exception base through a public class, not a private path.
_CLICK_EXCEPTION = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def run_guarded(app: typer.Typer, argv: list[str] | None) -> int:
    """Run the Typer app; UserError -> one line + exit 2, interrupt -> 130, bug -> 1 with context."""
    try:
        rc = app(args=argv, standalone_mode=False)
    except UserError as exc:
        print(f"synthgen: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InfraIncomplete as exc:
        print(f"synthgen: incomplete: {exc}", file=sys.stderr)
        return EXIT_INFRA
    except _CLICK_EXCEPTION as exc:
        exc.show()
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("synthgen: interrupted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
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
