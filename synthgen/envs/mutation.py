"""Do a problem's inputs pin its function down? Mutants and baselines run in the sandbox.

    result = await score_function(problem, pool, sandbox, limit=32)   # induction, abduction, deduction
    result = await score_checker(problem, pool, sandbox)              # fuzzing
    result.score, result.caught, result.total, result.surviving       # 0.93, 28, 30, ["constant", ...]

The near misses of `f` (synthgen.envs.mutants) and two baselines run on the problem's inputs; one
is *caught* when some output differs from the gold one (or it raises, times out, ...), as a student
answer would fail. `baseline:identity` returns its first argument; `baseline:constant` is the most
common gold output (judged in the host; only with two or more inputs, since one input is always
its own most common output). The score is caught / total: a low one means a much simpler or
slightly wrong function also passes, the paper's "weak" problem. Fuzzing has no gold f: there a
trivial input (`baseline:<input>`) is caught when it does not earn the reward (score_checker).

All mutants of a problem run in one job, each `f` exec'd in its own namespace by a harness (inside
the sandbox) and held to a budget of max(0.2 s, 10x the original's time). One that still ends the
job (a loop that swallows the timer, a crash) is caught, and the rest run in the next job (at most
MAX_JOBS). An infrastructure failure gives no score (`infra`), never a low one. The chance probes
(synthgen.envs.chance) run in the same job after the original, each with a budget of its own; a
call never started for lack of budget says so (chance.NOT_RUN) and is no data point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from synthgen.envs import chance, validation
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
_SCALES = %(scales)r  # probes: their budget is the mutants' times this, at most _CAP
_LIMITS = {}
_CAP = %(cap)r


def _load(i):
    space = _SPACES.get(i)
    if space is None:
        space = {"__name__": "__mutant__"}
        _SPACES[i] = space
        exec(compile(_SOURCES[i], "<mutant %%d>" %% i, "exec"), space)
    return space


def _call(_i, *args, **kwargs):
    left = _LIMITS.get(_i, _BUDGET[0]) - _SPENT.get(_i, 0.0)
    if left <= 0:
        raise TimeoutError(%(not_run)r)
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
    for i, scale in _SCALES.items():
        _LIMITS[i] = min(_CAP, _BUDGET[0] * scale)
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
    # The chance probes' verdicts (probe name -> one verdict per call, None where the job ended
    # before it), and what the environment made of them (synthgen.envs.chance.ChanceResult).
    probes: dict[str, list] = field(default_factory=dict)
    chance: Any = None
    measured: bool = True  # False: mutants were not asked for (only the chance probes ran)

    def to_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.measured:
            out.update(
                mutation_score=self.score,
                mutants=self.total,
                mutants_caught=self.caught,
                surviving_mutants=list(self.surviving),
            )
        if self.chance is not None:
            out.update(self.chance.to_fields())
        return out

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

    mode = chance.mode(outputs)
    return not all(values.equal(mode, o) for o in outputs)


@dataclass(frozen=True)
class _Entry:
    """One stretch of a batch job: calls of one source (or of the identity), then a checkpoint."""

    key: Any  # a mutant's index in the sources, "identity", or ("probe", name)
    target: str  # the call's text up to its arguments: "_call(3, " or "_identity("
    calls: tuple[str, ...]
    expected: tuple[str | None, ...]


async def score_function(
    problem: Problem, pool, sandbox, limit: int = 32, probes=(), mutate: bool = True
) -> MutationResult:
    """Mutants of f and the baselines on the problem's inputs (the problem must be valid), and the
    chance probes (synthgen.envs.chance.Probe) in the same job; `mutate=False`: the probes only."""
    inputs, gold = list(problem.inputs), list(problem.outputs)
    if not inputs or len(gold) != len(inputs):
        return MutationResult(None, measured=mutate)
    probes = list(probes)
    probe_calls = sum(len(p.calls) + 1 for p in probes)
    per = len(inputs) + 1  # a mutant's calls and its checkpoint
    room = max(0, (MAX_CALLS_PER_JOB - probe_calls) // per - 3)
    found = mutants(problem.code, limit=min(limit, room)) if mutate else []
    outcomes: list[tuple[str, bool]] = []
    if mutate and len(inputs) >= 2:
        outcomes.append(("baseline:constant", _constant_caught(gold)))
    # Index 0 is the original f (times the budget, checks the harness); then the probes (each its
    # own source, so its own budget), the mutants and the identity baseline.
    sources = [problem.code]
    todo: list[_Entry] = []
    scales: dict[int, float] = {}
    for probe in probes:
        sources.append(probe.source if probe.source is not None else problem.program())
        index = len(sources) - 1
        scales[index] = max(1.0, len(probe.calls) / len(inputs))
        todo.append(_Entry(("probe", probe.name), f"_call({index}, ", probe.calls, probe.expected))
    kinds: dict[Any, str] = {"identity": "baseline:identity"}
    for m in found:
        sources.append(m.source)
        kinds[len(sources) - 1] = m.kind
        todo.append(_Entry(len(sources) - 1, f"_call({len(sources) - 1}, ", tuple(inputs), tuple(gold)))
    if mutate:
        todo.append(_Entry("identity", "_identity(", tuple(inputs), tuple(gold)))
    seen: dict[str, list] = {}
    jobs, seconds = 0, 0.0
    while todo and jobs < MAX_JOBS:
        result = await _run_batch(sources, scales, todo, inputs, gold, pool, sandbox)
        jobs += 1
        seconds += result.elapsed_s
        if any(str(v.status) == "infra" for v in result.calls):
            return MutationResult(None, jobs=jobs, sandbox_s=seconds, infra=True, measured=mutate)
        done = _read_batch(result.calls, todo, len(inputs))
        if done is None:  # the original itself did not reproduce its gold outputs: nothing to score
            return MutationResult(None, jobs=jobs, sandbox_s=seconds, measured=mutate)
        for entry, verdicts, ended in done:
            if isinstance(entry.key, tuple):  # a probe: what came back counts, the rest never ran
                seen[entry.key[1]] = verdicts + [None] * (len(entry.calls) - len(verdicts))
            else:  # one that ended the job is caught (a student answer like it fails); go on after it
                outcomes.append((kinds[entry.key], ended or not all(chance.passed(v) for v in verdicts)))
        todo = todo[len(done) :]
    result = MutationResult.of(outcomes, jobs, seconds) if mutate else MutationResult(None, jobs=jobs)
    result.sandbox_s, result.measured = round(seconds, 6), mutate
    result.probes = {p.name: seen.get(p.name, [None] * len(p.calls)) for p in probes}
    return result


async def _run_batch(sources, scales, todo, inputs, gold, pool, sandbox):
    """One job: the original (which sets the time budget), then the entries of `todo`, each
    followed by a checkpoint call."""
    header = HARNESS % {
        "first_budget": float(sandbox.timeout_s),
        "floor": BUDGET_FLOOR_S,
        "factor": BUDGET_FACTOR,
        "scales": scales,
        "cap": float(sandbox.timeout_s),
        "not_run": chance.NOT_RUN,
    }
    module = f"_SOURCES = {tuple(sources)!r}\n" + header
    calls: list[str] = [f"_call(0, {text})" for text in inputs] + ["_calibrate()"]
    expected: list[str | None] = [*gold, None]
    for n, entry in enumerate(todo):
        calls += [f"{entry.target}{text})" for text in entry.calls] + [f"_done({n})"]
        expected += [*entry.expected, None]
    # The original ran within timeout_s at validation; each entry after it gets its budget and a
    # margin, a probe up to timeout_s. A job cut short by this goes on in the next job, so it only
    # costs time.
    probes = sum(1 for e in todo if isinstance(e.key, tuple))
    timeout = min(600.0, float(sandbox.timeout_s) * (1 + probes) + JOB_MARGIN_S * len(todo))
    job = validation.job(module, calls, sandbox.model_copy(update={"timeout_s": timeout}), expected=expected)
    return await pool.run(job)


def _read_batch(verdicts, todo, k: int) -> list[tuple[_Entry, list, bool]] | None:
    """(entry, its verdicts, whether it ended the job) for the entries whose checkpoint came back,
    then the one that ended the job, if one did; None when the original f did not reproduce its
    gold outputs."""
    first = verdicts[:k]
    if len(verdicts) <= k or str(verdicts[k].status) != "ok" or not all(chance.passed(v) for v in first):
        return None
    done: list[tuple[_Entry, list, bool]] = []
    at = k + 1
    for entry in todo:
        n = len(entry.calls)
        calls = list(verdicts[at : at + n])
        checkpoint = verdicts[at + n] if at + n < len(verdicts) else None
        if checkpoint is None or str(checkpoint.status) != "ok":
            # The calls that never reported share the job's end (timeout, killed, ...): the first of
            # them ended it (it failed, as such an answer would); the ones after it never ran.
            tail = len(calls)
            while tail > 0 and str(calls[tail - 1].status) not in ("ok", "exception"):
                tail -= 1
            return [*done, (entry, calls[: tail + 1], True)]
        done.append((entry, calls, False))
        at += n + 1
    return done


async def score_checker(problem: Problem, pool, sandbox) -> MutationResult:
    """Fuzzing: which trivial inputs would earn the reward (exploits survive; rejections are caught).

    The same trials are the environment's chance probes: an input that earns the reward is a
    strategy (`trivial:<x>`) that always succeeds, so any exploit makes the chance rate 1."""
    if not problem.pre_test_code or not problem.test_code:
        return MutationResult(None)
    module = problem.program() + CHECKER_HARNESS
    arity = chance.arity(problem.pre_test_code, "pre_test_f")
    calls = [f"_trial({', '.join([x] * arity)})" for x in TRIVIAL_INPUTS]
    result = await pool.run(validation.job(module, calls, sandbox))
    if any(str(v.status) == "infra" for v in result.calls):
        return MutationResult(None, jobs=1, sandbox_s=result.elapsed_s, infra=True)
    # A call that crashed the harness itself (a limit) earns nothing either.
    exploits = [str(v.status) == "ok" and v.value == "'exploit'" for v in result.calls]
    outcomes = [(f"baseline:{text}", not exploit) for text, exploit in zip(TRIVIAL_INPUTS, exploits)]
    scored = MutationResult.of(outcomes, 1, result.elapsed_s)
    scored.chance = chance.ChanceResult(
        [chance.ChanceOutcome(f"trivial:{kind.removeprefix('baseline:')}", int(not c), 1) for kind, c in outcomes]
    )
    return scored
