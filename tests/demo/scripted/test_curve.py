"""The scripted student's learning curve: a request's `policy_step` makes every bank problem easier. NOT a model."""

from __future__ import annotations

import pytest

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted.bank import BankResponder, solve_probability
from synthgen.envs import get_env
from synthgen.envs.problem import Problem
from tests.helpers.curve import CurveScorer, bank_level


def test_the_curve_is_the_bank_table_at_step_0_and_rises_with_the_step():
    assert [solve_probability(level) for level in range(1, 6)] == list(bp.SOLVE_PROBABILITY)
    assert [solve_probability(level, 500, 0.0) for level in range(1, 6)] == list(bp.SOLVE_PROBABILITY)
    assert solve_probability(3, 50, 2.0) == pytest.approx(0.86)  # one level easier after 50 steps
    assert solve_probability(4, 25, 2.0) == pytest.approx((0.5 + 0.11) / 2)  # half a level: interpolated
    assert solve_probability(5, 10_000, 1.0) == 1.0 and solve_probability(5, 0, 1.0) == 0.0
    values = [solve_probability(4, step, 1.0) for step in range(0, 400, 20)]
    assert values == sorted(values)


def problem(family: str, level: int) -> Problem:
    from synthgen.sandbox.values import encode

    p = bp.build(family, level, "deduction", 0)
    return Problem("deduction", p.code, p.inputs, outputs=[encode(bp.level_of(family, level).run(x)) for x in p.inputs])


async def test_the_bank_student_answers_as_the_policy_at_the_requested_step(pool):
    from synthgen.sandbox.settings import SandboxSettings

    env, prob = get_env("deduction"), problem("digits", 3)
    messages = env.student_messages(prob)
    responder = BankResponder(0, learning_curve=10.0)
    rates = {}
    for params in ({}, {"policy_step": 0}, {"policy_step": 30}):
        replies = responder.respond(messages, 32, 7, params)
        rewards = await env.rewards(prob, [r.content for r in replies], pool, SandboxSettings())
        rates[params.get("policy_step")] = sum(r.value for r in rewards) / len(rewards)
    assert rates[None] == rates[0] and 0.2 < rates[0] < 0.8  # level 3: the bank's 0.5
    assert rates[30] == 1.0  # 3 levels easier: solved every time
    assert BankResponder(0).respond(messages, 4, 7, {"policy_step": 30}) == responder.respond(messages, 4, 7, {})


def test_curve_scorer_scores_groups_by_level_and_step():
    scorer = CurveScorer(gain=10.0, group_size=4)
    easy, hard = problem("digits", 1), problem("runs", 5)
    rows = [{**easy.to_fields(), "problem_id": "e"}] * 4 + [{**hard.to_fields(), "problem_id": "h"}] * 4
    assert bank_level(rows[0]) == 1 and bank_level(rows[4]) == 5
    assert scorer(rows, [""] * 8, [False] * 8)[4:] == [0.0] * 4  # level 5 at step 0: never
    scorer.step = 100  # ten levels later: everything is solved
    assert scorer(rows, [""] * 8, [False] * 8) == [1.0] * 8
    assert [(s, p, lv) for s, p, lv, _ in scorer.groups] == [(0, "e", 1), (0, "h", 5), (100, "e", 1), (100, "h", 5)]
