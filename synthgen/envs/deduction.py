"""Deduction (the paper's Table 1): given `f` and an input i, predict the output.

The teacher writes `f` and one input i; the gold o = f(i) comes from the sandbox. The student
sees the code and i and answers with a Python literal in an ```output block. The literal is
parsed with `values.from_literal` (ast only, never evaluated); one that does not parse is a
format failure. Reward 1 iff it equals o under the sandbox's type-strict comparison (so `1` is
not `1.0` or `True`, and a tuple is not a list). Nothing needs to run for this.
"""

from __future__ import annotations

from synthgen.envs import chance, parsing
from synthgen.envs.base import SingleInput
from synthgen.envs.parsing import short
from synthgen.envs.problem import Problem, Reward
from synthgen.envs.prompts import display


class Deduction(SingleInput):
    name = "deduction"

    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """The input of the one pair, never its output (that is what the student must predict)."""
        return [{"input": p["input"], "output": None} for p in pairs[:1]]

    def verify_notes(self, problem: Problem, answer: str) -> list[str]:
        return [f"  gold output: {short(display(problem.outputs[0]), 100)}  (compared type-strictly, nothing run)"]

    def parse_student(self, text: str) -> str:
        block = parsing.last_block(text, ("output",))
        if block is None:
            # Tolerated: the value alone in a ```python (or untagged) block.
            block = parsing.last_block(text, ("python", ""), lambda b: parsing.is_literal(b.text.strip()))
        if block is None:
            raise parsing.missing("closed ```output block with the value", text)
        return parsing.output_value(block)

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        from synthgen.sandbox import values

        try:
            encoded = values.from_literal(answer)
        except ValueError as exc:
            return Reward(0.0, "format", f"not a literal: {exc}", answer)
        same = values.equal(encoded, problem.outputs[0])
        return Reward(1.0 if same else 0.0, "ok", "" if same else "differs from the gold output", answer)

    # -- chance level (synthgen.envs.chance) -------------------------------------------------
    def chance_probes(self, problem: Problem) -> list:
        """`mode` needs f's outputs on chance.DRAWS inputs drawn like the problem's (values come back)."""
        draws = chance.draw_arguments(problem.inputs[0], chance.DRAWS, chance.rng_for(problem.problem_id, "mode"))
        if not draws:
            return []
        return [chance.Probe("mode", tuple(draws), (None,) * len(draws), ("mode",) * len(draws))]

    async def chance_result(self, problem: Problem, ran: list, pool=None, sandbox=None):
        """Every answer goes through `score` (the student's parser and check; nothing runs):
        `empty:<v>` and `echo` once each, `coin` as both of its answers (p exact), `mode` as the
        most common value f returned on the draws (ties: the first drawn)."""

        async def won(literal: str | None) -> int:
            if literal is None:
                return 0
            reward = await self.score(problem, f"```output\n{literal}\n```", pool, sandbox)
            return int(reward.value == 1.0)

        outcomes = [chance.ChanceOutcome(f"empty:{v}", await won(v), 1) for v in chance.EMPTY_VALUES]
        outcomes.append(chance.ChanceOutcome("coin", await won("True") + await won("False"), 2))
        echoes = [await won(text) for text in chance.argument_texts(problem.inputs[0])]
        if echoes:
            outcomes.append(chance.ChanceOutcome("echo", max(echoes), 1))
        returned = [v.encoded for _, verdicts in ran for v in verdicts if v is not None and str(v.status) == "ok"]
        common = chance.mode([e for e in returned if e is not None])
        if common is not None:
            outcomes.append(chance.ChanceOutcome("mode", await won(chance.literal_of(common)), 1))
        return chance.ChanceResult(outcomes)
