"""Induction (the paper's Table 1): from a hint and some input/output pairs, write the function itself.

The teacher writes `f`, a `message` and k inputs; gold outputs come from running `f` in the
sandbox. The student sees the message and the first `visible_count` pairs (the other
`round(k * holdout_fraction)`, at least one, are held out) and must write an `f` that reproduces
the gold output on all k inputs, so an answer that hard-codes the visible pairs fails. Problems
whose pairs do not pin f down are rejected: too few distinct outputs, or a trivial function (a
constant, one argument, len/sum/sorted/max of one argument...) that reproduces every output.
"""

from __future__ import annotations

from synthgen.envs import chance, parsing, reasons, validation
from synthgen.envs.base import ManyInputs, split_holdout
from synthgen.envs.parsing import FormatError, short
from synthgen.envs.problem import Problem, Reward, Verdict
from synthgen.envs.settings import EnvSettings

# One-argument functions a problem must not reduce to (name -> source); they run inside the sandbox.
TRIVIAL = {
    "returns the argument": "lambda x: x",
    "len": "len",
    "sum": "sum",
    "sorted": "sorted",
    "sorted, descending": "lambda x: sorted(x, reverse=True)",
    "reversed": "lambda x: x[::-1]",
    "min": "min",
    "max": "max",
    "abs": "abs",
    "negation": "lambda x: -x",
    "not": "lambda x: not x",
    "bool": "bool",
    "str": "str",
    "number of distinct items": "lambda x: len(set(x))",
    "upper-case": "lambda x: x.upper()",
    "lower-case": "lambda x: x.lower()",
}
TRIVIAL_MODULE = f"""
_TRIVIAL = {{{", ".join(f"{name!r}: {source}" for name, source in TRIVIAL.items())}}}


def _trivial(_cand, _index, _name, *args, **kwargs):
    # One parameter of f, however the input passed it: by keyword, else by position.
    value = kwargs[_name] if _name in kwargs else args[_index]
    return _TRIVIAL[_cand](value)


def _all_args(*args, **kwargs):
    return args
"""
MAX_POSITIONS = 3
MAX_TRIVIAL_CALLS = 5000


class Induction(ManyInputs):
    name = "induction"
    requested_inputs = 5  # the paper's teacher prompt asks for 5 diverse inputs (Appendix F)

    # -- teacher ---------------------------------------------------------------------------
    def teacher_message(self, message: str, code: str) -> str:
        """The hint must not give the code away (it is all the student gets besides the pairs)."""
        if parsing.has_code(message):
            raise FormatError(reasons.FORMAT_ERROR, "the message contains code")
        body = [ln.strip() for ln in code.split("\n") if len(ln.strip()) >= 24 and not ln.strip().startswith("#")]
        copied = [ln for ln in body if ln in message]
        if len(copied) >= 2:
            raise FormatError(reasons.FORMAT_ERROR, f"the message copies code lines ({short(copied[0], 50)})")
        return message

    async def validate(self, problem: Problem, pool, settings: EnvSettings, sandbox) -> tuple[Problem, Verdict]:
        problem = Problem(**{**problem.__dict__, "outputs": []})
        bad = validation.check_inputs(problem, max(2, settings.min_inputs), settings.max_inputs)
        bad = bad or validation.static_checks(problem, ("f",))
        if bad:
            return problem, bad
        k = len(problem.inputs)
        visible = problem.visible_count
        if visible is None:
            visible = split_holdout(k, settings.holdout_fraction)
        if not 1 <= visible < k:
            return problem, Verdict(False, reasons.BAD_INPUTS, f"visible_count {visible} must be in 1..{k - 1}")
        verdicts, bad = await validation.run_f(problem, pool, sandbox, settings.max_output_chars)
        if bad:
            return problem, bad
        outputs = [v.encoded for v in verdicts]
        problem.outputs, problem.visible_count = outputs, visible
        distinct = len(set(outputs))
        if distinct < settings.min_distinct_outputs or distinct == 1:
            return problem, Verdict(False, reasons.TRIVIAL, f"only {distinct} distinct output(s) over {k} inputs")
        return problem, await trivial_check(problem, pool, sandbox) or Verdict(True, reasons.OK)

    # -- student ---------------------------------------------------------------------------
    def student_pairs(self, problem: Problem, pairs: list[dict]) -> list[dict]:
        """The leading `visible_count` pairs; the held-out rest checks the answer."""
        return pairs[: _shown(problem, len(pairs))]

    def parse_student(self, text: str) -> str:
        block = parsing.last_block(text, ("python", ""), lambda b: parsing.mentions_def(b.text, "f"))
        if block is None and parsing.last_block(text, ("python", "")) is not None:
            raise parsing.missing("```python block defines f", text)
        if block is None:
            raise parsing.missing("closed ```python block with a function f", text)
        code = parsing.strip_main_guard(block.text)
        # Helpers a student put in blocks of their own (imports, constants, functions) go in front of f.
        helpers = [
            b.text
            for b in parsing.fenced_blocks(parsing.answer_region(text))
            if b.closed
            and b.lang in ("python", "")
            and parsing.is_definitions_only(b.text)
            and not parsing.mentions_def(b.text, "f")
        ]
        return "\n\n\n".join(helpers + [code.strip("\n")]) + "\n"

    async def check(self, problem: Problem, answer: str, pool, sandbox) -> Reward:
        calls = [f"f({x})" for x in problem.inputs]
        result = await pool.run(validation.job(answer, calls, sandbox, expected=problem.outputs))
        return self.judge(problem, answer, result.calls)

    def judge(self, problem: Problem, answer: str, verdicts: list) -> Reward:
        """The answer's f returned the gold output on every input, the held-out ones too."""
        passed = bool(verdicts) and len(verdicts) == len(problem.inputs)
        passed = passed and all(str(v.status) == "ok" and v.match for v in verdicts)
        return validation.answer_reward(verdicts, answer.strip(), passed, validation.first_problem(verdicts))

    # -- chance level (synthgen.envs.chance) -------------------------------------------------
    def chance_probes(self, problem: Problem) -> list:
        """One memoriser per fallback (each distinct visible output, and the empty value of their
        type): a program that returns the visible pairs' outputs for their inputs and the fallback
        for any other, read by the student's answer parser and run on every input like an answer."""
        shown, fallbacks = self._memorised(problem)
        probes = []
        for i, fallback in enumerate(fallbacks):
            source = chance.memoriser(shown, fallback)
            try:
                answer = self.parse_student(f"```python\n{source}```")
            except FormatError:
                continue
            k = len(problem.inputs)
            probes.append(
                chance.Probe(f"memorise:{i}", tuple(problem.inputs), tuple(problem.outputs), (fallback,) * k, answer)
            )
        return probes

    async def chance_result(self, problem: Problem, ran: list, pool=None, sandbox=None):
        """`memorise+mode` and `memorise+empty` once each; `memorise+visible` as the share of the
        visible pairs whose output, as the fallback, passes (p exact)."""
        passes: dict[str, int] = {}
        for probe, verdicts in ran:
            if verdicts and all(chance.ran_call(v) for v in verdicts):
                passes[probe.labels[0]] = int(self.judge(problem, probe.source, verdicts).value == 1.0)
        shown, _ = self._memorised(problem)
        visible = [out for _, out in shown]
        outcomes = []
        common = chance.mode(visible)
        if common in passes:
            outcomes.append(chance.ChanceOutcome("memorise+mode", passes[common], 1))
        empty = chance.empty_of(problem.outputs[0]) if visible else None  # the first visible output's type
        if empty in passes:
            outcomes.append(chance.ChanceOutcome("memorise+empty", passes[empty], 1))
        drawn = [out for out in visible if out in passes]
        if drawn:
            outcomes.append(chance.ChanceOutcome("memorise+visible", sum(passes[o] for o in drawn), len(drawn)))
        return chance.ChanceResult(outcomes)

    def _memorised(self, problem: Problem) -> tuple[list[tuple[str, str]], list[str]]:
        """The visible (input, output literal) pairs a student can copy, and the fallbacks tried."""
        outputs = problem.outputs[: _shown(problem, len(problem.inputs))]
        shown = [(x, chance.literal_of(o)) for x, o in zip(problem.inputs, outputs)]
        shown = [(x, lit) for x, lit in shown if lit is not None]
        fallbacks = list(dict.fromkeys(lit for _, lit in shown))
        empty = chance.empty_of(outputs[0]) if outputs else None
        if empty is not None and empty not in fallbacks:
            fallbacks.append(empty)
        return shown, fallbacks

    def call_labels(self, problem: Problem, answer: str) -> list[str]:
        return [f"f({x})" for x in problem.inputs]


