"""`synthgen demo`: not built yet (issue 5); the command says so instead of pretending to work."""

from __future__ import annotations

import typer

from synthgen.errors import UserError


def register(app: typer.Typer) -> None:
    @app.command("demo", help="[not available yet: issue 5] demo stage.", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def _cmd(ctx: typer.Context) -> None:
        raise UserError("'synthgen demo' is not available in this version yet")
