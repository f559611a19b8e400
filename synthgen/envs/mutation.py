"""Do a problem's inputs pin its function down? Mutants and baselines run in the sandbox.

    result = await score_function(problem, pool, sandbox, limit=32)   # induction, abduction, deduction
    result = await score_checker(problem, pool, sandbox)              # fuzzing
    result.score, result.caught, result.total, result.surviving       # 0.93, 28, 30, ["constant", ...]

For a problem with a function `f` and inputs, the near misses of `f` (synthgen.envs.mutants) and two
baselines run on the problem's inputs; a mutant is *caught* when some output differs from the
gold one (or it raises, times out, ...), as a student answer would fail. The baselines are
`baseline:identity` (returns its first argument, run in the sandbox) and `baseline:constant`
(the most common gold output for every input: judged in the host from the gold encodings, since
it runs nothing; only with two or more inputs, because one input is always its own most common
output). The score is caught / total: a low score means a much simpler or slightly wrong
function also passes, the paper's "weak" problem.

Fuzzing has no gold function to mutate; what makes it weak is a checker that lets trivial inputs
through: the student can then win with `None` or `''` crashing the buggy function. Each trivial
input (None, 0, -1, '', 'a', [], [0], {}, ...: `baseline:<input>`) is *caught* when it does not
earn the reward (pre_test_f does not return exactly True, or test_f passes on it).

Batching: all mutants of a problem run in one sandbox job, each `f` exec'd in its own namespace
by a harness module (ours; inside the sandbox, never in the host), each held to a time budget of
max(0.2 s, 10x the original f's time on the same inputs) by a timer in the harness. A mutant that
still ends the job (a loop that swallows the timer, a crash of the process) is caught, and the
mutants after it run in the next job (at most MAX_JOBS jobs; any left are not scored). An
infrastructure failure gives no score (`infra`), never a low one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from synthgen.envs import validation
from synthgen.envs.mutants import mutants
from synthgen.envs.problem import Problem

MAX_JOBS = 4
MAX_CALLS_PER_JOB = 9000  # under the sandbox's 10,000
BUDGET_FLOOR_S = 0.2
BUDGET_FACTOR = 10.0
JOB_MARGIN_S = 0.5  # job wall time allowed per mutant beyond the original's timeout

HARNESS = """
import signal as _signal
import time as _time


class _OverBudget(BaseException):
    pass


def _alarm(signum, frame):
    raise _OverBudget()


try:
    _signal.signal(_signal.SIGALRM, _alarm)
    _TIMER = True
except (ValueError, OSError, AttributeError):
    _TIMER = False
_SPACES = {}
_SPENT = {}
_BUDGET = [%(first_budget)r]


def _load(i):
    space = _SPACES.get(i)
    if space is None:
        space = {"__name__": "__mutant__"}
        _SPACES[i] = space
        exec(compile(_SOURCES[i], "<mutant %%d>" %% i, "exec"), space)
    return space


def _call(_i, *args, **kwargs):
    left = _BUDGET[0] - _SPENT.get(_i, 0.0)
    if left <= 0:
        raise TimeoutError("over its time budget")
    start = _time.perf_counter()
    if _TIMER:
        _signal.setitimer(_signal.ITIMER_REAL, left)
    try:
        return _load(_i)["f"](*args, **kwargs)
    except _OverBudget:
        raise TimeoutError("over its time budget") from None
    finally:
        if _TIMER:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
        _SPENT[_i] = _SPENT.get(_i, 0.0) + _time.perf_counter() - start


def _calibrate():
    _BUDGET[0] = max(%(floor)r, %(factor)r * _SPENT.get(0, 0.0))
    return True


def _done(i):
    return i


def _identity(*args, **kwargs):
    return args[0] if args else next(iter(kwargs.values()))
"""

CHECKER_HARNESS = """
def _trial(*args, **kwargs):
    try:
        if pre_test_f(*args, **kwargs) is not True:
            return "rejected"
    except Exception:
        return "rejected"
    try:
        verdict = test_f(*args, **kwargs)
    except Exception:
        return "exploit"
    return "exploit" if verdict is False else "passes"
