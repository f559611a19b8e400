"""The words of the scripted brain: teacher and student replies as text, with prose and reasoning.

synthgen.demo.scripted.bank decides *what* to answer (which problem, correct or not, which flaw);
this module writes it down the way a model would: fenced blocks wrapped in some prose, in a few
formatting styles that the parsers must cope with (plain, `<answer>` tags, Windows line endings,
a leaked `<think>` draft), plus a short reasoning text.
"""

from __future__ import annotations

import re

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted import cues
from synthgen.demo.scripted.faults import pick, unit

FENCE = "```"
STYLES = ("plain", "plain", "answer_tags", "crlf", "think_leak")


def block(lang: str, body: str) -> str:
    return f"{FENCE}{lang}\n{body.strip(chr(10))}\n{FENCE}"


# ---------------------------------------------------------------------------------------------
# teacher

_INTROS = {
    "first": "Here is a problem built on the main idea of the snippet.",
    "harder": "The student found the last one easy, so this version adds a twist.",
    "easier": "The last one was too hard, so this version is simpler and its hint clearer.",
    "similar": "The difficulty looked right; here is a variation at about the same level.",
    "somewhat-easier": "The student got there only now and then, so this version drops one of the harder details.",
    "chain-medium": "Here is an easier version of the same task, one step down.",
    "chain-easy": "Here is a gentler version of the same task, a first step towards it.",
    "unknown": "Here is a new problem.",
}


def teacher_reply(problem: bp.BankProblem, how: str, flaw: str | None, draw) -> tuple[str, str]:
    """(content, reasoning) of a teacher answer for `problem`, with the deliberate `flaw` if any."""
    code, inputs, message = problem.code, list(problem.inputs), problem.message
    helpers = [problem.pre_test_code, problem.test_code] if problem.env == "fuzzing" else []
    drop_inputs = drop_message = False
    if flaw == "forbidden":
        code = "import os\n\n\n" + code
    elif flaw == "syntax":
        code = re.sub(r"\):\n", ")\n", code, count=1)
    elif flaw == "execution":
        inputs = inputs + ["None"] if problem.env in ("induction", "fuzzing") else ["None"]
    elif flaw == "trivial":
        code = "def f(*args):\n    return args[0]"
    elif flaw == "nondeterministic":
        if problem.env == "fuzzing":  # f is only reached through test_f, so make the test itself unstable
            helpers[1] = "def test_f(*args):\n    return hash(repr(args)) % 1000 + 1"
        else:
            code = "def f(*args):\n    return hash(repr(args)) % 1000"
    elif flaw == "format":
        if problem.env == "fuzzing":  # its example inputs are optional: leave out a checker instead
            helpers = helpers[:1]
        elif problem.env == "induction" and unit(*draw, "fmt") < 0.5:
            drop_message = True
        else:
            drop_inputs = True
    parts = [_INTROS.get(how, _INTROS["unknown"]), "", block("python", code)]
    for helper in helpers:
        parts += ["", block("python", helper)]
    if not drop_inputs:
        parts += ["", "Inputs:" if len(inputs) > 1 else "Input:"]
        parts += [block("input", x) for x in inputs]
    if problem.env == "induction" and not drop_message:
        parts += ["", block("message", message)]
    parts += ["", "Each input runs quickly and the outputs differ from one another."]
    content = "\n".join(parts)
    style = pick(STYLES, *draw, "style")
    if style == "answer_tags":
        content = "Plan done.\n<answer>\n" + content + "\n</answer>"
    elif style == "crlf":
        content = content.replace("\n", "\r\n")
    elif style == "think_leak":
        content = (
            "<think>A first draft:\n"
            + block("python", "def f(x):\n    return x")
            + "\nNo, too simple.</think>\n"
            + content
        )
    reasoning = (
        f"Family '{problem.family}', level {problem.level} of {bp.LEVELS} ({how}). "
        f"I need {len(inputs)} input(s) for the {problem.env} environment; I checked each by hand."
    )
    return content, reasoning


