"""The scripted brain: plays teacher and student for the four environments, from a fixed bank.

This is NOT a model. It reads the marker lines our own templates put at the top of every prompt
(`Environment:`, `Task:`, `Strategy:`; see synthgen.envs.prompts) and answers from the bank in
synthgen.scripted.bank_problems (12 families x 5 levels):

  teacher  first turn: a family chosen by a hash of the seed snippet, level 1 or 2;
           mutate: the previous problem is recognised by its code; harder -> level + 1,
           easier -> level - 1, similar -> same level, another variant; chain -> level - 1.
           About 10% of teacher answers carry one deliberate flaw (bad format, an input that
           crashes, a forbidden import, a trivial or nondeterministic function, a syntax error)
           so that every rejection path of the pipeline gets exercised.
  student  recognises the problem (by its code, or for induction by its hint) and answers
           correctly with the level's solve probability (0.97, 0.86, 0.5, 0.11, 0.0), otherwise
           with a plausible wrong answer, and now and then with an unreadable one.

Every choice is a function of (seed, rng_seed, prompt, sample index) through SHA-256, so the same
request gives the same replies in any process. Gold values come from calling the bank's own
Python functions in this process; model-written code is never run here.
"""

from __future__ import annotations

import hashlib
import re

from synthgen.scripted import bank_problems as bp
from synthgen.scripted.bank_text import student_reply, teacher_reply

try:
    from synthgen.scripted.responder import ScriptedReply
except ImportError:  # pragma: no cover - the responder module ships alongside; keep a twin for safety
    from dataclasses import dataclass

    @dataclass
    class ScriptedReply:  # type: ignore[no-redef]
        content: str
        reasoning: str = ""

FLAW_RATE = 0.10
UNREADABLE_RATE = 0.03
ENVS = ("induction", "abduction", "deduction", "fuzzing")


def unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from the parts (SHA-256; independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick(seq, *parts: object):
    return seq[int(unit(*parts) * len(seq))]


def marker(text: str, name: str) -> str | None:
    m = re.search(rf"^{name}:[ \t]*(\w+)[ \t]*$", text, re.M)
    return m.group(1) if m else None


def prompt_text(messages: list[dict]) -> str:
    parts = []
    for message in messages:
        content = message.get("content", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


class BankResponder:
    """`respond(messages, n, rng_seed, params)` -> n ScriptedReply, as synthgen.scripted.responder expects."""

    def __init__(self, seed: int = 0):
        self.seed = seed

    def respond(self, messages: list[dict], n: int, rng_seed: int, params: dict) -> list[ScriptedReply]:
        text = prompt_text(messages)
        env = marker(text, "Environment")
        task = marker(text, "Task")
        if env not in ENVS or task not in ("first", "mutate", "chain", "solve"):
            return [ScriptedReply("I can only answer the synthgen prompt templates (no Environment/Task lines found).",
                                  "unrecognised prompt") for _ in range(n)]
        replies = []
        for i in range(n):
            draw = (self.seed, rng_seed, text, i)
            if task == "solve":
                replies.append(self._student(env, text, draw))
            else:
                replies.append(self._teacher(env, task, text, draw))
        return replies

    # -- teacher ---------------------------------------------------------------------------
    def choose(self, env: str, task: str, text: str) -> tuple[str, int, int, str]:
        """(family, level, variant, how) of the next problem for a teacher prompt."""
        names = bp.family_names()
        if task == "first":
            snippet = _between(text, "----- BEGIN SNIPPET -----", "----- END SNIPPET -----") or text
            return pick(names, self.seed, "family", snippet), 1 + int(unit(self.seed, "level", snippet) * 2), 0, "first"
        found = self.previous(text)
        strategy = "easier" if task == "chain" else (marker(text, "Strategy") or "similar")
        if found is None:
            return pick(names, self.seed, "unknown", text), 2, int(unit(self.seed, "v", text) * 6), "unknown"
        family, level = found
        step = {"harder": 1, "easier": -1}.get(strategy, 0)
        new_level = min(bp.LEVELS, max(1, level + step))
        variant = 1 + int(unit(self.seed, "variant", text) * 5) if new_level == level else 0
        return family, new_level, variant, strategy

    def previous(self, text: str) -> tuple[str, int] | None:
        """The bank problem shown as "Your previous problem" (by its code, else by its message)."""
        region = text.split("Your previous problem:", 1)[-1]
        for code in re.findall(r"```python\n(.*?)\n```", region, re.S):
            key = bp.code_key(code)
            if key and key in bp.code_index():
                return bp.code_index()[key]
        for message, found in bp.message_index().items():
            if message in region:
                return found
        return None

    def _teacher(self, env: str, task: str, text: str, draw) -> ScriptedReply:
        family, level, variant, how = self.choose(env, task, text)
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
    def _student(self, env: str, text: str, draw) -> ScriptedReply:
        found = self.identify(env, text)
        u = unit(*draw, "solve")
        if found is None:
            outcome = "unknown"
        else:
            p = bp.SOLVE_PROBABILITY[found[1] - 1]
            outcome = "correct" if u < p else ("unreadable" if u > 1 - UNREADABLE_RATE else "wrong")
        content, reasoning = student_reply(env, text, found, outcome, draw)
        return ScriptedReply(content, reasoning)

    def identify(self, env: str, text: str) -> tuple[str, int] | None:
        if env == "induction":
            hint = _between(text, "Hint from the problem's author:\n", "\n\nExamples:")
            return bp.message_index().get((hint or "").strip())
        match = re.search(r"```python\n(.*?)\n```", text, re.S)
        if not match:
            return None
        return bp.code_index().get(bp.code_key(match.group(1)) or "")


def _between(text: str, start: str, end: str) -> str | None:
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    return text[i + len(start): j if j >= 0 else len(text)]
