"""Data for the interop tests: a run whose bin stage holds real problems of every environment, its
exports, right and wrong answers, and the trainer libraries' own venvs.

    rows = example_rows(pool)                 # seeds/examples/<env>/problem.json, validated, one per env
    run = write_bin_run(tmp / "run", rows)    # RUN/bin/<difficulty>/part-00000.parquet, marked finished
    right, wrong = RIGHT[env], WRONG[env]     # a completion that solves it, one that does not

The example problems are the ones `synthgen verify` is documented on; validating them here runs
them in the sandbox, so their gold outputs come from running the code, as in generation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.problem_rows import problem_row
from tests.helpers.server_matrix import _server_python

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "seeds" / "examples"
ENVS = ("induction", "abduction", "deduction", "fuzzing", "contest")
# Each example's bin in the test run: every bin has problems, and every environment is in some bin.
EXAMPLE_BINS = {"induction": "easy", "abduction": "medium", "deduction": "hard", "fuzzing": "medium", "contest": "easy"}
SETUP_HINT = "`bash .ci/trainers-setup.sh` installs it (a few minutes; $SYNTHGEN_TEST_SERVERS says where)"

RIGHT = {env: (EXAMPLES / env / "answer.txt").read_text(encoding="utf-8") for env in ENVS}
# One wrong answer per environment, each well-formed (so that it is the verdict, not the format, that fails).
WRONG = {
    "induction": "```python\ndef f(words, n):\n    return sorted(words)\n```\n",
    "abduction": "```input\n'a'\n```\n",  # f('a') is 1, not 11
    "deduction": "```output\n[(3, 'b'), (2, 'a')]\n```\n",  # the right pairs in the wrong order
    "fuzzing": "```input\n[1, 2, 3]\n```\n",  # a valid input on which the buggy f is right: the test passes
    "contest": "```python\nprint(0)\nprint(0)\n```\n",
}


def venv_python(name: str) -> Path:
    """The interpreter of a trainer library's venv (.ci/trainers-setup.sh), beside the test servers'."""
    return _server_python(name)


def missing_venv(name: str) -> str | None:
    """Why the `name` venv cannot be used here (the skip reason), or None."""
    python = venv_python(name)
    if not python.exists():
        return f"the {name} venv is not installed ({python} missing): {SETUP_HINT}"
    stamp = python.parent.parent / ".synthgen-stamp"
    if not stamp.is_file():
        return f"the {name} venv at {python.parent.parent} is unfinished (no stamp): {SETUP_HINT}"
    return None


def run_in_venv(name: str, script: Path, *args: str, timeout: float = 900, env: dict | None = None, cwd: Path = ROOT):
    """Run `script` under the `name` venv's Python with this clone on PYTHONPATH, in `cwd`; returns the
    CompletedProcess."""
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "1",
        **(env or {}),
    }
    return subprocess.run(
        [str(venv_python(name)), str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environ,
        cwd=cwd,
    )


def example_rows(pool) -> list[dict]:
    """One validated PROBLEMS row per environment, from seeds/examples, with its test bin as `difficulty`."""
    import asyncio

    from synthgen.envs import get_env
    from synthgen.envs.settings import EnvSettings
    from synthgen.envs.verify import load_problem
    from synthgen.sandbox.settings import SandboxSettings

    async def validate(env_name: str):
        problem, _ = load_problem(str(EXAMPLES / env_name / "problem.json"), None)
        return await get_env(env_name).validate(problem, pool, EnvSettings(), SandboxSettings())

    rows = []
    for i, env_name in enumerate(ENVS):
        problem, verdict = asyncio.run(validate(env_name))
        assert verdict.valid, f"{env_name} example invalid: {verdict}"
        fields = problem.to_fields()
        rows.append(
            problem_row(
                turn_id=f"example/{env_name}/1",
                seed_id=f"example-{env_name}",
                lineage_id=f"example-{env_name}",
                difficulty=EXAMPLE_BINS[env_name],
                pass_rate=0.25 + 0.1 * i,
                **fields,
            )
        )
    return rows


def write_bin_run(run_dir: Path, rows: list[dict]) -> Path:
    """`run_dir/bin/<difficulty>/part-00000.parquet`, a finished bin stage as `synthgen bin` leaves it."""
    import pyarrow as pa

    from synthgen.store import records
    from synthgen.store.files import write_parquet_atomic
    from synthgen.store.layout import StageDir

    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    stage = StageDir(run_dir, "bin")
    with stage.rebuild() as build:
        for difficulty in sorted({r["difficulty"] for r in rows}):
            table = records.table_from_rows([r for r in rows if r["difficulty"] == difficulty], schema)
            write_parquet_atomic(build.group_part_path(difficulty), table, {})
        build.mark_done(stage.whole_shard, {"settings_hash": "interop-test"})
    return run_dir


def export(run_dir: Path, out: Path, fmt: str, *extra: str) -> Path:
    """`synthgen export RUN OUT --format FMT`, through the command line; fails the test with its stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "synthgen", "export", str(run_dir), str(out), "--format", fmt, *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, f"synthgen export --format {fmt} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return out


def verify(problem_json: Path, answer: str, tmp: Path) -> float | None:
    """The reward `synthgen verify` prints for `answer` (through the command line)."""
    answer_file = tmp / f"answer-{abs(hash(answer))}.txt"
    answer_file.write_text(answer, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "synthgen", "verify", str(problem_json), str(answer_file)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("reward: ")][-1]
    value = line.split()[1]
    return None if value == "n/a" else float(value)


def read_json_lines(text: str) -> list[dict]:
    """The JSON lines a venv script printed (one per result), ignoring its libraries' chatter."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{") and line.endswith("}")]


class AnswerResponder:
    """A scripted (not a model) chat server's responder: for a prompt of `answers`, alternately its right
    and its wrong completion (the first request for a prompt gets the right one), else `fallback`."""

    seeded_per_sample = False

    def __init__(self, answers: dict[str, tuple[str, str]], fallback: str = "no idea"):
        import threading

        self.answers = answers  # the user prompt's text -> (right, wrong)
        self.fallback = fallback
        self.requests: dict[str, int] = {}
        self._lock = threading.Lock()

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list:
        from synthgen.demo.scripted.responder import ScriptedReply, last_user_text

        text = last_user_text(messages)
        replies = []
        for _ in range(n):
            with self._lock:
                count = self.requests[text] = self.requests.get(text, 0) + 1
            pair = self.answers.get(text)
            replies.append(ScriptedReply(content=pair[(count - 1) % 2] if pair else self.fallback))
        return replies
