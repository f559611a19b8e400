"""`synthgen verify` and `synthgen prompts show`: one problem by hand, every step shown.

`verify` checks one student answer against one problem:

    synthgen verify --env deduction seeds/examples/deduction/problem.json seeds/examples/deduction/answer.txt
    synthgen verify data/runs/x/generate/part-00000.parquet:3 answer.txt      # row 3 (or a turn_id / problem_id)

The problem is validated first (the gold outputs always come from running it), then the answer
is parsed and scored exactly as in generation and training. Bad paths or malformed files are
UserErrors (exit 2); an invalid problem or a wrong answer is a normal result (exit 0).

`prompts show` previews the exact messages a turn sends, with no server:

    messages = preview(environment, "chain", settings, row=row, band=(0.41, 0.59))  # the chain target

The CLI (synthgen.cli.prompts_show) reads the run's settings and chain's bands, which live in the
stages above this package, and passes them in. A first-turn prompt starts from a seed (a built-in
sample unless one is given); mutate and chain prompts from a problem, whose summary is rebuilt
from its row unless a pass rate makes one up.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from synthgen.envs import get_env
from synthgen.envs.parsing import ArgsError, FormatError, canonical_args, short
from synthgen.envs.problem import Problem
from synthgen.envs.summary import Summary
from synthgen.errors import UserError


def load_problem(spec: str, env_name: str | None) -> tuple[Problem, dict]:
    """A Problem from `FILE.json` or `FILE.parquet:ROW` (a row number, turn_id or problem_id), and the
    whole row it came from (counts, summary examples, ...)."""
    path_text, key = spec.rsplit(":", 1) if ".parquet:" in spec else (spec, None)
    path = Path(path_text)
    if not path.is_file():
        raise UserError(f"problem file not found: {path}")
    row = _parquet_row(path, key) if path.suffix == ".parquet" else _json_row(path)
    if env_name and row.get("env") and row["env"] != env_name:
        raise UserError(f"--env {env_name} does not match the problem's env {row['env']!r}")
    env = env_name or row.get("env")
    if not env:
        raise UserError("the problem has no 'env' field; pass --env")
    row = {**row, "env": env}
    try:
        needs_code = get_env(env).needs_code
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if needs_code and not row.get("code"):
        raise UserError("the problem has no code")
    try:
        problem = Problem.from_fields(row)
        problem.inputs = [canonical_args(x) for x in problem.inputs]
    except ArgsError as exc:
        raise UserError(f"the problem has a malformed input: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"the problem is malformed: {exc}") from None
    return problem, row


def _json_row(path: Path) -> dict:
    try:
        data = json.loads(read_text(path, may_be_empty=True))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} must hold one JSON object with the problem's fields")
    if not isinstance(data.get("inputs", []), list):
        raise UserError(f"{path}: 'inputs' must be a list of argument-list strings")
    return data


def _parquet_row(path: Path, key: str | None) -> dict:
    import pyarrow.parquet as pq

    if key is None or key == "":
        raise UserError("name a row: FILE.parquet:ROW (a row number, turn_id or problem_id)")
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise UserError(f"cannot read {path} as Parquet: {short(str(exc), 120)}") from None
    if key.isdigit():
        index = int(key)
        if index >= len(rows):
            raise UserError(f"{path} has {len(rows)} rows; row {index} does not exist")
        return rows[index]
    for row in rows:
        if key in (row.get("turn_id"), row.get("problem_id")):
            return row
    raise UserError(f"no row with turn_id or problem_id {key!r} in {path}")


def read_answer(spec: str) -> str:
    if spec == "-":
        return sys.stdin.read()
    path = Path(spec)
    if not path.is_file():
        raise UserError(f"answer file not found: {path}")
    return read_text(path, may_be_empty=True)


async def verify(problem: Problem, answer_text: str, env_settings, sandbox, truncated: bool = False, out=print) -> dict:
    """Validate, parse, score; print each step through `out` and return what was found."""
    from synthgen.sandbox import SandboxPool, SandboxUnavailable

    env = get_env(problem.env, env_settings)
    try:
        pool = SandboxPool.from_settings(sandbox, min(2, sandbox.workers or 2))
    except SandboxUnavailable as exc:
        raise UserError(f"no sandbox available: {exc}") from None
    try:
        out(f"problem: {problem.problem_id}  env: {problem.env}  inputs: {len(problem.inputs)}")
        problem, verdict = await env.validate(problem, pool, env_settings, sandbox)
        out(f"validation: {verdict.reason}" + (f" ({verdict.detail})" if verdict.detail else ""))
        if problem.visible_count is not None:
            out(f"visible pairs: {problem.visible_count} of {len(problem.inputs)}")
        if not verdict.valid:
            out("reward: n/a (the problem is invalid, so no answer can be scored)")
            return {"verdict": verdict, "reward": None}
        try:
            parsed = env.parse_student(answer_text)
            out("parsed answer:\n  " + parsed.strip().replace("\n", "\n  "))
        except FormatError as exc:  # shown, then scored as a format failure below
            out(f"parsed answer: none ({exc.detail})")
            parsed = None
        reward = await env.score(problem, answer_text, pool, sandbox, truncated=truncated)
        labels = env.call_labels(problem, parsed or "")
        for i, call in enumerate(reward.calls):
            label = labels[i] if i < len(labels) else f"call {i + 1}"
            value = f" -> {short(call.value, 100)}" if call.value is not None else ""
            match = "" if call.match is None else f"  match={call.match}"
            error = f"  error: {short(call.error, 160)}" if call.error else ""
            out(f"  {short(label, 80)}: {call.status}{value}{match}{error}")
        if parsed is not None:
            for line in env.verify_notes(problem, parsed):
                out(line)
        value = "n/a" if reward.value is None else f"{reward.value:g}"
        out(f"reward: {value} ({reward.status})" + (f" {reward.detail}" if reward.detail else ""))
        return {"verdict": verdict, "reward": reward}
    finally:
        pool.close()


def run(settings) -> int:
    """`synthgen verify` with its settings (synthgen.envs.tool_settings.VerifySettings)."""
    from synthgen.settings.base import ENV_NAMES

    if settings.env_name is not None and settings.env_name not in ENV_NAMES:
        raise UserError(f"unknown environment {settings.env_name!r}; choose from {', '.join(ENV_NAMES)}")
    problem, _ = load_problem(settings.problem, settings.env_name)
    answer = read_answer(settings.answer)
    asyncio.run(verify(problem, answer, settings.env, settings.sandbox, truncated=settings.truncated))
    return 0


# -- `synthgen prompts show` ------------------------------------------------------------
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
        context: dict = {"seed_text": seed_text or SAMPLE_SEED}
    else:
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
            why = "a mutate prompt needs the student's pass rate: pass --pass-rate, or a stored problem that has one"
            raise UserError(why)
        context = {"previous": problem, "summary": summary, "target": band}
    try:
        return environment.teacher_messages(kind, feedback=feedback, strategy=strategy, **context)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def problem_row(env: str, run_dir, problem_id, problem_file) -> dict | None:
    """The stored problem a prompt starts from (--problem FILE, or --run-dir with --problem-id), or None."""
    if problem_file is not None and (run_dir is not None or problem_id is not None):
        raise UserError("give either --problem or --run-dir with --problem-id, not both")
    if problem_file is not None:
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


def read_text(path: Path, may_be_empty: bool = False) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    if not text.strip() and not may_be_empty:
        raise UserError(f"{path} is empty")
    return text
