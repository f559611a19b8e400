"""Contest: a problem statement and tests, answered by a whole program (the real code-contest shape).

The headline runs of Sancaktar et al. (arXiv:2603.24202) mix real contest problems (stdin/stdout
with hidden tests) into training, and LiveCodeBench scores the same shape. A contest problem is
a PROBLEMS row (what `synthgen import` writes, what `train` and `eval` read):

  message        the statement the student reads (task, input and output format, constraints)
  inputs         one per test, as an argument list: a stdin/stdout test is ONE string literal that
                 holds the whole standard input ("'3\\n1 2 3\\n'"); a call-based test holds the
                 arguments of the call ("[1, 2, 3], 4")
  outputs        one per test, in the sandbox's canonical encoding: the expected standard output
                 (a string), or the expected return value of the call
  visible_count  how many leading tests are public (the statement's examples); the rest are hidden
  test_code      call-based problems only: the function the solution defines, called as
                 `Solution().<name>(...)` when the starter code has a `Solution` class; empty for
                 stdin/stdout problems
  pre_test_code  call-based problems only: the starter code the student completes
  code           a reference solution: for imported problems the program that `synthgen import`
                 checked against the tests (may be empty); for the teacher's own problems `f`

The reward is 1 only if the answer passes every test, public and hidden, in the sandbox (per-test
wall clock `sandbox.timeout_s`; output judged as LiveCodeBench does, see contest_tests).

The teacher side (`generate --envs contest`, not a default environment) keeps the shared teacher
prompt: the teacher writes `f(text) -> str`, which maps a whole standard input to the whole
expected output, a statement as its message, and stdin texts as inputs; gold outputs come from
running `f` (twice, two hash seeds). The student never sees `f` and answers with a program.
"""

from __future__ import annotations

from synthgen.envs import chance, contest_tests, parsing, reasons, validation
from synthgen.envs.base import ManyInputs, split_holdout
from synthgen.envs.parsing import FormatError, short
from synthgen.envs.problem import Problem, Reward, Verdict
from synthgen.envs.settings import EnvSettings

EXAMPLE_LIMIT = 2000  # characters of one example input or output shown in a prompt


def is_call_based(problem: Problem) -> bool:
    return bool(problem.test_code.strip())


def entry_call(problem: Problem) -> str | None:
    """How a call-based test calls the solution (`Solution().name` or `name`); None for stdin/stdout."""
    if not is_call_based(problem):
        return None
    name = problem.test_code.strip()
    return f"Solution().{name}" if "class Solution" in problem.pre_test_code else name


def teacher_made(problem: Problem) -> bool:
    """A problem whose gold outputs come from the teacher's `f` (not from an imported data set)."""
    return not is_call_based(problem) and parsing.defines(problem.code, "f")


