"""What the scripted brain reads from a prompt: the templates' own prose, nothing added for it.

The real prompts (prompts/*.j2) carry no machine markers. The brain recognises them the way a
reader would: the teacher prompt says which kind of puzzle it is ("This is a deduction
puzzle"), a first turn quotes a snippet between BEGIN/END SNIPPET lines, a later turn shows the
previous puzzle's code under "## Your previous puzzle" and opens its strategy with one
instruction sentence ("Make the next puzzle harder."); each student prompt has its own opening
request ("Predict the exact value this call returns"). tests/demo/scripted/test_bank.py renders every
template and checks that these cues still read back, so a template edit that breaks them fails
loudly there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from synthgen.demo.scripted.responder import content_text

ENVS = ("induction", "abduction", "deduction", "fuzzing")

# The sentence each student template opens its request with.
STUDENT_CUES = {
    "induction": "Work out the Python function `f` that produced the examples below",
    "abduction": "Find arguments for which `f` returns exactly this value",
    "deduction": "Predict the exact value this call returns",
    "fuzzing": "Find a valid input that exposes the bug",
}
# The instruction sentence that opens each progression strategy (prompts/_shared/strategy.j2).
STRATEGY_CUES = {
    "harder": "Make the next puzzle harder.",
    "easier": "Make the next puzzle easier.",
    "somewhat-easier": "Make the next puzzle somewhat easier.",
    "similar": "Keep the level: write a new variant",
    "chain-medium": "Turn this hard puzzle into a medium one",
    "chain-easy": "Turn this medium puzzle into an easy one",
}
CHAIN_STRATEGIES = ("chain-medium", "chain-easy")
SNIPPET_START, SNIPPET_END = "----- BEGIN SNIPPET -----", "----- END SNIPPET -----"
PREVIOUS_HEADING = "## Your previous puzzle"
_TEACHER_ENV = re.compile(r"^This is an? (\w+) puzzle\b", re.M)
_PYTHON_BLOCK = re.compile(r"```python\n(.*?)\n```", re.S)


@dataclass(frozen=True)
class Cues:
    env: str | None
    task: str | None  # first | mutate | chain | solve; None when the prompt is not one of ours
    strategy: str | None = None  # mutate and chain only


def prompt_text(messages: list[dict]) -> str:
    return "\n".join(content_text(m) for m in messages)


def read(text: str) -> Cues:
    """Which environment, which task and which strategy a prompt asks for."""
    match = _TEACHER_ENV.search(text)
    if match and match.group(1) in ENVS:
        env = match.group(1)
        if snippet(text) is not None:
            return Cues(env, "first")
        strategy = strategy_of(text)
        if strategy is None:
            return Cues(env, None)
        return Cues(env, "chain" if strategy in CHAIN_STRATEGIES else "mutate", strategy)
    for env, cue in STUDENT_CUES.items():
        if cue in text:
            return Cues(env, "solve")
    return Cues(None, None)


def strategy_of(text: str) -> str | None:
    found = [(text.find(cue), name) for name, cue in STRATEGY_CUES.items() if cue in text]
    return min(found)[1] if found else None


def snippet(text: str) -> str | None:
    return between(text, SNIPPET_START, SNIPPET_END)


def previous_code(text: str) -> str | None:
    """The code block under the previous-puzzle heading (the first one after it)."""
    start = text.find(PREVIOUS_HEADING)
    return None if start < 0 else first_code(text, start)


def previous_region(text: str) -> str:
    """The previous puzzle's section (code, message and pairs), up to the next heading."""
    return between(text, PREVIOUS_HEADING, "\n## ") or ""


def first_code(text: str, start: int = 0) -> str | None:
    """The first ```python block from `start` (a student prompt shows the problem's code first)."""
    match = _PYTHON_BLOCK.search(text, start)
    return match.group(1) if match else None


# -- what the student prompts show --------------------------------------------------------------
def induction_hint(text: str) -> str | None:
    return between(text, "Hint from the problem's author:\n", "\n\nExamples:")


def induction_pairs(text: str) -> list[tuple[str, str]]:
    """The visible (arguments, output) pairs of an induction student prompt."""
    return re.findall(r"^- f\((.*)\) returns (.*)$", text, re.M)


def abduction_target(text: str) -> str:
    """The output an abduction student prompt asks an input for (its repr)."""
    m = re.search(re.escape(STUDENT_CUES["abduction"]) + r":\n(.*?)\n\n", text, re.S)
    return m.group(1).strip() if m else ""


def deduction_call(text: str) -> str | None:
    """The arguments of the call a deduction student prompt asks about."""
    m = re.search(re.escape(STUDENT_CUES["deduction"]) + r":\nf\((.*)\)\n", text)
    return m.group(1) if m else None


def between(text: str, start: str, end: str) -> str | None:
    i = text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    return text[i + len(start) : j if j >= 0 else len(text)]