"""
TRIVIAL_INPUTS = ("None", "0", "-1", "1", "''", "'a'", "[]", "[0]", "{}", "()", "0.5", "True")


@dataclass
class MutationResult:
    score: float | None  # caught / total; None when nothing could be scored
    total: int = 0  # mutants and baselines scored
    caught: int = 0
    surviving: list[str] = field(default_factory=list)  # kinds of the survivors, sorted, one per survivor
    jobs: int = 0
    sandbox_s: float = 0.0  # wall time the sandbox spent on them (the jobs' elapsed time)
    infra: bool = False

    def to_fields(self) -> dict[str, Any]:
        return {
            "mutation_score": self.score,
            "mutants": self.total,
            "mutants_caught": self.caught,
            "surviving_mutants": list(self.surviving),
        }

    @classmethod
    def of(cls, outcomes: list[tuple[str, bool]], jobs: int, seconds: float) -> MutationResult:
        """From (kind, caught) pairs."""
        caught = sum(1 for _, c in outcomes if c)
        return cls(
            score=round(caught / len(outcomes), 6) if outcomes else None,
            total=len(outcomes),
            caught=caught,
            surviving=sorted(kind for kind, c in outcomes if not c),
            jobs=jobs,
            sandbox_s=round(seconds, 6),
        )


def _constant_caught(outputs: list[str]) -> bool:
    """Does the most common gold output differ from some gold output? (host-side: encodings only)."""
    from synthgen.sandbox import values

    mode = Counter(outputs).most_common(1)[0][0]
    return not all(values.equal(mode, o) for o in outputs)


async def score_function(problem: Problem, pool, sandbox, limit: int = 32) -> MutationResult:
    """Mutants of f and the baselines on the problem's inputs (the problem must be valid)."""
    inputs, gold = list(problem.inputs), list(problem.outputs)
    if not inputs or len(gold) != len(inputs):
        return MutationResult(None)
    per = len(inputs) + 1  # a mutant's calls and its checkpoint
    room = max(0, MAX_CALLS_PER_JOB // per - 3)
    found = mutants(problem.code, limit=min(limit, room))
    outcomes: list[tuple[str, bool]] = []
    if len(inputs) >= 2:
        outcomes.append(("baseline:constant", _constant_caught(gold)))
    # Index 0 is the original f (times the budget, checks the harness), then the mutants; the
    # identity baseline runs last.
    sources = [problem.code] + [m.source for m in found]
    todo = list(range(1, len(sources))) + [-1]  # -1: the identity baseline
    jobs, seconds = 0, 0.0
    while todo and jobs < MAX_JOBS:
        result, order = await _run_batch(sources, todo, inputs, gold, pool, sandbox)
        jobs += 1
        seconds += result.elapsed_s
        if any(str(v.status) == "infra" for v in result.calls):
            return MutationResult(None, jobs=jobs, sandbox_s=seconds, infra=True)
        finished, stopped = _read_batch(result.calls, order, len(inputs))
        if finished is None:  # the original itself did not reproduce its gold outputs: nothing to score
            return MutationResult(None, jobs=jobs, sandbox_s=seconds)
        for index, caught in finished:
            outcomes.append(("baseline:identity" if index == -1 else found[index - 1].kind, caught))
        todo = todo[len(finished) :]
        if stopped is not None:  # it ended the job: caught (a student answer like it fails); go on after it
            outcomes.append(("baseline:identity" if stopped == -1 else found[stopped - 1].kind, True))
            todo = todo[1:]
    return MutationResult.of(outcomes, jobs, seconds)


async def _run_batch(sources, todo, inputs, gold, pool, sandbox):
    """One job: the original (which sets the time budget), then the entries of `todo`, each
    followed by a checkpoint call."""
    header = HARNESS % {"first_budget": float(sandbox.timeout_s), "floor": BUDGET_FLOOR_S, "factor": BUDGET_FACTOR}
    module = f"_SOURCES = {tuple(sources)!r}\n" + header
    calls: list[str] = []
    expected: list[str | None] = []
    order: list[tuple[int, int]] = []  # (index, position of its checkpoint call)
    for index in [0, *todo]:
        target = "_identity(" if index == -1 else f"_call({index}, "
        for text, out in zip(inputs, gold):
            calls.append(f"{target}{text})")
            expected.append(out)
        if index == 0:
            calls.append("_calibrate()")
        else:
            calls.append(f"_done({index})")
        expected.append(None)
        order.append((index, len(calls) - 1))
    # The original ran within timeout_s at validation; each entry after it gets its budget and a
    # margin. A job cut short by this goes on in the next job, so it only costs time.
    timeout = min(600.0, float(sandbox.timeout_s) + JOB_MARGIN_S * len(todo))
    job = validation.job(module, calls, sandbox.model_copy(update={"timeout_s": timeout}), expected=expected)
    return await pool.run(job), order


def _read_batch(verdicts, order, k: int):
    """([(index, caught)] for the entries whose checkpoint came back, the index that ended the job or None).

    None for the list when the original f (index 0) did not reproduce its gold outputs."""
    done: list[tuple[int, bool]] = []
    for index, checkpoint in order:
        calls = verdicts[checkpoint - k : checkpoint]
        finished = str(verdicts[checkpoint].status) == "ok"
        if not finished:
            return (None if index == 0 else done), index
        caught = not all(str(v.status) == "ok" and v.match for v in calls)
        if index == 0:
            if caught:
                return None, None
            continue
        done.append((index, caught))
    return done, None


async def score_checker(problem: Problem, pool, sandbox) -> MutationResult:
    """Fuzzing: which trivial inputs would earn the reward (exploits survive; rejections are caught)."""
    if not problem.pre_test_code or not problem.test_code:
        return MutationResult(None)
    module = problem.program() + CHECKER_HARNESS
    arity = _arity(problem.pre_test_code, "pre_test_f")
    calls = [f"_trial({', '.join([x] * arity)})" for x in TRIVIAL_INPUTS]
    result = await pool.run(validation.job(module, calls, sandbox))
    if any(str(v.status) == "infra" for v in result.calls):
        return MutationResult(None, jobs=1, sandbox_s=result.elapsed_s, infra=True)
    outcomes = []
    for text, verdict in zip(TRIVIAL_INPUTS, result.calls):
        # A call that crashed the harness itself (a limit) earns nothing either.
        exploit = str(verdict.status) == "ok" and verdict.value == "'exploit'"
        outcomes.append((f"baseline:{text}", not exploit))
    return MutationResult.of(outcomes, 1, result.elapsed_s)


def _arity(code: str, name: str) -> int:
    """Positional parameters of `name` without a default (at least 1), read from the AST."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return 1
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = node.args.posonlyargs + node.args.args
            return max(1, len(args) - len(node.args.defaults))
    return 1
