"""Eval test fixtures: a stand-in server whose answers a test chooses (helpers in eval_helpers.py)."""

from __future__ import annotations

import pytest

from tests.helpers.evals import ChoiceResponder


@pytest.fixture
def stand_in(serve):
    """Start a stand-in server with an answer rule; returns its /v1 URL."""

    def start(answer) -> str:
        return serve(ChoiceResponder(answer), models=["stand-in"]).url

    return start
