"""Deduction (the paper's Table 1): given `f` and an input i, predict the output.

The teacher writes `f` and one input i; the gold o = f(i) comes from the sandbox. The student
sees the code and i and answers with a Python literal in an ```output block. The literal is
parsed with `values.from_literal` (ast only, never evaluated); one that does not parse is a
format failure. Reward 1 iff it equals o under the sandbox's type-strict comparison (so `1` is
not `1.0` or `True`, and a tuple is not a list). Nothing needs to run for this.
"""

from __future__ import annotations

from synthgen.envs import parsing, reasons
from synthgen.envs.parsing import FormatError, short
from synthgen.envs.problem import Problem, Reward
from synthgen.envs.prompts import display
from synthgen.envs.single_input import SingleInput


class Deduction(SingleInput):
    name = "deduction"

    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """The input of the one pair, never its output (that is what the student must predict)."""
        return [{"input": p["input"], "output": None} for p in pairs[:1]]

    def verify_notes(self, problem: Problem, answer: str) -> list[str]:
        return [f"  gold output: {short(display(problem.outputs[0]), 100)}  (compared type-strictly, nothing run)"]

    def parse_student(self, text: str) -> str:
        from synthgen.sandbox import values

        block = parsing.last_block(text, ("output",))
        if block is None:
            # Tolerated: the value alone in a ```python (or untagged) block.
            block = parsing.last_block(text, ("python", ""), lambda b: _is_literal(b.text))
        if block is None:
            raise FormatError(reasons.FORMAT_ERROR, "no closed ```output block")
        candidates = [block.text.strip()]
        # Tolerate prose or a comment line before the value: the last non-empty line alone.
        lines = [ln.strip() for ln in block.text.split("\n") if ln.strip() and not ln.strip().startswith("#")]
        if lines and lines[-1] != candidates[0]:
            candidates.append(lines[-1])
        for text_ in candidates:
            try:
                values.from_literal(text_)
                return text_
            except ValueError:
                continue
        raise FormatError(reasons.FORMAT_ERROR, f"the output is not a Python literal: {short(block.text, 80)}")

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        from synthgen.sandbox import values

        del pool, sandbox  # a comparison of two encodings; nothing to run
        try:
            encoded = values.from_literal(answer)
        except ValueError as exc:
            return Reward(0.0, "format", f"not a literal: {exc}", answer)
        same = values.equal(encoded, problem.outputs[0])
        return Reward(1.0 if same else 0.0, "ok", "" if same else "differs from the gold output", answer)


def _is_literal(text: str) -> bool:
    from synthgen.sandbox import values

    try:
        values.from_literal(text.strip())
        return True
    except ValueError:
        return False
