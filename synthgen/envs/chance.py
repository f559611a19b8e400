"""Chance level: how often a student with no understanding of a problem earns its reward.

    probes = env.chance_probes(problem)                  # what runs in the sandbox, in the mutation job
    result = await env.chance_result(problem, verdicts)   # verdicts: {probe strategy: [CallVerdict | None]}
    result.rate, result.winners                           # 0.5, ["coin"]
    result.to_fields()                                    # {"chance_rate": 0.5, "chance_strategies": ["coin"]}

A pass rate measures difficulty only when the reward cannot be earned without solving. Each
environment names strategies a student with no understanding would use, and every answer a
strategy gives is scored by the environment's own verifier (parse and judge), so "chance" means
exactly what the reward means. The chance rate is the best strategy's success rate;
`chance_strategies` names the strategies that reach it (empty when it is 0). No LLM is asked.

Strategies per environment:

    deduction   empty:<v>         the empty value of a type: None, 0, 0.0, '', [], (), {}, set()
                coin              True or False, one half each
                echo              an argument of the call, as the answer
                mode              f's most common output over inputs drawn like the problem's
    abduction   trivial:<x>       None, 0, -1, 1, '', 'a', [], [0], {}, (), 0.5 or True as every argument
                output            the target output as every argument
                random            inputs drawn like the problem's
    induction   memorise+mode     a program that returns the visible pairs' outputs for their inputs
                                  and the most common visible output for any other
                memorise+empty    ... and the empty value of the outputs' type (0, '', [], ...)
                memorise+visible  ... and a visible pair's output picked at random
    contest     public-outputs    a program that prints the public test's output for its input and
                                  the first public output for any other
                empty-program     a program that prints nothing (stdin/stdout problems)
    fuzzing     trivial:<x>       the trivial inputs against the checker (mutation.score_checker)

A deterministic strategy is scored once (0 or 1); a random one over a few answers (a coin flip)
gets its exact p; one over unboundedly many (`draw_arguments`: each argument keeps its type and
keyword) is scored on DRAWS draws seeded with the problem's id (the same on any machine): its 95%
Wilson interval is about +-0.15 at p = 0.5. A draw the sandbox never ran (the probes' time
budget was spent) is not a data point; one that raised or ran past its budget failed, as a
student's answer would.
"""

from __future__ import annotations

import random
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from synthgen.envs.parsing import ArgsError, function_def, split_args

DRAWS = 40  # draws of a random-input strategy: +-0.15 (95%) at p = 0.5
EMPTY_VALUES = ("None", "0", "0.0", "''", "[]", "()", "{}", "set()")
NOT_RUN = "not run: its time budget was spent"  # the harness's word for a call it never started
_MAX_STR = 64
_MAX_ITEMS = 16
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Probe:
    """Calls that run in the mutation job for one group of strategies: `f` of `source` (the problem's
    own program when None, else a program a strategy wrote, such as a memoriser) on `calls`."""

    name: str
    calls: tuple[str, ...]  # argument lists
    expected: tuple[str | None, ...]  # the gold encoding each call is judged against; None: bring the value back
    labels: tuple[str, ...]  # per call: the strategy (or answer) it belongs to
    source: str | None = None


@dataclass(frozen=True)
class ChanceOutcome:
    """One strategy's success rate: `successes` of `trials` equally likely answers or draws."""

    strategy: str
    successes: int
    trials: int

    @property
    def rate(self) -> float:
        return self.successes / self.trials


@dataclass
class ChanceResult:
    outcomes: list[ChanceOutcome] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        """The best strategy's success rate; None when no strategy could be scored."""
        return round(max(o.rate for o in self.outcomes), 6) if self.outcomes else None

    @property
    def winners(self) -> list[str]:
        """The strategies that reach the chance rate, sorted; none when it is 0."""
        best = self.rate
        return sorted({o.strategy for o in self.outcomes if round(o.rate, 6) == best}) if best else []

    def to_fields(self) -> dict[str, Any]:
        rate = self.rate
        return {"chance_rate": rate, "chance_strategies": None if rate is None else self.winners}


# -- reading verdicts -----------------------------------------------------------------------------
def ran_call(verdict) -> bool:
    """Whether the sandbox ran the call (a call never started for lack of budget is not a data point)."""
    status = "infra" if verdict is None else str(verdict.status)
    return status != "infra" and not (status == "exception" and NOT_RUN in (verdict.error or ""))


def passed(verdict) -> bool:
    """The judge of a call against its gold value: it returned, and what it returned equals the gold."""
    return verdict is not None and str(verdict.status) == "ok" and verdict.match is True


def per_call(ran: list, judge) -> list[ChanceOutcome]:
    """Outcomes of probes whose every call is one answer (an argument list), judged alone:
    `judge(answer, verdict) -> bool`, per label (a strategy, or one of its answers)."""
    hits: dict[str, list[int]] = {}
    for probe, verdicts in ran:
        for label, answer, verdict in zip(probe.labels, probe.calls, verdicts):
            if ran_call(verdict):
                hits.setdefault(label, []).append(int(judge(answer, verdict)))
    return [ChanceOutcome(label, sum(h), len(h)) for label, h in hits.items()]


# -- inputs drawn like the problem's ----------------------------------------------------------------
def rng_for(problem_id: str, name: str) -> random.Random:
    """The generator of one strategy's draws: seeded by the problem (reproducible anywhere)."""
    return random.Random(f"chance:{problem_id}:{name}")


