"""The scripted brain: plays teacher and student for the four environments, from a fixed bank.

This is NOT a model. It reads the prompts the way a reader would, from the templates' own prose
(which kind of puzzle, which task, which strategy, the previous puzzle's code: see
synthgen.demo.scripted.cues) and answers from the bank in synthgen.demo.scripted.bank_problems
(12 families x 5 levels):

  teacher  first turn: a family chosen by a hash of the seed snippet, level 1 or 2;
           mutate: the previous problem is recognised by its code; harder -> level + 1,
           easier and somewhat-easier -> level - 1, similar -> same level, another variant;
           chain (chain-medium, chain-easy) -> level - 1.
           About 10% of teacher answers carry one deliberate flaw (bad format, an input that
           crashes, a forbidden import, a trivial or nondeterministic function, a syntax error)
           so that every rejection path of the pipeline gets exercised.
  student  recognises the problem (by its code, or for induction by its hint) and answers
           correctly with the level's solve probability (0.97, 0.86, 0.5, 0.11, 0.0; with a learning
           curve, the probability at the request's `policy_step`: synthgen.demo.scripted.curve), otherwise
           with a plausible wrong answer, and now and then with an unreadable one.

Every choice is a function of (seed, rng_seed, prompt, sample index) through SHA-256, so the same
request gives the same replies in any process. Gold values come from calling the bank's own
Python functions in this process; model-written code is never run here.
"""

from __future__ import annotations

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted import cues
from synthgen.demo.scripted.bank_text import student_reply, teacher_reply
from synthgen.demo.scripted.curve import solve_probability
from synthgen.demo.scripted.faults import pick, unit
from synthgen.demo.scripted.responder import ScriptedReply

FLAW_RATE = 0.10
UNREADABLE_RATE = 0.03
ENVS = cues.ENVS
# Level steps per strategy; anything easier goes down one level (the bank has five).
STEPS = {"harder": 1, "similar": 0, "somewhat-easier": -1, "easier": -1, "chain-medium": -1, "chain-easy": -1}
UNRECOGNISED = "I can only answer the synthgen prompt templates (this prompt is not one of them)."


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
        replies = []
        for i in range(n):
            draw = (self.seed, rng_seed, text, i)
            if found.task == "solve":
                replies.append(self._student(found.env, text, draw, params.get("policy_step")))
            else:
                replies.append(self._teacher(found.env, text, draw))
        return replies

    # -- teacher ---------------------------------------------------------------------------
    def choose(self, text: str) -> tuple[str, int, int, str]:
        """(family, level, variant, how) of the next problem for a teacher prompt."""
        names = bp.family_names()
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
        content, reasoning = teacher_reply(problem, how, flaw, draw)
        return ScriptedReply(content, reasoning)

    # -- student ---------------------------------------------------------------------------
    def _student(self, env: str, text: str, draw, policy_step=None) -> ScriptedReply:
        found = self.identify(env, text)
        u = unit(*draw, "solve")
        if found is None:
            outcome = "unknown"
        else:
            # A request from online training names the policy's step: the curve moves the level.
            step = policy_step if isinstance(policy_step, (int, float)) and self.learning_curve else 0
            p = solve_probability(found[1] - self.strength, step, self.learning_curve)
            outcome = "correct" if u < p else ("unreadable" if u > 1 - UNREADABLE_RATE else "wrong")
        content, reasoning = student_reply(env, text, found, outcome, draw)
        return ScriptedReply(content, reasoning)

    def identify(self, env: str, text: str) -> tuple[str, int] | None:
        if env == "induction":
            return bp.message_index().get((cues.induction_hint(text) or "").strip())
        return bp.code_index().get(bp.code_key(cues.first_code(text) or "") or "")
