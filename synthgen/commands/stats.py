"""`synthgen stats`: not built yet (issue 9); the command says so instead of pretending to work."""

from __future__ import annotations

import typer

from synthgen.errors import UserError


def register(app: typer.Typer) -> None:
    @app.command("stats", help="[not available yet: issue 9] stats stage.", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def _cmd(ctx: typer.Context) -> None:
        raise UserError("'synthgen stats' is not available in this version yet")
