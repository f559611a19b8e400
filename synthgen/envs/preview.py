"""Preview of the exact messages a turn sends (`synthgen prompts show`), with no server.

    messages = preview(environment, "chain", settings, row=row, band=(0.41, 0.59))  # the chain target

The CLI (synthgen.cli.prompts_show) reads the run's settings and chain's bands, which live in the
stages above this package, and passes them in.
A first-turn prompt starts from a seed (a built-in sample unless one is given); mutate and chain
prompts from a problem, whose summary is rebuilt from its row unless a pass rate makes one up.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.envs.problem import Problem
from synthgen.envs.summary import Summary
from synthgen.errors import UserError

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


def preview(
    environment,
    kind: str,
    settings,
    *,
    seed_text: str | None = None,
    row: dict | None = None,
    pass_rate: float | None = None,
    strategy: str | None = None,
    feedback: str | None = None,
    student: bool = False,
    band: tuple[float, float] | None = None,
) -> list[dict]:
    """The messages one turn of `kind` sends (or the student's, with `student`); `band` is a chain
    turn's target pass-rate band."""
    if not student and kind == "first":
        if row is not None:
            raise UserError("a first-turn prompt starts from a seed, not a problem: use --seed-file")
        return _teacher(environment, kind, seed_text=seed_text or SAMPLE_SEED, feedback=feedback, strategy=strategy)
    if row is None:
        raise UserError("this needs a problem: --problem FILE, or --run-dir with --problem-id")
    problem = Problem.from_fields(row)
    if student:  # a problem never run has no gold outputs: the prompt shows them as unknown
        return environment.student_messages(problem)
    summary = None
    if pass_rate is not None:
        summary = Summary.made_up(pass_rate, settings.progression)
    elif row.get("pass_rate") is not None:
        summary = Summary.from_row(row, settings.progression)
    if kind == "mutate" and summary is None:
        raise UserError(
            "a mutate prompt needs the student's pass rate: pass --pass-rate, or a stored problem that has one"
        )
    return _teacher(
        environment, kind, previous=problem, summary=summary, feedback=feedback, strategy=strategy, target=band
    )


def _teacher(environment, kind, **kwargs) -> list[dict]:
    try:
        return environment.teacher_messages(kind, **kwargs)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def problem_row(env: str, run_dir, problem_id, problem_file) -> dict | None:
    """The stored problem a prompt starts from (--problem FILE, or --run-dir with --problem-id), or None."""
    if problem_file is not None and (run_dir is not None or problem_id is not None):
        raise UserError("give either --problem or --run-dir with --problem-id, not both")
    if problem_file is not None:
        from synthgen.envs.verify import load_problem

        problem, row = load_problem(str(problem_file), env)
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
    """The row of `problem_id` (or of a turn id: a turn whose answer did not parse has no problem id)
    in a run's generate, filter, bin or chain folders (valid rows first)."""
    import polars as pl

    from synthgen.store.layout import StageDir

    if not run_dir.is_dir():
        raise UserError(f"run directory not found: {run_dir}")
    stages = [StageDir(run_dir, "generate"), StageDir(run_dir, "filter"), StageDir(run_dir / "chain", "problems")]
    if (run_dir / "bin").is_dir():
        stages += [StageDir(run_dir / "bin", d.name) for d in sorted((run_dir / "bin").iterdir()) if d.is_dir()]
    for stage in stages:
        if not stage.exists():
            continue
        rows = stage.read().filter((pl.col("problem_id") == problem_id) | (pl.col("turn_id") == problem_id))
        if rows.height:
            if "valid" in rows.columns:
                rows = rows.sort("valid", descending=True)
            return rows.row(0, named=True)
    raise UserError(f"no problem {problem_id!r} in {run_dir} (looked in generate, filter, bin and chain)")


def read_text(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        raise UserError(f"{path} is empty")
    return text
