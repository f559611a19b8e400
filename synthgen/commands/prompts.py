"""`synthgen prompts show`: the exact messages a turn would send to the teacher (or the student), no server needed.

    synthgen prompts show --env induction --kind first                         # on a built-in sample snippet
    synthgen prompts show --env deduction --kind first --seed-file snippet.py
    synthgen prompts show --env abduction --kind mutate --run-dir data/runs/demo --problem-id 3f2a...
    synthgen prompts show --env fuzzing --kind mutate --problem problem.json --pass-rate 0.9
    synthgen prompts show --env induction --kind chain --run-dir R --problem-id ID --strategy chain-easy
    synthgen prompts show --env deduction --student --problem problem.json     # what the student reads

A stored problem is looked up by problem_id in the run's generate, filter, bin and chain folders;
its summary is rebuilt from the row (Summary.from_row) unless --pass-rate makes one up. The
progression bands, the environment settings and the chain bands come from the config file's
`generate` and `chain` sections, as in a real run.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from synthgen.cli_flags import config_settings

prompts_app = typer.Typer(
    name="prompts",
    help="Render the prompts a run sends, for a seed or a stored problem, without any server.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def register(app: typer.Typer) -> None:
    app.add_typer(prompts_app, name="prompts")


@prompts_app.command("show")
def show(
    ctx: typer.Context,
    env: str = typer.Option(..., "--env", help="Environment: induction, abduction, deduction or fuzzing."),
    kind: str = typer.Option("first", "--kind", help="Teacher prompt kind: first, mutate or chain."),
    seed_file: Path | None = typer.Option(
        None, "--seed-file", help="First turn: a file whose text is the seed snippet."
    ),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Run directory holding the stored problem."),
    problem_id: str | None = typer.Option(
        None, "--problem-id", help="The stored problem's problem_id (with --run-dir)."
    ),
    problem_file: Path | None = typer.Option(
        None,
        "--problem",
        help="A problem as a JSON file with its fields (as `synthgen verify` reads), or FILE.parquet:ROW.",
    ),
    pass_rate: float | None = typer.Option(
        None, "--pass-rate", min=0.0, max=1.0, help="Make up the student summary with this pass rate (of 32 attempts)."
    ),
    strategy: str | None = typer.Option(
        None,
        "--strategy",
        help="Override the strategy: easier, somewhat-easier, similar, harder (mutate); "
        "chain-medium or chain-easy (chain, default chain-medium).",
    ),
    feedback: str | None = typer.Option(None, "--feedback", help="What was wrong with the teacher's last answer."),
    student: bool = typer.Option(False, "--student", help="Show the student's messages for the problem instead."),
    as_json: bool = typer.Option(False, "--json", help="Print the messages as a JSON list, exactly as sent."),
) -> None:
    """Print the messages a turn would send for a seed or a stored problem."""
    from synthgen.config.chain import ChainSettings
    from synthgen.config.generate import GenerateSettings
    from synthgen.envs import get_env
    from synthgen.envs.preview import preview, problem_row, read_text
    from synthgen.errors import UserError

    if kind not in ("first", "mutate", "chain"):
        raise UserError(f"--kind must be first, mutate or chain, not {kind!r}")
    settings = config_settings(ctx, ChainSettings if kind == "chain" else GenerateSettings)
    try:
        environment = get_env(env, settings.env)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    row = problem_row(env, run_dir, problem_id, problem_file)
    seed = read_text(seed_file) if seed_file else None
    messages = preview(
        environment,
        kind,
        settings,
        seed_text=seed,
        row=row,
        pass_rate=pass_rate,
        strategy=strategy,
        feedback=feedback,
        student=student,
    )
    if as_json:
        typer.echo(json.dumps(messages, indent=1, ensure_ascii=False))
        return
    for message in messages:
        typer.echo(f"===== {message['role']} =====")
        typer.echo(message["content"].rstrip("\n"))
