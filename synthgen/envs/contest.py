"""Contest: a problem statement and tests, answered by a whole program (the real code-contest shape).

Real contest problems (stdin/stdout with hidden tests) join training as in Sancaktar et al.
(arXiv:2603.24202), and LiveCodeBench scores the same shape. A contest problem is a PROBLEMS row
(what `synthgen import` writes, what `train` and `eval` read):

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

The reward is 1 only if the answer passes every test, public and hidden. All of a sample's tests
are one contest-tests job (synthgen.sandbox.contest_job says how they run), judged in the host
by LiveCodeBench's rules: stdout lines are stripped and must match in count, each equal or the
same whitespace-separated decimals (`0.50` matches `0.5`, but no `1e-9` tolerance); a returned
tuple counts as the list of its items, then Python's `==` decides (so 2 and 2.0 match).

The teacher side (`generate --envs contest`, not a default environment) keeps the shared teacher
prompt: the teacher writes `f(text) -> str`, which maps a whole standard input to the whole
expected output, a statement as its message, and stdin texts as inputs; gold outputs come from
running `f` (twice, two hash seeds). The student never sees `f` and answers with a program.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from synthgen.envs import chance, parsing, reasons, validation
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
        bad = validation.check_inputs(problem, max(2, settings.min_inputs), settings.max_inputs)
        bad = bad or validation.static_checks(problem, ("f",))
        if bad:
            return problem, bad
        for i, text in enumerate(problem.inputs):
            try:
                stdin_of(text)
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
            {"input": _cut(stdin_of(problem.inputs[i])), "output": _shown(out)}
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
            raise parsing.missing("closed ```python block with the program", text)
        return block.text.strip("\n") + "\n"

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        if not problem.inputs or len(problem.outputs) != len(problem.inputs):
            return Reward(None, "infra", "the problem has no usable tests", answer)
        outcome = await run_tests(answer, problem.inputs, problem.outputs, entry_call(problem), pool, sandbox)
        if outcome.infra:
            return Reward(None, "infra", short(outcome.infra, 200), answer, outcome.verdicts)
        return Reward(1.0 if outcome.passed else 0.0, "ok", outcome.detail, answer, outcome.verdicts)

    # -- chance level (synthgen.envs.chance) -------------------------------------------------
    async def chance_result(self, problem: Problem, ran: list, pool=None, sandbox=None):
        """`public-outputs`: a program that prints the public test's expected output when its input
        is a public test's, else the first public test's output; `empty-program` (stdin/stdout only):
        one that prints nothing. Both print stored text, so what they print on each test is known
        without running them: it goes to judge, the judge of every contest answer,
        as the verdicts a run would give. Nothing runs in the sandbox."""
        from synthgen.sandbox.verdicts import CallVerdict, Status

        if not problem.inputs or len(problem.outputs) != len(problem.inputs):
            return chance.ChanceResult()
        call = entry_call(problem)
        mode = "stdin" if call is None else "call"
        try:
            keys = [stdin_of(x) if call is None else x for x in problem.inputs]
        except ValueError:
            return chance.ChanceResult()
        public = max(1, min(problem.visible_count or 1, len(keys)))
        table: dict[str, str] = {}
        for key, out in zip(keys[:public], problem.outputs[:public]):
            table.setdefault(key, out)
        printed = [table.get(key, problem.outputs[0]) for key in keys]

        def verdict(encoded: str) -> CallVerdict:
            if call is None:
                return CallVerdict(Status.OK, value=text_of(encoded) + "\n")
            return CallVerdict(Status.OK, encoded=encoded)

        memorised = judge([verdict(e) for e in printed], problem.outputs, mode).passed
        outcomes = [chance.ChanceOutcome("public-outputs", int(memorised), 1)]
        if call is None:
            silent = judge([CallVerdict(Status.OK, value="")] * len(keys), problem.outputs, mode)
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
        why = f"{len(problem.inputs)} test inputs but {len(problem.outputs)} outputs"
        return Verdict(False, reasons.BAD_INPUTS, why)
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


# -- running and judging a solution on its tests ------------------------------------------
@dataclass
class TestOutcome:
    """What running one answer on a problem's tests found."""

    verdicts: list  # sandbox CallVerdicts of the tests that ran, in test order
    passed: bool  # every test passed
    infra: str = ""  # a sandbox infrastructure failure (the answer is then not scored)
    detail: str = ""  # the first failure, for people
    timed_out: bool = False  # the first failure was a time limit
    cut_by_wall_clock: bool = False  # ... its wall clock, not its CPU time