def draw_arguments(text: str, n: int, rng: random.Random) -> list[str]:
    """`n` argument lists drawn like `text` (see the module docstring); [] when it cannot be read."""
    from synthgen.sandbox import values

    try:
        positional, keywords = split_args(text)
        args = [values.decode(values.from_literal(a)) for a in positional]
        kwargs = {k: values.decode(values.from_literal(v)) for k, v in keywords.items()}
    except Exception:  # noqa: BLE001 (not an argument list of literals: nothing to draw like)
        return []
    out = []
    for _ in range(n):
        parts = [_literal(_like(a, rng, 0)) for a in args]
        parts += [f"{k}={_literal(_like(v, rng, 0))}" for k, v in kwargs.items()]
        out.append(", ".join(parts))
    return out


def _like(v, rng: random.Random, depth: int):
    """A value drawn like v: bool 1/2 each; int and float uniform on [-R, R], R = max(10, 2|v|)
    (floats to 3 decimals); str and bytes of a length up to max(3, 2 len(v)) (at most 64), from v's
    own characters when it has 2 or more (str; else a-z too); list and set as long (at most 16),
    items drawn like one of v's (like 0 when empty); tuple item by item; dict keys and values
    drawn like v's; anything else, or deeper than _MAX_DEPTH, unchanged."""
    t = type(v)
    if t is bool:
        return rng.random() < 0.5
    if t is int:
        r = max(10, 2 * abs(v))
        return rng.randint(-r, r)
    if t is float:
        r = max(10.0, 2 * abs(v)) if v == v and abs(v) != float("inf") else 10.0
        return round(rng.uniform(-r, r), 3)
    if t is str:
        return "".join(rng.choice(_alphabet(v)) for _ in range(_length(len(v), _MAX_STR, rng)))
    if t is bytes:
        return bytes(rng.randrange(256) for _ in range(_length(len(v), _MAX_STR, rng)))
    if depth >= _MAX_DEPTH:
        return v
    if t is tuple:
        return tuple(_like(x, rng, depth + 1) for x in v)
    if t in (list, set, frozenset):
        items = list(v) if t is list else sorted(v, key=repr)
        drawn = [
            _like(rng.choice(items) if items else 0, rng, depth + 1) for _ in range(_length(len(v), _MAX_ITEMS, rng))
        ]
        if t is list:
            return drawn
        try:
            return t(drawn)
        except TypeError:  # an unhashable item drawn for a set: keep the original
            return v
    if t is dict:
        keys, vals = list(v), list(v.values())
        out = {}
        for _ in range(_length(len(v), _MAX_ITEMS, rng)):
            key = _like(rng.choice(keys) if keys else 0, rng, depth + 1)
            try:
                out[key] = _like(rng.choice(vals) if vals else 0, rng, depth + 1)
            except TypeError:  # an unhashable key
                return v
        return out
    return v


def _length(n: int, cap: int, rng: random.Random) -> int:
    return rng.randint(0, min(cap, max(3, 2 * n)))


def _alphabet(v: str) -> str:
    own = sorted(set(v))
    return "".join(own) if len(own) >= 2 else string.ascii_lowercase + "".join(c for c in own if not c.islower())


def _literal(value) -> str:
    """A Python literal of a drawn value (the argument-list grammar: `set()` for an empty set)."""
    if type(value) in (set, frozenset) and not value:
        return "set()" if type(value) is set else "frozenset()"
    return repr(value)


# -- small helpers the environments share -------------------------------------------------------------
def literal_of(encoded: str) -> str | None:
    """The Python literal a student would write for a gold encoding, or None when no literal gives
    back the same value (a NaN, a huge int)."""
    from synthgen.sandbox import values

    try:
        text = repr(values.decode(encoded))
        return text if values.equal(values.from_literal(text), encoded) else None
    except (ValueError, RecursionError):
        return None


def argument_texts(text: str) -> list[str]:
    """The literal of each argument of an argument list (positional, then keyword values)."""
    try:
        positional, keywords = split_args(text)
    except ArgsError:
        return []
    return positional + list(keywords.values())


def mode(encodings: list[str]) -> str | None:
    """The most common encoding (ties: the first seen); None for none."""
    return Counter(encodings).most_common(1)[0][0] if encodings else None


def arity(code: str, name: str = "f") -> int:
    """Positional parameters of `name` without a default (at least 1), read from the AST."""
    node = function_def(code, name)
    return 1 if node is None else max(1, len(node.args.posonlyargs + node.args.args) - len(node.args.defaults))


def empty_of(encoded: str) -> str | None:
    """The empty value of a gold value's type, as a literal (None for bool and types without one)."""
    from synthgen.sandbox import values

    try:
        value = values.decode(encoded)
    except ValueError:
        return None
    empties = {int: "0", float: "0.0", str: "''", list: "[]", tuple: "()", dict: "{}", set: "set()", bytes: "b''"}
    return empties.get(type(value))


MEMORISER = """
def _key(*args, **kwargs):
    return repr(args) + repr(sorted(kwargs.items()))


_TABLE = {
%(table)s
}


def f(*args, **kwargs):
    return _TABLE.get(_key(*args, **kwargs), %(fallback)s)
"""


def memoriser(pairs: list[tuple[str, str]], fallback: str) -> str:
    """The source of a program that answers the (argument list, output literal) pairs it was shown
    and `fallback` for any other input: what a student who copies the visible examples writes."""
    table = "\n".join(f"    _key({args}): {out}," for args, out in pairs)
    return MEMORISER % {"table": table, "fallback": fallback}