# ---------------------------------------------------------------------------------------------
# student


def student_reply(env: str, text: str, found: tuple[str, int] | None, outcome: str, draw) -> tuple[str, str]:
    """(content, reasoning) of one student attempt with the decided outcome."""
    if outcome == "unreadable":
        return pick(_UNREADABLE, *draw, "unreadable"), "Not sure, running out of time."
    if outcome == "unknown" or found is None:
        return _UNKNOWN[env], "I do not recognise this; a guess."
    family, level = found
    lv = bp.level_of(family, level)
    answer = {"induction": _induction, "abduction": _abduction, "deduction": _deduction, "fuzzing": _fuzzing}[env](
        lv, family, level, text, outcome == "correct", draw
    )
    lead = "Here is my answer." if outcome == "correct" else "I think this is it."
    return f"{lead}\n\n{answer}\n", f"Looked at the problem briefly ({outcome})."


_UNREADABLE = (
    "I believe the answer follows from the loop, but I could not finish working it out.",
    f"Answer:\n{FENCE}\n",
    "The result is probably the same as the input.",
)
_UNKNOWN = {
    "induction": block("python", "def f(*args):\n    return None"),
    "abduction": block("input", "0"),
    "deduction": block("output", "None"),
    "fuzzing": block("input", "0"),
}


def _induction(lv: bp.Level, family: str, level: int, text: str, correct: bool, draw) -> str:
    if correct:
        return block("python", lv.source())
    pairs = cues.induction_pairs(text)
    choice = pick(("memorise", "neighbour", "constant"), *draw, "wrong")
    if choice == "neighbour":
        other = bp.level_of(family, level - 1 if level > 1 else level + 1)
        if _differs(lv, other):
            return block("python", other.source())
        choice = "memorise"
    if choice == "memorise" and pairs:
        lines = [
            "def f(*args, **kwargs):",
            "    def key(*a, **k):",
            "        return (a, sorted(k.items()))",
            "",
            "    seen = key(*args, **kwargs)",
        ]
        for args, out in pairs:
            lines += [f"    if seen == key({args}):", f"        return {out}"]
        lines.append("    return None")
        return block("python", "\n".join(lines))
    first = pairs[0][1] if pairs else "0"
    return block("python", f"def f(*args, **kwargs):\n    return {first}")


def _differs(lv: bp.Level, other: bp.Level) -> bool:
    """Whether `other` gets at least one of `lv`'s inputs wrong (so using it is really a mistake)."""
    for text in lv.inputs:
        try:
            if repr(other.run(text)) != repr(lv.run(text)):
                return True
        except Exception:
            return True
    return False


def _abduction(lv: bp.Level, family: str, level: int, text: str, correct: bool, draw) -> str:
    target = cues.abduction_target(text)
    hits = [x for x in lv.inputs if repr(lv.run(x)) == target]
    misses = [x for x in lv.inputs if repr(lv.run(x)) != target]
    if correct and hits:
        return block("input", hits[0])
    return block("input", pick(misses, *draw, "miss") if misses else "None")


def _deduction(lv: bp.Level, family: str, level: int, text: str, correct: bool, draw) -> str:
    args = cues.deduction_call(text)
    if args is None:
        return block("output", "None")
    value = lv.run(args)
    if correct:
        return block("output", repr(value))
    return block("output", repr(_perturb(value)))


def _perturb(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "?" if value else "?"
    if isinstance(value, list):
        return value[:-1] if value else [0]
    return None


def _fuzzing(lv: bp.Level, family: str, level: int, text: str, correct: bool, draw) -> str:
    problem = bp.build(family, level, "fuzzing", int(unit(*draw, "variant") * 6))
    if correct:
        return block("input", problem.bug_input or "None")
    return block("input", pick(problem.normal_inputs, *draw, "normal"))
