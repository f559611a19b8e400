"""The scripted brain's problem bank: 12 families x 5 difficulty levels, usable in all 4 environments.

A `Level` (synthgen.demo.scripted.bank_families) is a real Python function with six inputs and a hint.
From it `build(family, level, env, variant)` makes a problem for any environment:
  induction  the function renamed to `f`, five of its six inputs (rotated by the variant), the hint;
  abduction / deduction  the function and one of its inputs (chosen by the variant);
  fuzzing  the function with a bug line inserted at the top of its body, a `pre_test_f` derived
           from the shapes of the example inputs, a `test_f` that compares against the correct
           function (nested inside it), three example inputs that pass and one that exposes the bug.
Gold values are known by calling the real functions here: this is our own code, not model
output. Nothing in this module talks to the sandbox.
"""

from __future__ import annotations

import ast
import copy
import re
import textwrap
from dataclasses import dataclass, field
from functools import cache, lru_cache

from synthgen.demo.scripted.bank_families import BANK, Level, literal_args

# How often the scripted student solves a problem of each level (1..5).
# Chosen so that each level lands mostly inside one of the paper's bands at M = 32: level 2 in the
# chains scheme's easy band (0.81-0.91), level 3 in medium (0.41-0.59), level 4 in hard (0.05-0.16).
SOLVE_PROBABILITY = (0.97, 0.86, 0.5, 0.11, 0.0)
LEVELS = len(SOLVE_PROBABILITY)
INDUCTION_INPUTS = 5  # what the induction teacher prompt asks for


@dataclass
class BankProblem:
    family: str
    level: int  # 1-based
    env: str
    variant: int
    code: str
    inputs: list[str]
    message: str = ""
    pre_test_code: str = ""
    test_code: str = ""
    bug_input: str | None = None  # fuzzing: the input that exposes the bug
    normal_inputs: list[str] = field(default_factory=list)  # fuzzing: inputs that pass test_f


# The order families are drawn in (a seed's family is picked by hash from this list).
FAMILY_ORDER = (
    "digits",
    "runs",
    "text",
    "brackets",
    "grid",
    "spans",
    "words",
    "primes",
    "cipher",
    "ops",
    "matrix",
    "coins",
)


if set(BANK) != {f"{name}_{i}" for name in FAMILY_ORDER for i in range(1, LEVELS + 1)}:
    raise RuntimeError("the bank must declare `<family>_<level>` for each of FAMILY_ORDER and levels 1 to LEVELS")


def level_of(family: str, level: int) -> Level:
    return BANK[f"{family}_{level}"]


def build(family: str, level: int, env: str, variant: int = 0) -> BankProblem:
    lv = level_of(family, level)
    k = len(lv.inputs)
    if env == "induction":
        shift = variant % k
        inputs = list(lv.inputs[shift:] + lv.inputs[:shift])[:INDUCTION_INPUTS]
        return BankProblem(family, level, env, variant, lv.source(), inputs, lv.message)
    if env in ("abduction", "deduction"):
        return BankProblem(family, level, env, variant, lv.source(), [lv.inputs[variant % k]])
    if env == "fuzzing":
        return copy.deepcopy(_fuzz(family, level, variant % 6))
    raise ValueError(f"unknown environment {env!r}")


# ---------------------------------------------------------------------------------------------
# fuzzing: a generic, deterministic bug on one argument, and checkers derived from the examples

# Bug templates per argument type: (source with {p} and {t}, trigger(v, t), transform(v), settings t).
_BUGS = {
    int: ("if {p} % 7 == {t}:\n    {p} += 1", lambda v, t: v % 7 == t, lambda v: v + 1, (3, 5, 1, 4, 2, 6, 0)),
    str: ("if len({p}) > {t}:\n    {p} = {p}[:-1]", lambda v, t: len(v) > t, lambda v: v[:-1], (6, 5, 4, 7, 3, 8, 2)),
    list: ("if len({p}) > {t}:\n    {p} = {p}[:-1]", lambda v, t: len(v) > t, lambda v: v[:-1], (5, 4, 3, 6, 2, 7, 1)),
}


@cache
def _fuzz(family: str, level: int, variant: int) -> BankProblem:
    lv = level_of(family, level)
    params = lv.params
    examples = [literal_args(t) for t in lv.inputs]
    pos = next(
        i for i in range(len(params)) if len({type(ex[i]) for ex in examples}) == 1 and type(examples[0][i]) in _BUGS
    )
    template, trigger, transform, settings = _BUGS[type(examples[0][pos])]

    def changes(args: list) -> bool:  # whether the bug changes the answer for these arguments
        return _safe(lv.func, args) != _safe(lv.func, _with(args, pos, transform(args[pos])))

    candidates = _candidates(examples, pos)
    for t in settings:  # the first setting with a passing example and a reachable bug (variant-independent)
        normal = [text for text, ex in zip(lv.inputs, examples) if not trigger(ex[pos], t) or not changes(ex)]
        bugs = [a for a in candidates if trigger(a[pos], t) and _safe(lv.func, a) is not _RAISED and changes(a)]
        if normal and bugs:
            break
    else:
        raise ValueError(f"no fuzzing problem for {family} level {level}")
    bug = ", ".join(repr(a) for a in bugs[variant % len(bugs)])
    shift = variant % len(normal)
    chosen = [x for x in (normal[shift:] + normal[:shift]) if x != bug][:3]
    cut = variant % len(chosen) + 1
    inputs = chosen[:cut] + [bug] + chosen[cut:]
    code = _insert_bug(lv.source(), template.format(p=params[pos], t=t))
    # Checker bounds from every candidate bug input, not just this variant's: the pre-test is then
    # the same for all variants, so any of them can be answered with any bug input.
    pre_test = _pre_test(params, examples + bugs)
    return BankProblem(family, level, "fuzzing", variant, code, inputs, "", pre_test, _test(lv, params), bug, chosen)


