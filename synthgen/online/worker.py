"""One teacher request, end to end: the paper's multi-turn loop with the policy as student, SvS's band as the gate.

A `Job` is a request with everything it needs resolved beforehand (environment, SCALER's target
slice, the seed snippet or the parent problem and the policy's summary on it), so the worker
never reads the live buffer: it can run beside training in another thread.

The loop (synthgen.turns.turn.TurnRunner runs each turn: teacher answer, validation in the
sandbox, the policy's `attempts` answers, scoring):

    turn 1: from the seed (explore) or as a mutation of the parent (mutate, respawn)
    the policy's pass rate p in SvS's band [low, high]  -> accepted: the candidate joins the pool
    else, up to `max_turns`: the teacher mutates the candidate, told p and the strategy the paper's
    progression picks against the target slice (p = 0 -> easier, below -> somewhat easier,
    inside -> a variant at the same level, above -> harder)

A malformed or invalid answer is fed back in the next turn (as generate does). A turn that failed
on infrastructure ends the job as `infra` (the caller requeues it); nothing of it counts.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from synthgen.envs import get_env
from synthgen.envs.problem import Problem
from synthgen.envs.settings import ProgressionSettings
from synthgen.envs.summary import Summary, choose_strategy
from synthgen.online.requests import Request
from synthgen.stages.generate.run import feedback_of
from synthgen.turns.turn import TurnRequest, TurnRunner

ACCEPTED, TOO_EASY, TOO_HARD, INVALID, INFRA = "accepted", "too_easy", "too_hard", "invalid", "infra"


@dataclass
class Job:
    request: Request
    env: str
    band: tuple[float, float]  # the pass-rate slice the teacher aims at (SCALER level)
    lineage_id: str
    seed_id: str
    seed_text: str | None = None  # explore
    parent: Problem | None = None  # mutate, respawn
    summary: Summary | None = None  # the policy's results on the parent
    policy_step: int = 0


@dataclass
class Outcome:
    job: Job
    status: str  # accepted | too_easy | too_hard | invalid | infra
    row: dict[str, Any] | None = None  # the accepted turn's PROBLEMS row
    turns: list[dict[str, Any]] = field(default_factory=list)  # every finished turn, with the request's columns
    pass_rate: float | None = None  # of the accepted turn, else of the last evaluated one
    detail: str | None = None


def retarget(summary: Summary, band: tuple[float, float]) -> Summary:
    """The summary with the paper's strategy chosen against `band` (and the band the prompt names)."""
    low, high = band
    rule = ProgressionSettings(easier_at=0.0, target_low=low, target_high=high)
    return dataclasses.replace(
        summary, strategy=choose_strategy(summary.pass_rate, rule), target_low=low, target_high=high
    )


class Worker:
    """Runs jobs with one TurnRunner (its llm is a synthgen.online.student.PolicyLLM)."""

    def __init__(self, runner: TurnRunner, accept):
        self.runner, self.accept = runner, accept

    async def run_many(self, jobs: list[Job]) -> list[Outcome]:
        return list(await asyncio.gather(*(self.run(job) for job in jobs)))

    async def run(self, job: Job) -> Outcome:
        req, env = job.request, get_env(job.env)
        # The policy the student requests name (jobs running at once share one step: the newest).
        self.runner.llm.student.policy_step = job.policy_step
        previous, summary, feedback = job.parent, job.summary, None
        turns: list[dict[str, Any]] = []
        last_rate: float | None = None
        for turn in range(1, self.accept.max_turns + 1):
            first = previous is None
            kind, strategy = ("first", "first") if first else ("mutate", summary.strategy)
            turn_req = TurnRequest(
                job.lineage_id,
                job.seed_id,
                env,
                "online",
                turn,
                kind,
                strategy,
                seed_text=job.seed_text if first else None,
                previous=previous,
                summary=summary,
                feedback=feedback,
                key=req.request_id,
            )
            outcome = await self.runner.run(turn_req)
            if not outcome.finished:
                return Outcome(job, INFRA, turns=turns, detail=outcome.infra)
            row = {**outcome.row, **self._columns(job)}
            turns.append(row)
            if outcome.problem is None or outcome.summary is None:
                feedback = feedback_of(outcome.row)
                row["decision"] = INVALID
                continue
            rate = outcome.summary.pass_rate
            last_rate = rate
            if rate is not None and self.accept.low <= rate <= self.accept.high:
                row["decision"] = ACCEPTED
                return Outcome(job, ACCEPTED, row, turns, rate)
            row["decision"] = TOO_EASY if rate is not None and rate > self.accept.high else TOO_HARD
            previous, summary, feedback = outcome.problem, retarget(outcome.summary, job.band), None
        status = INVALID if last_rate is None else (TOO_EASY if last_rate > self.accept.high else TOO_HARD)
        return Outcome(job, status, None, turns, last_rate)

    @staticmethod
    def _columns(job: Job) -> dict[str, Any]:
        req = job.request
        return {
            "request_id": req.request_id,
            "request_kind": req.kind,
            "level": req.level,
            "band_low": job.band[0],
            "band_high": job.band[1],
            "policy_step": job.policy_step,
            "decision": None,
        }
