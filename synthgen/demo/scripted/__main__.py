"""`python -m synthgen.demo.scripted SETTINGS_JSON`: how a process-mode scripted server (NOT a model) starts,
with no CLI import; people use `synthgen scripted-server`."""

import sys

from pydantic import ValidationError

from synthgen.demo.scripted.launch import scripted_server_command
from synthgen.demo.scripted.settings import ScriptedServerSettings
from synthgen.errors import UserError

if __name__ == "__main__":
    try:
        scripted_server_command(ScriptedServerSettings.model_validate_json(sys.argv[1]) if sys.argv[1:] else None)
    except (UserError, ValidationError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