def _candidates(examples: list[list], pos: int) -> list[list]:
    """Example inputs and widened ones (longer lists and strings, more integers) to look for a bug in."""
    out = [list(ex) for ex in examples]
    if type(examples[0][pos]) is int:
        out += [_with(examples[0], pos, v) for v in range(0, 64)]
    else:
        for a in examples:
            for b in examples:
                if a[pos] and b[pos]:
                    out.append(_with(a, pos, a[pos] + b[pos]))
            if a[pos]:
                out.append(_with(a, pos, (a[pos] * 8)[: max(len(a[pos]), 8)]))
                out.append(_with(a, pos, a[pos][:1] * 8))
    return [args for i, args in enumerate(out) if args not in out[:i]]


_RAISED = object()


def _safe(func, args):
    try:
        return func(*args)
    except Exception:
        return _RAISED


def _with(args: list, pos: int, value) -> list:
    out = list(args)
    out[pos] = value
    return out


def _insert_bug(source: str, bug: str) -> str:
    tree = ast.parse(source)
    first = tree.body[0].body[0]
    lines = source.split("\n")
    indent = re.match(r"\s*", lines[first.lineno - 1]).group(0)
    return "\n".join(lines[: first.lineno - 1] + textwrap.indent(bug, indent).split("\n") + lines[first.lineno - 1 :])


def _test(lv: Level, params: list[str]) -> str:
    args = ", ".join(params)
    spec = textwrap.indent(lv.source("spec"), "    ")
    return (
        f"def test_f({args}):\n{spec}\n\n    try:\n        expected = spec({args})\n"
        f"    except Exception:\n        return True  # outside the task's domain: nothing to check\n"
        f"    return f({args}) == expected"
    )


def _pre_test(params: list[str], examples: list[list]) -> str:
    checks = [_check([ex[i] for ex in examples], name) for i, name in enumerate(params)]
    body = "\n        and ".join(checks)
    return f"def pre_test_f({', '.join(params)}):\n    return (\n        {body}\n    )"


def _check(values: list, var: str, depth: int = 0) -> str:
    """A condition that `var` has the shape of the example `values`, with room to spare."""
    kinds = {type(v) for v in values}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind is int:
        return f"type({var}) is int and {min(min(values), 0) * 2} <= {var} <= {max(max(values) * 2, 10)}"
    if kind is str:
        chars, longest = "".join(sorted(set("".join(values)))), max(2 * max(len(v) for v in values), 12)
        return f"type({var}) is str and len({var}) <= {longest} and set({var}) <= set({chars!r})"
    if kind is list:
        items, item = [x for v in values for x in v], f"v{depth}"
        inner = _check(items, item, depth + 1) if items else "False"
        shortest, longest = min(len(v) for v in values), max(2 * max(len(v) for v in values), 8)
        return f"type({var}) is list and {shortest} <= len({var}) <= {longest} and all({inner} for {item} in {var})"
    return "True"


# ---------------------------------------------------------------------------------------------
# recognising bank code in prompts


def code_key(code: str) -> str | None:
    """A formatting-insensitive key of the top-level function `f` in `code` (None if none)."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "f":
            return ast.dump(node, annotate_fields=False, include_attributes=False)
    return None


@lru_cache(maxsize=1)
def code_index() -> dict[str, tuple[str, int]]:
    """code key -> (family, level), for plain and bugged (fuzzing) code."""
    index: dict[str, tuple[str, int]] = {}
    for family in FAMILY_ORDER:
        for i in range(1, LEVELS + 1):
            for code in (level_of(family, i).source(), build(family, i, "fuzzing").code):
                key = code_key(code)
                if key:
                    index[key] = (family, i)
    return index


@lru_cache(maxsize=1)
def message_index() -> dict[str, tuple[str, int]]:
    return {level_of(family, i).message: (family, i) for family in FAMILY_ORDER for i in range(1, LEVELS + 1)}


def recognise(env: str | None, code: str | None, message: str | None) -> tuple[str, int] | None:
    """(family, level) of a bank problem: by its code, or an induction problem (whose code is hidden) by its hint."""
    if env == "induction":
        return message_index().get((message or "").strip())
    return code_index().get(code_key(code or "") or "")
