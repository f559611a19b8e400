"""Abduction (the paper's Table 1): given `f` and an output o, find an input that produces o.

The teacher writes `f` and one input i; o = f(i) comes from the sandbox. The student sees the
code and o, and answers with an argument list in an ```input block. Reward 1 iff f(answer)
equals o (type-strict, compared in the host on the sandbox's encodings). Any input that maps to
o counts, not only the teacher's. The answer must be a list of literals: it becomes the text of
a call in the sandbox, so nothing else may be smuggled in.
"""

from __future__ import annotations

from synthgen.envs import chance, parsing, validation
from synthgen.envs.base import SingleInput
from synthgen.envs.mutation import TRIVIAL_INPUTS
from synthgen.envs.problem import Problem, Reward


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
        return self.judge(problem, answer, result.calls)

    def judge(self, problem: Problem, answer: str, verdicts: list) -> Reward:
        """f(answer) returned, and the value equals o (compared in the host on encodings)."""
        verdict = verdicts[0]
        passed = str(verdict.status) == "ok" and verdict.match is True
        return validation.answer_reward(verdicts, answer, passed, validation.first_problem(verdicts))

    # -- chance level (synthgen.envs.chance) -------------------------------------------------
    def chance_probes(self, problem: Problem) -> list:
        """`trivial:<x>` and `output` (each x, or o itself, as every argument), then `random`:
        chance.DRAWS inputs drawn like the teacher's, each an answer as a student would give it."""
        gold = problem.outputs[0]
        n = chance.arity(problem.code)
        fixed = {f"trivial:{x}": ", ".join([x] * n) for x in TRIVIAL_INPUTS}
        shown = chance.literal_of(gold)
        if shown is not None:
            fixed["output"] = ", ".join([shown] * n)
        draws = chance.draw_arguments(problem.inputs[0], chance.DRAWS, chance.rng_for(problem.problem_id, "random"))
        probes = []
        for name, answers in (("fixed", list(fixed.items())), ("random", [("random", a) for a in draws])):
            read = [(label, self._as_answer(text)) for label, text in answers]
            read = [(label, text) for label, text in read if text is not None]
            if read:
                labels, calls = zip(*read)
                probes.append(chance.Probe(name, tuple(calls), (gold,) * len(calls), tuple(labels)))
        return probes

    async def chance_result(self, problem: Problem, ran: list, pool=None, sandbox=None):
        def won(answer, verdict) -> bool:
            return self.judge(problem, answer, [verdict]).value == 1.0

        return chance.ChanceResult(chance.per_call(ran, won))

    def _as_answer(self, args: str) -> str | None:
        """An argument list as the student's answer parser reads it (None if it would not parse)."""
        try:
            return self.parse_student(f"```input\n{args}\n```")
        except parsing.FormatError:
            return None
