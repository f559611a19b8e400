"""Abduction (the paper's Table 1): given `f` and an output o, find an input that produces o.

The teacher writes `f` and one input i; o = f(i) comes from the sandbox. The student sees the
code and o, and answers with an argument list in an ```input block. Reward 1 iff f(answer)
equals o (type-strict, compared in the host on the sandbox's encodings). Any input that maps to
o counts, not only the teacher's. The answer must be a list of literals: it becomes the text of
a call in the sandbox, so nothing else may be smuggled in.
"""

from __future__ import annotations

from synthgen.envs import parsing, validation
from synthgen.envs.problem import Problem, Reward
from synthgen.envs.single_input import SingleInput


class Abduction(SingleInput):
    name = "abduction"

    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """The output of the one pair, never its input (that is what the student must find)."""
        return [{"input": None, "output": p["output"]} for p in pairs[:1]]

    def parse_student(self, text: str) -> str:
        return parsing.input_answer(text)

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        result = await pool.run(
            validation.job(problem.program(), [f"f({answer})"], sandbox, expected=problem.outputs[:1])
        )
        verdict = result.calls[0]
        passed = str(verdict.status) == "ok" and verdict.match is True
        return validation.answer_reward(result.calls, answer, passed, validation.first_problem(result.calls))
