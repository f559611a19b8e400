"""Math500 and AIME2024 (out of domain): a final answer in \\boxed{}, checked with Math-Verify.

Rows: Math500 (`HuggingFaceH4/MATH-500`: problem, solution, answer, subject, level, unique_id);
AIME2024 (`HuggingFaceH4/aime_2024`: id, problem, solution, answer; other mirrors spell them
Problem / Answer / ID). Splits: Math500 `all` and `level-1`..`level-5`; AIME2024 `all`.

Math-Verify (`math-verify`, the `eval` extra) parses LaTeX and plain expressions into SymPy and
compares them mathematically (`\\frac{1}{2}` equals `0.5`). Its SIGALRM timeouts work only on a
process's main thread, so checks run in a few worker processes (`MathVerifier`); one that errors
or times out is a wrong answer, as in Math-Verify. No model-written code runs here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing

from synthgen.envs.problem import Reward
from synthgen.errors import UserError
from synthgen.evals.data import Column, EvalItem, column

COLUMNS = (
    Column(("problem", "Problem", "question"), (str,)),
    Column(("answer", "Answer"), (str, int, float)),
    Column(("unique_id", "id", "ID"), (str, int), required=False),
    Column(("level",), (int, str), required=False),
)
INSTRUCTION = "{problem}\n\nReason step by step, and put your final answer within \\boxed{{}}."


def answers_match(gold: str, completion: str) -> bool:
    """Math-Verify's verdict on a completion against the gold answer (runs in a worker's main thread)."""
    from math_verify import parse, verify

    text = str(gold).strip()
    gold_parsed = parse(text if "$" in text or "\\boxed" in text else f"${text}$")
    answer = parse(completion)
    return bool(gold_parsed) and bool(answer) and bool(verify(gold_parsed, answer))


class MathVerifier(concurrent.futures.ProcessPoolExecutor):
    """A few spawned worker processes that run `answers_match` (see the module docstring)."""

    def __init__(self, workers: int = 2):
        try:
            import math_verify  # noqa: F401 (checked here so a missing extra is one line, before any sampling)
        except ImportError:
            raise UserError(
                "math500/aime2024: needs the `math-verify` package (pip install 'synthgen[eval]')"
            ) from None
        super().__init__(workers, mp_context=multiprocessing.get_context("spawn"))

    def close(self) -> None:
        self.shutdown(wait=True, cancel_futures=True)


def scorer(gold: str, verifier: MathVerifier):
    async def score(text: str, truncated: bool) -> Reward:
        if truncated:
            return Reward(0.0, "format", "the answer was cut off (max tokens)")
        try:
            right = await asyncio.wrap_future(verifier.submit(answers_match, gold, text))
        except concurrent.futures.process.BrokenProcessPool as exc:
            return Reward(None, "infra", f"math verifier worker died: {exc}")
        return Reward(1.0 if right else 0.0, "ok", "" if right else "answer differs")

    return score


def items(name: str, rows: list[dict], verifier: MathVerifier) -> list[EvalItem]:
    """The rows as eval items; `benchmark_rows` has checked their COLUMNS."""
    out = []
    for i, row in enumerate(rows):
        problem, gold = column(row, "problem", "Problem", "question"), column(row, "answer", "Answer")
        ident = str(column(row, "unique_id", "id", "ID", default=i))
        level = column(row, "level")
        splits = ("all", f"level-{level}") if name == "math500" and level is not None else ("all",)
        messages = [{"role": "user", "content": INSTRUCTION.format(problem=str(problem).strip())}]
        out.append(EvalItem(name, ident, splits, messages, scorer(str(gold), verifier)))
    return out
