"""`synthgen scripted-server`: a scripted (not a model) OpenAI-compatible server for tests and demos.

Its flags derive from ScriptedServerSettings (synthgen/config/scripted.py), like every stage's.
"""

from __future__ import annotations

from synthgen.cli_flags import SettingsCommand
from synthgen.config.scripted import ScriptedServerSettings
from synthgen.scripted.launch import SCRIPTED_SERVER_HELP


def scripted_server(settings: ScriptedServerSettings) -> None:
    from synthgen.scripted.launch import scripted_server_command

    scripted_server_command(settings)


COMMAND = SettingsCommand("scripted-server", ScriptedServerSettings, scripted_server, help=SCRIPTED_SERVER_HELP)
