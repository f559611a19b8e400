"""One scripted answer: the record every responder returns and the server turns into a chat choice."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ScriptedReply:
    """One choice of a chat completion: the visible answer and the reasoning text."""

    content: str
    reasoning: str = ""
