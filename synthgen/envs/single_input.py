"""What abduction and deduction share: the teacher writes `f` and exactly one input.

Both run `f` on that input in the sandbox (twice, two hash seeds) to get the gold output o, and
both need o to be something a student can read and write back: a value whose printed form is a
Python literal that decodes to the same value (huge integers, whose repr the sandbox refuses to
print in decimal, are the practical exception and are rejected as output_too_large).
"""

from __future__ import annotations

from synthgen.envs import parsing, reasons, validation
from synthgen.envs.base import Environment
from synthgen.envs.parsing import short
from synthgen.envs.problem import Problem, Verdict
from synthgen.envs.settings import EnvSettings


class SingleInput(Environment):
    """Teacher side of abduction and deduction; the student side is each subclass's own."""

    def parse_teacher(self, text: str) -> Problem:
        answer = parsing.teacher_answer(text, need_message=False)
        code = parsing.strip_main_guard(answer.code)
        inputs = parsing.teacher_inputs(answer.input_blocks)
        # A message is optional here (the student sees the code); keep it only if it is prose.
        message = "" if parsing.has_code(answer.message or "") else answer.message or ""
        return Problem(env=self.name, code=code, inputs=inputs, message=message)

    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]:
        from synthgen.sandbox import values

        problem = Problem(**{**problem.__dict__, "outputs": [], "visible_count": None})
        bad = validation.check_inputs(problem, 1, 1, what="input")
        bad = bad or validation.static_checks(problem, ("f",))
        if bad:
            return problem, bad
        verdicts, bad = await validation.run_f(problem, pool, sandbox, settings.max_output_chars)
        if bad:
            return problem, bad
        shown = verdicts[0].value or ""
        try:
            readable = values.equal(values.from_literal(shown), verdicts[0].encoded)
        except ValueError:
            readable = False
        if not readable:
            return problem, Verdict(
                False, reasons.OUTPUT_TOO_LARGE, f"the output cannot be written as a Python literal: {short(shown, 80)}"
            )
        problem.outputs = [verdicts[0].encoded]
        return problem, Verdict(True, reasons.OK)
