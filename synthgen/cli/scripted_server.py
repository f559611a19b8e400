"""`synthgen scripted-server`: a scripted (not a model) OpenAI-compatible server for tests and demos.

Its flags derive from ScriptedServerSettings (synthgen/demo/scripted/settings.py), like every stage's.
"""

from __future__ import annotations

from synthgen.cli.flags import SettingsCommand
from synthgen.demo.scripted.launch import SCRIPTED_SERVER_HELP
from synthgen.demo.scripted.settings import ScriptedServerSettings


def scripted_server(settings: ScriptedServerSettings) -> None:
    from synthgen.demo.scripted.launch import scripted_server_command

    scripted_server_command(settings)


COMMAND = SettingsCommand("scripted-server", ScriptedServerSettings, scripted_server, help=SCRIPTED_SERVER_HELP)