def stdin_of(argument_list: str) -> str:
    """A stdin/stdout test's input: its argument list is one string literal (parsed, never run)."""
    from synthgen.sandbox import values

    text = values.decode(values.from_literal(argument_list))
    if not isinstance(text, str):
        raise ValueError("a stdin/stdout test input must be one string literal")
    return text


def same_stdout(got: str, want: str) -> bool:
    """LiveCodeBench's stdout comparison (see the module docstring)."""
    got_lines = [line.strip() for line in got.strip().split("\n")]
    want_lines = [line.strip() for line in want.strip().split("\n")]
    if len(got_lines) != len(want_lines):
        return False
    return all(a == b or _same_numbers(a, b) for a, b in zip(got_lines, want_lines))


def _same_numbers(a: str, b: str) -> bool:
    try:
        left = [Decimal(x) for x in a.split()]
        right = [Decimal(x) for x in b.split()]
    except (InvalidOperation, ValueError):
        return False
    return left == right


def same_value(got_encoded: str | None, want_encoded: str) -> bool:
    """LiveCodeBench's comparison of a returned value with the expected one (both encodings)."""
    from synthgen.sandbox import values

    if got_encoded is None:
        return False
    try:
        got, want = values.decode(got_encoded), values.decode(want_encoded)
    except (ValueError, TypeError, RecursionError):
        return False
    if isinstance(got, tuple):
        got = list(got)
    try:
        return bool(got == want)
    except Exception:  # noqa: BLE001 (decoded plain values compare; anything odd is a mismatch)
        return False


async def run_tests(program: str, inputs: list[str], outputs: list[str], call: str | None, pool, sandbox):
    """Run `program` on every test (see the module docstring); `call` is the call-based entry
    (`Solution().name` or `name`: the method or function name), None for stdin/stdout tests."""
    from synthgen.sandbox import contest_job, values

    # The job's tests: stdin texts, or each call's arguments as an encoded list.
    mode = "stdin" if call is None else "call"
    tests = [stdin_of(x) for x in inputs] if call is None else [values.from_literal(f"[{x}]") for x in inputs]
    job = contest_job(
        program,
        tests,
        mode=mode,
        entry="" if call is None else call.rsplit(".", 1)[-1],
        test_timeout_s=float(sandbox.timeout_s),
        memory_mb=int(sandbox.memory_mb),
    )
    outcome = judge((await pool.run(job)).calls, outputs, mode)
    if outcome.cut_by_wall_clock:  # maybe only a busy machine: once more before it counts
        outcome = judge((await pool.run(job)).calls, outputs, mode)
    return outcome


def judge(verdicts: list, outputs: list[str], mode: str) -> TestOutcome:
    """The outcome of the tests that ran: the first failure decides, in test order."""
    for i, verdict in enumerate(verdicts):
        status = str(verdict.status)
        if status == "infra":
            return TestOutcome(verdicts, False, infra=verdict.error or "sandbox failure")
        if status != "ok":
            outcome = TestOutcome(
                verdicts[: i + 1], False, detail=f"test {i + 1}: {status}: {(verdict.error or '')[:160]}"
            )
            outcome.timed_out = status == "timeout"
            outcome.cut_by_wall_clock = outcome.timed_out and "wall-clock" in (verdict.error or "")
            return outcome
        right = (
            same_stdout(verdict.value or "", text_of(outputs[i]))
            if mode == "stdin"
            else same_value(verdict.encoded, outputs[i])
        )
        if not right:  # (the tests after it ran too: the sandbox never knows what is right)
            return TestOutcome(verdicts[: i + 1], False, detail=f"test {i + 1}: wrong answer")
    if len(verdicts) < len(outputs):
        return TestOutcome(verdicts, False, infra="the sandbox reported fewer tests than it ran")
    return TestOutcome(verdicts, bool(outputs))


def text_of(encoded: str) -> str:
    """An expected output as the text a program prints (a non-str value as its str())."""
    from synthgen.sandbox import values

    value = values.decode(encoded)
    return value if isinstance(value, str) else str(value)
