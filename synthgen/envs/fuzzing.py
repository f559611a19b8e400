"""Fuzzing (the paper's Table 1): find an input that a checker accepts and on which a buggy function fails its test.

The teacher writes `f` with a subtle bug, `pre_test_f(...)` (True for a valid input) and
`test_f(...)` (checks f's result), and usually example inputs: all valid, at least one that passes
the test and one that exposes the bug (proof that it is reachable). They are optional, as in the
paper's own format: without them validation only checks that the three functions load. The
student sees the three functions and answers with an argument list.

Reward 1 iff `pre_test_f(answer)` returns exactly True and `test_f(answer)` *fails*: it raises (an
assert, or f crashing inside it) or returns exactly False. True, None (asserts only) or anything
else is a pass; a timeout, memory exhaustion or a kill is NOT a failure (reward 0): limits are
noisy and say nothing reliable about f. Stored `outputs[i]` is the encoded bool "test_f passed on
input i": f's own value is not gold here, and on a bug input f may legitimately raise.
"""

from __future__ import annotations

from synthgen.envs import mutation, parsing, reasons, validation
from synthgen.envs.base import Environment
from synthgen.envs.parsing import short
from synthgen.envs.problem import Problem, Reward, Verdict
from synthgen.envs.settings import EnvSettings

HELPERS = ("pre_test_f", "test_f")


class Fuzzing(Environment):
    name = "fuzzing"
    helpers = HELPERS
    requested_inputs = 4

    def prompt_inputs(self) -> int:
        return max(2, min(self.requested_inputs, self.settings.max_inputs))

    # -- teacher ---------------------------------------------------------------------------
    def parse_teacher(self, text: str) -> Problem:
        answer = parsing.teacher_answer(text, helper_names=HELPERS, need_message=False, need_inputs=False)
        parts = [answer.code] + [b for b in dict.fromkeys(answer.helpers.values()) if b != answer.code]
        joined = parsing.strip_main_guard("\n\n\n".join(p.strip("\n") for p in parts))
        rest, pre = parsing.split_functions(joined, ("pre_test_f",))
        rest, test = parsing.split_functions(rest, ("test_f",))
        inputs = parsing.teacher_inputs(answer.input_blocks)
        return Problem(
            env=self.name,
            code=rest,
            inputs=inputs,
            message=self.teacher_message(answer.message or "", rest),
            pre_test_code=pre.get("pre_test_f", ""),
            test_code=test.get("test_f", ""),
        )

    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]:
        from synthgen.sandbox import values

        problem = Problem(**{**problem.__dict__, "outputs": [], "visible_count": None})
        bad = validation.check_inputs(problem, 2, max(2, settings.max_inputs)) if problem.inputs else None
        bad = bad or validation.static_checks(problem, ("f",) + HELPERS)
        if bad:
            return problem, bad
        if not problem.inputs:
            # No examples: all that can be checked is that the module loads and defines the three
            # functions, the same under two hash seeds.
            call = "callable(f) and callable(pre_test_f) and callable(test_f)"
            _, bad = await validation.run_deterministic(
                problem, [call], ["loading f, pre_test_f and test_f"], pool, sandbox, settings.max_output_chars
            )
            return problem, bad or Verdict(True, reasons.OK)
        xs = problem.inputs
        k = len(xs)
        # pre_test_f must simply work; test_f may raise, since that is how a bug can show (f itself
        # is only ever called through test_f: crashing on the bug input is a legal bug).
        calls = [f"pre_test_f({x})" for x in xs] + [f"test_f({x})" for x in xs]
        labels = [f"pre_test_f({short(x, 60)})" for x in xs] + [f"test_f({short(x, 60)})" for x in xs]
        first, second = await pool.run_twice_for_determinism(validation.job(problem.program(), calls, sandbox))
        bad = validation.infra_failure((first, second), labels)
        if bad:
            return problem, bad
        for i, (verdict, label) in enumerate(zip(first.calls, labels)):
            if i >= k and str(verdict.status) == "exception" and test_fails(verdict):
                continue  # the test failed: a legal outcome
            bad = validation.call_failure(verdict, label)
            if bad:
                return problem, bad
        if not first.same_outcome(second):
            why = "pre_test_f or test_f behaved differently under another hash seed"
            return problem, Verdict(False, reasons.NONDETERMINISTIC, why)
        for x, verdict in zip(xs, first.calls[:k]):
            if verdict.encoded != values.encode(True):
                why = f"pre_test_f rejects the example input {short(x, 60)} (returned {short(verdict.value or '', 40)})"
                return problem, Verdict(False, reasons.BAD_INPUTS, why)
        fails = [test_fails(v) for v in first.calls[k:]]
        # The stored "gold" (see the module docstring): whether test_f passed on each input.
        problem.outputs = [values.encode(not failed) for failed in fails]
        if not any(fails):
            why = "no example input makes test_f fail: the bug is not shown to be reachable"
            return problem, Verdict(False, reasons.BAD_INPUTS, why)
        if all(fails):
            why = "test_f fails on every example input: any valid input finds the bug"
            return problem, Verdict(False, reasons.TRIVIAL, why)
        return problem, Verdict(True, reasons.OK)

    # -- student ---------------------------------------------------------------------------
    def parse_student(self, text: str) -> str:
        return parsing.input_answer(text)

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        from synthgen.sandbox import values

        calls = [f"pre_test_f({answer})", f"test_f({answer})"]
        job = validation.job(problem.program(), calls, sandbox, expected=[values.encode(True), values.encode(False)])
        result = await pool.run(job)
        pre, test = result.calls
        if str(pre.status) != "ok" or pre.match is not True:
            why = pre.error if str(pre.status) != "ok" else f"pre_test_f returned {short(pre.value or '', 40)}"
            return validation.answer_reward(result.calls, answer, False, f"input rejected: {short(why or '', 160)}")
        failed = test_fails(test)
        detail = "test_f failed" if failed else f"test_f passed ({test.status})"
        return validation.answer_reward(result.calls, answer, failed, detail)

    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """None: the example inputs include the teacher's bug-triggering one."""
        return []

    def call_labels(self, problem: Problem, answer: str) -> list[str]:
        return [f"pre_test_f({answer})", f"test_f({answer})"]

    async def mutation_score(self, problem: Problem, pool, sandbox, limit: int = 32, mutate: bool = True, probes=True):
        """Here: does the checker keep trivial inputs from earning the reward? (no gold f to mutate).

        The one job is both the mutation score and the chance probes (an input that earns the
        reward is a strategy that always wins); it runs when either is asked for."""
        if not (mutate or probes):
            return mutation.MutationResult(None, measured=False)
        result = await mutation.score_checker(problem, pool, sandbox)
        result.measured = mutate
        if not probes:
            result.chance = None
        return result


def test_fails(verdict) -> bool:
    """The documented rule: an exception or exactly False is a failure; limits are not."""
    status = str(verdict.status)
    if status == "exception":
        return not (verdict.error or "").startswith("while running the module")
    return status == "ok" and verdict.encoded == "false"
