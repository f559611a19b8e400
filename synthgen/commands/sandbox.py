"""`synthgen sandbox`: run untrusted Python jobs from JSON lines, one verdict line per job, in order."""

from __future__ import annotations

import sys
from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    @app.command("sandbox")
    def sandbox(
        file: str = typer.Argument("-", help="JSON-lines jobs; - for standard input."),
        workers: Optional[int] = typer.Option(None, help="Zygote workers (default: CPU count)."),
        isolation: str = typer.Option("auto", help="auto (strongest available), bwrap or setuid-netns."),
        allow_unsafe: bool = typer.Option(False, "--allow-unsafe", help="Accept rlimits-only isolation (no real isolation)."),
    ) -> None:
        """Run jobs in the sandbox: {"id", "code", "calls", "expected", "timeout_s", "memory_mb"} per line.

        Each result line: {"id", "isolation", "calls": [{"status", "value", "match", "error"}, ...]}.
        Statuses: ok, exception, timeout, memory, output_too_large, killed, infra.
        """
        from synthgen.errors import UserError
        from synthgen.sandbox.cli import run_cli

        if file == "-":
            run_cli(sys.stdin, sys.stdout, workers, allow_unsafe, isolation)
            return
        try:
            stream = open(file, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot read {file}: {exc.strerror}") from None
        with stream:
            run_cli(stream, sys.stdout, workers, allow_unsafe, isolation)
