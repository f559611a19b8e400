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
from typing import Optional

import typer

from synthgen.commands._common import config_settings

prompts_app = typer.Typer(
    name="prompts",
    help="Render the prompts a run sends, for a seed or a stored problem, without any server.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# A snippet of our own for a first-turn preview when no --seed-file is given.
SAMPLE_SEED = '''def merge_ranges(ranges):
    """Merge overlapping (start, end) ranges and return them sorted."""
    merged = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
'''
CHAIN_TARGETS = {"chain-medium": "medium", "chain-easy": "easy"}


def register(app: typer.Typer) -> None:
    app.add_typer(prompts_app, name="prompts")


@prompts_app.command("show")
def show(
    ctx: typer.Context,
    env: str = typer.Option(..., "--env", help="Environment: induction, abduction, deduction or fuzzing."),
    kind: str = typer.Option("first", "--kind", help="Teacher prompt kind: first, mutate or chain."),
    seed_file: Optional[Path] = typer.Option(
        None, "--seed-file", help="First turn: a file whose text is the seed snippet."
    ),
    run_dir: Optional[Path] = typer.Option(None, "--run-dir", help="Run directory holding the stored problem."),
    problem_id: Optional[str] = typer.Option(
        None, "--problem-id", help="The stored problem's problem_id (with --run-dir)."
    ),
    problem_file: Optional[Path] = typer.Option(
        None,
        "--problem",
        help="A problem as a JSON file with its fields (as `synthgen verify` reads), or FILE.parquet:ROW.",
    ),
    pass_rate: Optional[float] = typer.Option(
        None, "--pass-rate", min=0.0, max=1.0, help="Make up the student summary with this pass rate (of 32 attempts)."
    ),
    strategy: Optional[str] = typer.Option(
        None,
        "--strategy",
        help="Override the strategy: easier, somewhat-easier, similar, harder (mutate); "
        "chain-medium or chain-easy (chain, default chain-medium).",
    ),
    feedback: Optional[str] = typer.Option(None, "--feedback", help="What was wrong with the teacher's last answer."),
    student: bool = typer.Option(False, "--student", help="Show the student's messages for the problem instead."),
    as_json: bool = typer.Option(False, "--json", help="Print the messages as a JSON list, exactly as sent."),
) -> None:
    """Print the messages a turn would send for a seed or a stored problem."""
    from synthgen.config.chain import ChainSettings
    from synthgen.config.generate import GenerateSettings
    from synthgen.envs import get_env
    from synthgen.errors import UserError

    if kind not in ("first", "mutate", "chain"):
        raise UserError(f"--kind must be first, mutate or chain, not {kind!r}")
    settings = config_settings(ctx, ChainSettings if kind == "chain" else GenerateSettings)
    try:
        environment = get_env(env, settings.env)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    row = _problem_row(env, run_dir, problem_id, problem_file)
    if student or kind != "first":
        if row is None:
            raise UserError("this needs a problem: --problem FILE, or --run-dir with --problem-id")
        messages = _messages(environment, kind, row, settings, pass_rate, strategy, feedback, student)
    else:
        if row is not None:
            raise UserError("a first-turn prompt starts from a seed, not a problem: use --seed-file")
        seed = _read_text(seed_file) if seed_file else SAMPLE_SEED
        messages = _teacher(environment, "first", seed_text=seed, feedback=feedback, strategy=strategy)
    if as_json:
        typer.echo(json.dumps(messages, indent=1, ensure_ascii=False))
        return
    for message in messages:
        typer.echo(f"===== {message['role']} =====")
        typer.echo(message["content"].rstrip("\n"))


def _messages(environment, kind, row, settings, pass_rate, strategy, feedback, student) -> list[dict]:
    from synthgen.envs.problem import Problem
    from synthgen.envs.summary import Summary

    problem = Problem.from_fields(row)
    if student:
        if not problem.outputs:
            typer.echo("note: the problem has no gold outputs (it was never run); they show as unknown", err=True)
        return environment.student_messages(problem)
    summary = None
    if pass_rate is not None:
        summary = Summary.made_up(pass_rate, settings.progression)
    elif row.get("pass_rate") is not None:
        summary = Summary.from_row(row, settings.progression)
    if kind == "mutate":
        if summary is None:
            from synthgen.errors import UserError

            raise UserError(
                "a mutate prompt needs the student's pass rate: pass --pass-rate, or a stored problem that has one"
            )
        return _teacher(environment, kind, previous=problem, summary=summary, feedback=feedback, strategy=strategy)
    strategy = strategy or "chain-medium"
    from synthgen.stages.chain import chain_bands

    level = chain_bands().get(CHAIN_TARGETS.get(strategy, ""))
    band = (level.low, level.high) if level else None
    return _teacher(
        environment, kind, previous=problem, summary=summary, feedback=feedback, strategy=strategy, target=band
    )


def _teacher(environment, kind, **kwargs) -> list[dict]:
    from synthgen.errors import UserError

    try:
        return environment.teacher_messages(kind, **kwargs)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def _problem_row(env: str, run_dir, problem_id, problem_file) -> dict | None:
    from synthgen.errors import UserError

    if problem_file is not None and (run_dir is not None or problem_id is not None):
        raise UserError("give either --problem or --run-dir with --problem-id, not both")
    if problem_file is not None:
        from synthgen.envs.verify import load_problem_row

        problem, row = load_problem_row(str(problem_file), env)
        return {**row, **problem.to_fields()}
    if (run_dir is None) != (problem_id is None):
        raise UserError("--run-dir and --problem-id go together")
    if run_dir is None:
        return None
    row = find_stored_problem(Path(run_dir), problem_id)
    if row["env"] != env:
        raise UserError(f"problem {problem_id} belongs to the {row['env']} environment, not to {env}")
    return row


def find_stored_problem(run_dir: Path, problem_id: str) -> dict:
    """The row of `problem_id` in a run's generate, filter, bin or chain folders (valid rows first)."""
    import polars as pl

    from synthgen.errors import UserError
    from synthgen.shards import StageDir

    if not run_dir.is_dir():
        raise UserError(f"run directory not found: {run_dir}")
    stages = [StageDir(run_dir, "generate"), StageDir(run_dir, "filter"), StageDir(run_dir / "chain", "problems")]
    if (run_dir / "bin").is_dir():
        stages += [StageDir(run_dir / "bin", d.name) for d in sorted((run_dir / "bin").iterdir()) if d.is_dir()]
    for stage in stages:
        if not stage.exists():
            continue
        rows = stage.read().filter(pl.col("problem_id") == problem_id)
        if rows.height:
            if "valid" in rows.columns:
                rows = rows.sort("valid", descending=True)
            return rows.row(0, named=True)
    raise UserError(f"no problem {problem_id!r} in {run_dir} (looked in generate, filter, bin and chain)")


def _read_text(path: Path) -> str:
    from synthgen.errors import UserError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        raise UserError(f"{path} is empty")
    return text
