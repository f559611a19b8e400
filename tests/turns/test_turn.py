"""One teacher turn: infrastructure failures are no finished turn, rows say what the server served,
and the teacher prompt gets the feedback and target band of the turn where the environment takes them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from synthgen.demo.scripted.bank import BankResponder
from synthgen.envs import get_env
from synthgen.envs.deduction import Deduction
from synthgen.llm.client import Completion
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.turns.turn import Kind, Lineage, Mode, Strategy, TurnOutcome, TurnRequest, TurnRunner

SEED = "def total(values):\n    out = 0\n    for v in values:\n        out += v\n    return out\n"


@dataclass
class Served(Completion):
    model: str | None = None  # the model name the server reported (the client's Completion gains it)


class BankLLM:
    """The scripted bank answering in-process, like LLMClient.complete; a role can be made to fail."""

    def __init__(self, fail: dict[str, str] | None = None):
        self.bank, self.fail, self.prompts = BankResponder(0), fail or {}, []

    async def complete(self, role, messages, n=1, *, key="", priority=0.0):
        self.prompts.append((role, messages[-1]["content"]))
        if role in self.fail:
            return [Completion("infra", "", "", None, 0, 0, 0.0, error=self.fail[role]) for _ in range(n)]
        replies = self.bank.respond(messages, n, 0, {})
        # The client's account: a request's prompt tokens on its first sample, completion tokens on each.
        return [
            Served("ok", r.content, r.reasoning, "stop", 100 if i == 0 else 0, 7, 0.0, model="served-name")
            for i, r in enumerate(replies)
        ]


def _turn(pool, llm, env=None, **req):
    settings = GenerateSettings(attempts=4)
    runner = TurnRunner(llm, pool, settings, "hash")
    request = TurnRequest(
        lineage_id="lineage",
        seed_id="seed",
        env=env or get_env("deduction"),
        mode=Mode.MULTI,
        turn=1,
        kind=Kind.FIRST,
        strategy=Strategy.FIRST,
        seed_text=SEED,
        **req,
    )
    return asyncio.run(runner.run(request))


def test_a_finished_turn_records_the_served_model_tokens_and_examples(pool):
    outcome = _turn(pool, BankLLM())
    row = outcome.row
    assert outcome.finished and row["valid"], row.get("reason_detail")
    assert (row["teacher_model"], row["student_model"]) == ("served-name", "served-name")
    assert (row["student_tokens_in"], row["student_tokens_out"]) == (100, 4 * 7)  # prompt once, output per attempt
    assert row["solved_examples"] == outcome.summary.solved and row["failed_examples"] == outcome.summary.failed
    assert row["solved_examples"] or row["failed_examples"]


@pytest.mark.parametrize("role", ["teacher", "student"])
def test_an_infrastructure_failure_is_no_finished_turn(pool, role):
    outcome = _turn(pool, BankLLM(fail={role: "connection_refused: [Errno 111] Connection refused"}))
    assert not outcome.finished and outcome.infra == "connection_refused"
    assert outcome.summary is None and outcome.problem is None


class TakesFeedback(Deduction):
    """A deduction environment whose teacher prompt takes the newer keywords (and records them)."""

    seen: list[dict] = []

    def teacher_messages(
        self, kind, *, seed_text=None, previous=None, summary=None, feedback=None, target=None, strategy=None
    ):
        self.seen.append({"feedback": feedback, "target": target, "strategy": strategy})
        return super().teacher_messages(kind, seed_text=seed_text, previous=previous, summary=summary)


def test_feedback_and_target_reach_a_prompt_that_takes_them(pool):
    TakesFeedback.seen = []
    _turn(pool, BankLLM(), env=TakesFeedback(), feedback="format_error: no ```message block", target=(0.41, 0.59))
    assert TakesFeedback.seen == [
        {"feedback": "format_error: no ```message block", "target": (0.41, 0.59), "strategy": None}
    ]
    # The environments' own prompt takes them as well.
    assert _turn(pool, BankLLM(), feedback="format_error: x", target=(0.4, 0.6)).finished


def test_a_lineage_builds_on_its_last_valid_problem_and_feeds_back_what_was_wrong():
    lineage = Lineage("lin", "seed", get_env("deduction"), Mode.MULTI, seed_text=SEED)
    first = lineage.request(1, turns_left=3)
    assert (first.kind, first.strategy, first.feedback, first.priority) == (Kind.FIRST, "first", None, 6)
    assert not lineage.absorb(TurnOutcome({"reason": "format_error", "reason_detail": "no block"}))
    again = lineage.request(2)
    assert (again.kind, again.feedback, again.turn_id) == (Kind.FIRST, "format_error: no block", "lin:t2")
    problem, summary = object(), SimpleNamespace(strategy="harder")
    assert lineage.absorb(TurnOutcome({"reason": "ok"}, problem, summary))
    mutate = lineage.request(3, key="k")
    assert (mutate.kind, mutate.strategy, mutate.previous, mutate.summary) == (Kind.MUTATE, "harder", problem, summary)
    assert mutate.feedback is None and mutate.turn_id == "k:t3"
    assert str(mutate.mode) == f"{mutate.mode}" == "multi" and mutate.strategy == Strategy.HARDER


def test_a_chain_step_names_its_strategy_and_band():
    lineage = Lineage("lin", "seed", get_env("deduction"), Mode.CHAIN, previous=object(), summary=None)
    req = lineage.request(1, strategy=Strategy.CHAIN_EASY, target=(0.6, 0.8))
    assert (req.kind, req.strategy, req.target, req.mode) == ("chain", "chain-easy", (0.6, 0.8), "chain")
