"""`synthgen verify`: check one student answer against one problem by hand, and show every step.

    synthgen verify --env deduction seeds/examples/deduction/problem.json seeds/examples/deduction/answer.txt
    synthgen verify data/runs/x/generate/part-00000.parquet:3 answer.txt      # row 3 (or a turn_id / problem_id)

The problem is validated first (the gold outputs always come from running it), then the answer
is parsed and scored exactly as in generation and training. Bad paths or malformed files are
UserErrors (exit 2); an invalid problem or a wrong answer is a normal result (exit 0).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from synthgen.envs import get_env
from synthgen.envs.parsing import ArgsError, FormatError, canonical_args, short
from synthgen.envs.problem import Problem
from synthgen.errors import UserError


def load_problem(spec: str, env_name: str | None) -> tuple[Problem, dict]:
    """A Problem from `FILE.json` or `FILE.parquet:ROW` (a row number, turn_id or problem_id), and the
    whole row it came from (counts, summary examples, ...)."""
    path_text, key = spec, None
    if ".parquet:" in spec:
        path_text, key = spec.rsplit(":", 1)
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
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
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
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None


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
