"""The worker: the paper's multi-turn loop with the policy as student and SvS's band as the gate (no training)."""

from __future__ import annotations

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted.bank import solve_probability
from synthgen.envs.problem import Problem
from synthgen.llm.client import LLMClient
from synthgen.llm.settings import RoleSettings, StudentSettings, TeacherSettings
from synthgen.online.settings import AcceptSettings, LLMSettings
from synthgen.online.student import PolicyLLM, ServerStudent
from synthgen.online.worker import (
    ACCEPTED,
    EXPLORE,
    MUTATE,
    TOO_EASY,
    TOO_HARD,
    OnlineRequest,
    OnlineWorker,
    TeacherJob,
    policy_summary,
)
from synthgen.turns.settings import TurnLoopSettings
from synthgen.turns.turn import TurnRunner
from tests.helpers.curve import bank_level

SNIPPET = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"


def make_worker(url: str, pool, accept: AcceptSettings) -> OnlineWorker:
    teacher = TeacherSettings(base_url=url)
    student = RoleSettings(base_url=url, reasoning_effort=None, max_tokens=4096)
    llm = PolicyLLM(LLMClient(teacher, teacher, LLMSettings()), ServerStudent(student, LLMSettings(), max_in_flight=8))
    settings = TurnLoopSettings(attempts=accept.attempts, teacher=teacher, student=StudentSettings(model="policy"))
    return OnlineWorker(TurnRunner(llm, pool, settings, "test"), accept)


def bank_problem(family: str, level: int) -> Problem:
    from synthgen.sandbox.values import encode

    p = bp.build(family, level, "deduction", 0)
    outputs = [encode(bp.level_of(family, level).run(x)) for x in p.inputs]
    return Problem("deduction", p.code, p.inputs, outputs=outputs)


async def test_an_exploration_runs_the_paper_loop_until_the_policy_lands_in_the_band(curve_server, pool):
    accept = AcceptSettings(attempts=8, max_turns=4)
    worker = make_worker(curve_server.url, pool, accept)
    outs = []
    for i in range(4):
        job = TeacherJob(
            OnlineRequest(f"e{i}", EXPLORE, 0, env="deduction"),
            (0.125, 0.625),
            f"l{i}",
            "s",
            seed_text=SNIPPET + f"# {i}\n",
        )
        outs.append(await worker.run(job))
    await worker.runner.llm.aclose()
    assert any(o.status == ACCEPTED for o in outs)
    for out in outs:
        assert out.turns and all(t["request_id"] == out.job.request.request_id for t in out.turns)
        for before, after in zip(out.turns, out.turns[1:]):
            # Each next turn's strategy follows the policy's pass rate on the previous problem.
            p = before["pass_rate"]
            expected = "easier" if p == 0 else ("harder" if p > 0.625 else "somewhat-easier")
            assert after["strategy"] == expected and after["parent_id"] == before["problem_id"]
        if out.status == ACCEPTED:
            assert 0.125 <= out.pass_rate <= 0.625 and out.turns[-1]["decision"] == ACCEPTED
            assert out.row["problem_id"] == out.turns[-1]["problem_id"]
        else:
            assert out.status in (TOO_EASY, TOO_HARD, "invalid") and len(out.turns) == accept.max_turns


async def test_a_mastered_parent_is_mutated_harder_and_the_student_follows_the_policy_step(curve_server, pool):
    accept = AcceptSettings(attempts=8, max_turns=1)
    worker = make_worker(curve_server.url, pool, accept)
    parent = bank_problem("digits", 2)
    summary = policy_summary([(16, 16)], [("42", 1.0)], (0.125, 0.625))
    assert summary.strategy == "harder"
    results = {}
    for step in (0, 30):  # the curve: 10 levels per 100 steps, so level 3 reads as level 0 at step 30
        # (The scripted teacher's deliberate flaws, one answer in ten, are drawn from the request's
        # per-sample seed: these request ids draw a clean answer at both steps.)
        job = TeacherJob(
            OnlineRequest(f"mut{step}", MUTATE, 0, env="deduction", parent=0),
            (0.125, 0.625),
            "bank-digits",
            "bank",
            parent=parent,
            summary=summary,
            policy_step=step,
        )
        results[step] = await worker.run(job)
    await worker.runner.llm.aclose()
    for step, out in results.items():
        [turn] = out.turns
        assert turn["strategy"] == "harder" and turn["policy_step"] == step
        assert bank_level(turn) == 3, turn["reason"]  # the scripted teacher made the level-2 problem one level harder
    assert solve_probability(3, 30, 10.0) == 1.0
    assert results[30].turns[0]["pass_rate"] == 1.0
    assert results[30].status == TOO_EASY
    assert results[0].turns[0]["pass_rate"] < 1.0
