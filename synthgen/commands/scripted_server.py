"""`synthgen scripted-server`: a scripted (not a model) OpenAI-compatible server for tests and demos.

Its flags are derived from ScriptedServerSettings (help from each field's description), so a knob
is declared once, in synthgen/config/scripted.py.
"""

from __future__ import annotations

import inspect
from typing import List, Optional

import typer

from synthgen.config.scripted import ScriptedServerSettings
from synthgen.scripted.launch import FLAG_NAMES, SCRIPTED_SERVER_HELP, field_kind


def _parameters() -> list[inspect.Parameter]:
    params = []
    for name, info in ScriptedServerSettings.model_fields.items():
        flag = "--" + FLAG_NAMES.get(name, name).replace("_", "-")
        kind, choices, repeatable = field_kind(info.annotation)
        shown = f"{info.description} ({' | '.join(choices)})" if choices else info.description
        if repeatable:
            annotation, default = Optional[List[kind]], None  # None: the settings' default
        else:
            annotation, default = (Optional[kind] if info.default is None else kind), info.default
        option = typer.Option(default, flag, help=shown)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation))
    return params


def register(app: typer.Typer) -> None:
    def scripted_server(**given) -> None:
        from synthgen.scripted.launch import scripted_server_command

        scripted_server_command(**{k: v for k, v in given.items() if v is not None})

    scripted_server.__signature__ = inspect.Signature(_parameters())  # type: ignore[attr-defined]
    app.command("scripted-server", help=SCRIPTED_SERVER_HELP)(scripted_server)