def _shown(problem: Problem, k: int) -> int:
    """How many of k pairs the student sees: `visible_count`, else all but one."""
    return problem.visible_count if problem.visible_count is not None else max(1, k - 1)


async def trivial_check(problem: Problem, pool, sandbox) -> Verdict | None:
    """TRIVIAL if a constant-like or one-argument one-liner reproduces every gold output."""
    wheres = _parameters(problem.code)
    candidates = [(name, where) for where in wheres for name in TRIVIAL]
    # Stay well inside the sandbox's per-job call cap however many inputs the settings allow.
    candidates = candidates[: max(1, MAX_TRIVIAL_CALLS // max(1, len(problem.inputs)) - 1)]
    candidates.append(("all arguments as a tuple", None))
    calls = [
        f"_all_args({x})" if where is None else f"_trivial({name!r}, {where[0]!r}, {where[1]!r}, {x})"
        for name, where in candidates
        for x in problem.inputs
    ]
    expected = list(problem.outputs) * len(candidates)
    result = await pool.run(validation.job(TRIVIAL_MODULE, calls, sandbox, expected=expected))
    if any(str(v.status) == "infra" for v in result.calls):
        return Verdict(False, reasons.INFRA, "sandbox failure in the trivial-function check")
    k = len(problem.inputs)
    for c, (name, where) in enumerate(candidates):
        chunk = result.calls[c * k : (c + 1) * k]
        if chunk and all(str(v.status) == "ok" and v.match for v in chunk):
            arg = "" if where is None else f" of argument {where[1]}"
            return Verdict(False, reasons.TRIVIAL, f"a trivial function ({name}{arg}) reproduces every output")
    return None


def _parameters(code: str) -> list[tuple[int | None, str]]:
    """(position, name) of f's first few parameters and its keyword-only ones, read from the AST."""
    node = parsing.function_def(code)
    if node is None:
        return []
    positional = [a.arg for a in node.args.posonlyargs + node.args.args][:MAX_POSITIONS]
    out: list[tuple[int | None, str]] = list(enumerate(positional))
    out += [(None, a.arg) for a in node.args.kwonlyargs[:MAX_POSITIONS]]
    if node.args.vararg and not positional:
        out += [(i, f"*{i}") for i in range(MAX_POSITIONS)]
    return out
