"""Validation and scoring helpers every environment shares: static checks, sandbox runs, verdicts.

Validation goes cheapest first: input count and duplicates, parse and required definitions, the
forbidden-use scan, then one job run twice (two hash seeds) through the sandbox. Each failure
maps to exactly one reason code from synthgen.envs.reasons. `answer_reward` and `first_problem`
turn the sandbox verdicts of one student attempt into a Reward.
"""

from __future__ import annotations

from synthgen.envs import checks, reasons
from synthgen.envs.parsing import short
from synthgen.envs.problem import Problem, Reward, Verdict


def job(code: str, calls, sandbox, expected=None):
    from synthgen.sandbox import Job

    return Job(
        code=code,
        calls=tuple(calls),
        expected=None if expected is None else tuple(expected),
        timeout_s=float(sandbox.timeout_s),
        memory_mb=int(sandbox.memory_mb),
    )


def check_inputs(problem: Problem, low: int, high: int, what: str = "inputs") -> Verdict | None:
    n = len(problem.inputs)
    if n < low or n > high:
        want = str(low) if low == high else f"{low} to {high}"
        return Verdict(False, reasons.BAD_INPUTS, f"expected {want} {what}, got {n}")
    seen: dict[str, int] = {}
    for i, text in enumerate(problem.inputs):
        if text in seen:
            return Verdict(False, reasons.BAD_INPUTS, f"input {i + 1} repeats input {seen[text] + 1}: {short(text)}")
        seen[text] = i
    return None


MAX_PROGRAM_CHARS = 200_000


def static_checks(problem: Problem, required: tuple[str, ...]) -> Verdict | None:
    program = problem.program()
    if len(program) > MAX_PROGRAM_CHARS:
        return Verdict(False, reasons.COMPILE_ERROR, f"code longer than {MAX_PROGRAM_CHARS} characters")
    why = checks.compile_problem(program, required)
    if why:
        return Verdict(False, reasons.COMPILE_ERROR, why)
    bad = checks.forbidden_uses(program)
    if bad:
        return Verdict(False, reasons.FORBIDDEN, "; ".join(bad))
    return None


def call_failure(verdict, label: str) -> Verdict | None:
    """The reason a single call verdict makes the problem invalid, or None if it ran fine."""
    status = str(verdict.status)
    if status == "ok":
        return None
    error = verdict.error or status
    if status == "infra":
        return Verdict(False, reasons.INFRA, f"sandbox failure on {label}: {short(error, 200)}")
    if status == "output_too_large":
        return Verdict(False, reasons.OUTPUT_TOO_LARGE, f"{label}: {short(error, 200)}")
    if status == "exception" and error.startswith("while running the module"):
        return Verdict(False, reasons.COMPILE_ERROR, short(error, 300))
    return Verdict(False, reasons.EXECUTION_ERROR, f"{label}: {status}: {short(error, 300)}")


def infra_failure(results, labels: list[str]) -> Verdict | None:
    """An infra failure in any run says nothing about the problem: it is reported before anything else."""
    found = ((v, label) for result in results for v, label in zip(result.calls, labels) if str(v.status) == "infra")
    return next((call_failure(v, label) for v, label in found), None)


async def run_f(problem: Problem, pool, sandbox, max_chars: int):
    """`f` on each of the problem's inputs, as `run_deterministic` runs calls."""
    labels = [f"f({short(x, 60)})" for x in problem.inputs]
    return await run_deterministic(problem, [f"f({x})" for x in problem.inputs], labels, pool, sandbox, max_chars)


async def run_deterministic(problem: Problem, calls: list[str], labels: list[str], pool, sandbox, max_chars: int):
    """Run `calls` on the problem's program under two hash seeds.

    Returns (verdicts, None) when every call ran, gave the same value both times and every
    value's encoding fits `max_chars`; otherwise (None, the failing Verdict).
    """
    first, second = await pool.run_twice_for_determinism(job(problem.program(), calls, sandbox))
    bad = infra_failure((first, second), labels)
    if bad:
        return None, bad
    for verdict, label in zip(first.calls, labels):
        bad = call_failure(verdict, label)
        if bad:
            return None, bad
    for a, b, label in zip(first.calls, second.calls, labels):
        if str(b.status) == "exception" and not (b.error or "").startswith("while running the module"):
            # It returned under one hash seed and raised under the other: that is nondeterminism.
            why = f"{label} returned once and raised once: {short(b.error or '', 200)}"
            return None, Verdict(False, reasons.NONDETERMINISTIC, why)
        if str(b.status) != "ok":
            # A limit hit in only one run (timeout, memory) is load or a borderline cost, not a
            # changed result: report it as what it is.
            return None, call_failure(b, label)
        if not _same(a.encoded, b.encoded):
            why = f"{label} gave {short(a.value or '', 60)} and then {short(b.value or '', 60)}"
            return None, Verdict(False, reasons.NONDETERMINISTIC, why)
    for verdict, label in zip(first.calls, labels):
        if len(verdict.encoded or "") > max_chars:
            why = f"{label}: value of {len(verdict.encoded)} characters (limit {max_chars})"
            return None, Verdict(False, reasons.OUTPUT_TOO_LARGE, why)
    return list(first.calls), None


def _same(a: str | None, b: str | None) -> bool:
    from synthgen.sandbox import values

    return a == b or (a is not None and b is not None and values.equal(a, b))


def answer_reward(verdicts, answer: str, passed: bool, detail: str = ""):
    """A Reward from the sandbox verdicts of one attempt: infra wins over everything."""
    infra = [v for v in verdicts if str(v.status) == "infra"]
    if infra:
        return Reward(None, "infra", short(infra[0].error or "sandbox failure", 200), answer, list(verdicts))
    return Reward(1.0 if passed else 0.0, "ok", detail, answer, list(verdicts))


def first_problem(verdicts) -> str:
    """A short description of the first call that did not pass (for reward details)."""
    for i, v in enumerate(verdicts):
        if str(v.status) != "ok":
            return f"call {i + 1}: {v.status}: {short(v.error or '', 160)}"
        if v.match is False:
            return f"call {i + 1}: got {short(v.value or '', 80)}"
    return ""