class Contest(ManyInputs):
    name = "contest"
    needs_code = False  # an imported problem is its statement and tests; a reference solution is optional
    requested_inputs = 5

    # -- teacher ---------------------------------------------------------------------------
    def teacher_message(self, message: str, code: str) -> str:
        if parsing.has_code(message):
            raise FormatError(reasons.FORMAT_ERROR, "the statement contains code")
        return message

    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]:
        if not teacher_made(problem):
            return problem, _check_imported(problem)
        problem = Problem(**{**problem.__dict__, "outputs": []})
        bad = self.input_count_problem(problem, settings)
        bad = bad or validation.static_checks(problem, ("f",))
        if bad:
            return problem, bad
        for i, text in enumerate(problem.inputs):
            try:
                contest_tests.stdin_of(text)
            except ValueError:
                return problem, Verdict(False, reasons.BAD_INPUTS, f"input {i + 1} is not one string (a whole stdin)")
        verdicts, bad = await validation.run_f(problem, pool, sandbox, settings.max_output_chars)
        if bad:
            return problem, bad
        if any(not (v.encoded or "").startswith('"') for v in verdicts):
            return problem, Verdict(False, reasons.EXECUTION_ERROR, "f must return the output text (a str)")
        problem.outputs = [v.encoded for v in verdicts]
        if len(set(problem.outputs)) < max(2, settings.min_distinct_outputs):
            return problem, Verdict(False, reasons.TRIVIAL, "too few distinct outputs over the inputs")
        problem.visible_count = split_holdout(len(problem.inputs), settings.holdout_fraction)
        return problem, Verdict(True, reasons.OK)

    # -- student ---------------------------------------------------------------------------
    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """The public examples of the teacher's own problems (an imported statement has its own)."""
        if not teacher_made(problem):
            return []
        shown = problem.visible_count if problem.visible_count is not None else 1
        return [
            {"input": _cut(contest_tests.stdin_of(problem.inputs[i])), "output": _shown(out)}
            for i, out in enumerate(problem.outputs[:shown])
        ]

    def student_messages(self, problem: Problem) -> list[dict]:
        from synthgen.envs import prompts

        view = {
            "message": problem.message,
            "starter_code": problem.pre_test_code.strip("\n") if is_call_based(problem) else "",
            "call_based": is_call_based(problem),
            "pairs": self.student_pairs(problem, []),
        }
        return prompts.student_messages(self, view)

    def parse_student(self, text: str) -> str:
        block = parsing.last_block(text, ("python", ""), lambda b: b.text.strip() != "")
        if block is None:
            raise FormatError(
                reasons.FORMAT_ERROR,
                f"no closed ```python block with the program; the answer has {parsing.describe_blocks(text)}",
            )
        return block.text.strip("\n") + "\n"

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        if not problem.inputs or len(problem.outputs) != len(problem.inputs):
            return Reward(None, "infra", "the problem has no usable tests", answer)
        outcome = await contest_tests.run_tests(
            answer, problem.inputs, problem.outputs, entry_call(problem), pool, sandbox
        )
        if outcome.infra:
            return Reward(None, "infra", short(outcome.infra, 200), answer, outcome.verdicts)
        return Reward(1.0 if outcome.passed else 0.0, "ok", outcome.detail, answer, outcome.verdicts)

    # -- chance level (synthgen.envs.chance) -------------------------------------------------
    async def chance_result(self, problem: Problem, ran: list, pool=None, sandbox=None):
        """`public-outputs`: a program that prints the public test's expected output when its input
        is a public test's, else the first public test's output; `empty-program` (stdin/stdout only):
        one that prints nothing. Both print stored text, so what they print on each test is known
        without running them: it goes to contest_tests.judge, the judge of every contest answer,
        as the verdicts a run would give. Nothing runs in the sandbox."""
        from synthgen.sandbox.verdicts import CallVerdict, Status

        if not problem.inputs or len(problem.outputs) != len(problem.inputs):
            return chance.ChanceResult()
        call = entry_call(problem)
        mode = "stdin" if call is None else "call"
        try:
            keys = [contest_tests.stdin_of(x) if call is None else x for x in problem.inputs]
        except ValueError:
            return chance.ChanceResult()
        public = max(1, min(problem.visible_count or 1, len(keys)))
        table: dict[str, str] = {}
        for key, out in zip(keys[:public], problem.outputs[:public]):
            table.setdefault(key, out)
        printed = [table.get(key, problem.outputs[0]) for key in keys]

        def verdict(encoded: str) -> CallVerdict:
            if call is None:
                return CallVerdict(Status.OK, value=contest_tests.text_of(encoded) + "\n")
            return CallVerdict(Status.OK, encoded=encoded)

        memorised = contest_tests.judge([verdict(e) for e in printed], problem.outputs, mode).passed
        outcomes = [chance.ChanceOutcome("public-outputs", int(memorised), 1)]
        if call is None:
            silent = contest_tests.judge([CallVerdict(Status.OK, value="")] * len(keys), problem.outputs, mode)
            outcomes.append(chance.ChanceOutcome("empty-program", int(silent.passed), 1))
        return chance.ChanceResult(outcomes)

    # -- `synthgen verify` -----------------------------------------------------------------
    def call_labels(self, problem: Problem, answer: str) -> list[str]:
        public = problem.visible_count or 0
        return [f"test {i + 1} ({'public' if i < public else 'hidden'})" for i in range(len(problem.inputs))]


def _check_imported(problem: Problem) -> Verdict:
    """An imported problem's gold outputs come from its data set (checked by `synthgen import`)."""
    if not problem.inputs:
        return Verdict(False, reasons.BAD_INPUTS, "no tests")
    if len(problem.outputs) != len(problem.inputs):
        return Verdict(
            False, reasons.BAD_INPUTS, f"{len(problem.inputs)} test inputs but {len(problem.outputs)} outputs"
        )
    if not problem.message.strip():
        return Verdict(False, reasons.FORMAT_ERROR, "no statement")
    return Verdict(True, reasons.OK)


def _shown(encoded: str) -> str:
    from synthgen.sandbox import values

    value = values.decode(encoded)
    return _cut(value if isinstance(value, str) else values.display(value))


def _cut(text: str) -> str:
    """An example as it is shown (line breaks kept), cut at EXAMPLE_LIMIT characters."""
    text = text.rstrip("\n")
    return text if len(text) <= EXAMPLE_LIMIT else text[:EXAMPLE_LIMIT] + "\n..."
