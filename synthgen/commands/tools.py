"""The debugging tools: `synthgen verify` scores one answer against one problem, showing every
step; `synthgen sandbox` runs untrusted Python jobs from JSON lines, one verdict line per job."""

from __future__ import annotations

import sys

import typer


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify(
        problem: str = typer.Argument(
            ...,
            help="Problem: a JSON file with the problem's fields, or FILE.parquet:ROW "
            "(row number, turn_id or problem_id).",
        ),
        answer: str = typer.Argument(..., help="A text file with the raw student completion ('-' reads stdin)."),
        env: str | None = typer.Option(
            None, "--env", help="induction, abduction, deduction or fuzzing (default: the problem's env field)."
        ),
        timeout: float = typer.Option(2.0, "--timeout", help="Sandbox wall clock per job, seconds."),
        memory_mb: int = typer.Option(512, "--memory-mb", help="Sandbox memory limit per job, MiB."),
        holdout_fraction: float = typer.Option(
            0.5, "--holdout-fraction", help="Induction: share of pairs held out (if the problem has no visible_count)."
        ),
        allow_unsafe: bool = typer.Option(
            False, "--allow-unsafe", help="Allow the rlimits-only sandbox where no isolation works."
        ),
        truncated: bool = typer.Option(
            False, "--truncated", help="Score the answer as cut off by max tokens (a format failure)."
        ),
    ) -> None:
        """Validate a problem, parse a student answer, run it in the sandbox and print the reward."""
        from pydantic import ValidationError

        from synthgen.config.base import ENV_NAMES, describe_validation_error
        from synthgen.config.generate import EnvSettings
        from synthgen.config.sandbox import SandboxSettings
        from synthgen.envs import verify as verify_mod
        from synthgen.errors import UserError

        if env is not None and env not in ENV_NAMES:
            raise UserError(f"unknown environment {env!r}; choose from {', '.join(ENV_NAMES)}")
        try:
            sandbox = SandboxSettings(timeout_s=timeout, memory_mb=memory_mb, allow_unsafe=allow_unsafe)
            env_settings = EnvSettings(holdout_fraction=holdout_fraction)
        except ValidationError as exc:
            raise UserError(describe_validation_error(exc)) from None
        verify_mod.run(env, problem, answer, env_settings, sandbox, truncated=truncated)

    @app.command("sandbox")
    def sandbox(
        file: str = typer.Argument("-", help="JSON-lines jobs; - for standard input."),
        workers: int | None = typer.Option(None, help="Zygote workers (default: CPU count)."),
        isolation: str = typer.Option("auto", help="auto (strongest available), bwrap or setuid-netns."),
        allow_unsafe: bool = typer.Option(
            False, "--allow-unsafe", help="Accept rlimits-only isolation (no real isolation)."
        ),
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
            stream = open(file, encoding="utf-8")  # noqa: SIM115 (opened apart to report it in one line)
        except OSError as exc:
            raise UserError(f"cannot read {file}: {exc.strerror}") from None
        with stream:
            run_cli(stream, sys.stdout, workers, allow_unsafe, isolation)
