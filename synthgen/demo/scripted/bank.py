"""The scripted brain: plays teacher and student for the four environments, from a fixed bank.

This is NOT a model. It reads the prompts from the templates' own prose (synthgen.demo.scripted.cues)
and answers from the bank in synthgen.demo.scripted.bank_problems (12 families x 5 levels). The
teacher picks a family by a hash of the seed snippet and moves its level by the strategy (STEPS);
about 10% of its answers carry one deliberate flaw so that every rejection path gets exercised.
The student answers correctly with the level's solve probability (solve_probability), otherwise
wrongly, and now and then unreadably.

Every choice is a function of (seed, rng_seed, prompt, sample index) through SHA-256, so the same
request gives the same replies in any process. Gold values come from calling the bank's own
Python functions in this process; model-written code is never run here.
"""

from __future__ import annotations

import re

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted import cues
from synthgen.demo.scripted.faults import pick, unit
from synthgen.demo.scripted.responder import ScriptedReply

FLAW_RATE = 0.10
UNREADABLE_RATE = 0.03
# Level steps per strategy; anything easier goes down one level (the bank has five).
STEPS = {"harder": 1, "similar": 0, "somewhat-easier": -1, "easier": -1, "chain-medium": -1, "chain-easy": -1}
UNRECOGNISED = "I can only answer the synthgen prompt templates (this prompt is not one of them)."


# The learning curve: with `gain` levels per 100 steps, a request for policy step t is answered as if its problem
# were at level L - gain * t / 100, the probability read off (level, solve probability), the bank's table with the
# two ends the interpolation needs (1.0 below level 0, 0.0 above level 5). At step 0, or gain 0, it is the table.
_POINTS = [(0.0, 1.0)] + [(float(i + 1), p) for i, p in enumerate(bp.SOLVE_PROBABILITY)] + [(6.0, 0.0)]


def solve_probability(level: int, step: float = 0.0, gain: float = 0.0) -> float:
    """How often the scripted policy at `step` solves a level-`level` bank problem."""
    x = level - gain * float(step or 0) / 100.0
    if x <= _POINTS[0][0]:
        return _POINTS[0][1]
    for (x0, p0), (x1, p1) in zip(_POINTS, _POINTS[1:]):
        if x == x1:  # on a level: the table's own number, no rounding
            return p1
        if x < x1:
            return p0 + (p1 - p0) * (x - x0) / (x1 - x0)
    return 0.0


class BankResponder:
    """`respond(messages, n, rng_seed, params)` -> n ScriptedReply, as synthgen.demo.scripted.responder expects."""

    seeded_per_sample = True  # a seeded sample is answered alike whether asked alone or in an n-request

    def __init__(self, seed: int = 0, learning_curve: float = 0.0, strength: float = 0.0):
        # strength: how many levels easier every problem is for this student (negative: harder).
        self.seed, self.learning_curve, self.strength = seed, learning_curve, strength

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list[ScriptedReply]:
        text = cues.prompt_text(messages)
        found = cues.read(text)
        if found.env is None or found.task is None:
            return [ScriptedReply(UNRECOGNISED, "unrecognised prompt") for _ in range(n)]
        draws = [(self.seed, rng_seed, text, i) for i in range(n)]
        if found.task == "solve":
            return [self._student(found.env, text, draw, params.get("policy_step")) for draw in draws]
        return [self._teacher(found.env, text, draw) for draw in draws]

    # -- teacher ---------------------------------------------------------------------------
    def choose(self, text: str) -> tuple[str, int, int, str]:
        """(family, level, variant, how) of the next problem for a teacher prompt."""
        names = bp.FAMILY_ORDER
        found = cues.read(text)
        if found.task == "first":
            snippet = cues.snippet(text) or text
            return pick(names, self.seed, "family", snippet), 1 + int(unit(self.seed, "level", snippet) * 2), 0, "first"
        strategy = found.strategy or "similar"
        previous = self.previous(text)
        if previous is None:
            return pick(names, self.seed, "unknown", text), 2, int(unit(self.seed, "v", text) * 6), "unknown"
        family, level = previous
        new_level = min(bp.LEVELS, max(1, level + STEPS[strategy]))
        variant = 1 + int(unit(self.seed, "variant", text) * 5) if new_level == level else 0
        return family, new_level, variant, strategy

    def previous(self, text: str) -> tuple[str, int] | None:
        """The bank problem shown as the previous puzzle (by its code, else by its message)."""
        key = bp.code_key(cues.previous_code(text) or "")
        if key and key in bp.code_index():
            return bp.code_index()[key]
        region = cues.previous_region(text)
        for message, found in bp.message_index().items():
            if message in region:
                return found
        return None

    def _teacher(self, env: str, text: str, draw) -> ScriptedReply:
        family, level, variant, how = self.choose(text)
        problem = bp.build(family, level, env, variant)
        flaw = None
        if unit(*draw, "flaw") < FLAW_RATE:
            kinds = ["format", "execution", "forbidden", "syntax", "nondeterministic"]
            if env == "induction":
                kinds.append("trivial")
            flaw = pick(kinds, *draw, "kind")
        return ScriptedReply(*teacher_reply(problem, how, flaw, draw))

    # -- student ---------------------------------------------------------------------------
    def _student(self, env: str, text: str, draw, policy_step=None) -> ScriptedReply:
        found = bp.recognise(env, cues.first_code(text), cues.induction_hint(text))
        u = unit(*draw, "solve")
        if found is None:
            outcome = "unknown"
        else:
            # A request from online training names the policy's step: the curve moves the level.
            step = policy_step if isinstance(policy_step, (int, float)) and self.learning_curve else 0
            p = solve_probability(found[1] - self.strength, step, self.learning_curve)
            outcome = "correct" if u < p else ("unreadable" if u > 1 - UNREADABLE_RATE else "wrong")
        return ScriptedReply(*student_reply(env, text, found, outcome, draw))


# -- the words: fenced blocks in some prose, in a few formatting styles the parsers must cope with
# (plain, `<answer>` tags, Windows line endings, a leaked `<think>` draft), and a short reasoning text
FENCE = "```"
STYLES = ("plain", "plain", "answer_tags", "crlf", "think_leak")


def block(lang: str, body: str) -> str:
    return f"{FENCE}{lang}\n{body.strip(chr(10))}\n{FENCE}"


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
