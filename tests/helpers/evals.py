"""Helpers the eval tests share (imported by conftest.py and the test modules)."""

from __future__ import annotations

import json
from pathlib import Path

from synthgen.demo.scripted.responder import ScriptedReply, last_user_text


class ChoiceResponder:
    """Answers sample i of a request with `answer(prompt_text, i)` (a fixed rule: the test knows the truth)."""

    def __init__(self, answer):
        self.answer = answer

    def respond(self, messages, n, rng_seed, params):
        text = last_user_text(messages)
        return [ScriptedReply(content=self.answer(text, i), reasoning="") for i in range(n)]


def summary(out: Path) -> list[dict]:
    return json.loads((out / "summary.json").read_text())


def figure(rows, benchmark, split, k, tag=None):
    hits = [r for r in rows if r["benchmark"] == benchmark and r["split"] == split and r["k"] == k]
    hits = [r for r in hits if tag is None or r["tag"] == tag]
    assert len(hits) == 1, hits
    return hits[0]
