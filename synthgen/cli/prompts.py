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

import typer

from synthgen.cli.flags import SettingsCommand, config_settings
from synthgen.envs.tool_settings import PromptsShowSettings

prompts_app = typer.Typer(
    name="prompts",
    help="Render the prompts a run sends, for a seed or a stored problem, without any server.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def show(settings: PromptsShowSettings, ctx: typer.Context) -> None:
    """Print the messages a turn would send for a seed or a stored problem."""
    from synthgen.envs import get_env
    from synthgen.envs.preview import preview, problem_row, read_text
    from synthgen.errors import UserError
    from synthgen.stages.chain.settings import ChainSettings
    from synthgen.stages.generate.settings import GenerateSettings

    s = settings
    run_settings = config_settings(ctx, ChainSettings if s.kind == "chain" else GenerateSettings)
    try:
        environment = get_env(s.env, run_settings.env)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    row = problem_row(s.env, s.stored_in, s.problem_id, s.problem)
    if row is not None and row.get("problem_id") is None and row.get("teacher_answer") is not None:
        # A turn whose answer did not parse: no problem to build a prompt from; show what was written.
        detail = f"{row['reason']}: {row.get('reason_detail') or ''}".rstrip(": ")
        typer.echo(f"===== teacher answer of {row['turn_id']} (did not parse: {detail}) =====")
        typer.echo(row["teacher_answer"].rstrip("\n"))
        return
    seed = read_text(s.seed_file) if s.seed_file else None
    messages = preview(
        environment,
        s.kind,
        run_settings,
        seed_text=seed,
        row=row,
        pass_rate=s.pass_rate,
        strategy=s.strategy,
        feedback=s.feedback,
        student=s.student,
    )
    if s.as_json:
        typer.echo(json.dumps(messages, indent=1, ensure_ascii=False))
        return
    for message in messages:
        typer.echo(f"===== {message['role']} =====")
        typer.echo(message["content"].rstrip("\n"))


def register(app: typer.Typer) -> None:
    app.add_typer(prompts_app, name="prompts")
    SettingsCommand("show", PromptsShowSettings, show).register(prompts_app)
