"""One teacher request, end to end: the paper's multi-turn loop with the policy as student, SvS's band as the gate.

`JobMaker` resolves a queued request into a `TeacherJob` with everything it needs (environment,
SCALER's target slice, the seed snippet or the parent problem and the policy's summary on it). It
runs in the training process's main thread at a step boundary, seeded by the request id (a
resumed run makes the same choices), so the worker never reads the live buffer: it can run
beside training in another thread.

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
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from synthgen.envs import get_env
from synthgen.envs.problem import Problem
from synthgen.envs.settings import ProgressionSettings
from synthgen.envs.summary import Summary, choose_strategy
from synthgen.online.requests import EXPLORE, OnlineRequest
from synthgen.turns.turn import Lineage, Mode, TurnRunner

ACCEPTED, TOO_EASY, TOO_HARD, INVALID, INFRA = "accepted", "too_easy", "too_hard", "invalid", "infra"


@dataclass
class TeacherJob:
    request: OnlineRequest
    env: str
    band: tuple[float, float]  # the pass-rate slice the teacher aims at (SCALER level)
    lineage_id: str
    seed_id: str
    seed_text: str | None = None  # explore
    parent: Problem | None = None  # mutate, respawn
    summary: Summary | None = None  # the policy's results on the parent
    policy_step: int = 0


@dataclass
class JobOutcome:
    job: TeacherJob
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


EXAMPLES_SHOWN = 2  # solved and failed answers each, as the paper's summary shows


def policy_summary(window: list[tuple[int, int]], attempts: list[tuple[str, Any]]) -> Summary:
    """What the teacher learns about the policy on a pool problem: its windowed training pass rate
    and the newest group's answers (shortest distinct solved and failed ones)."""
    scored = sum(n for _, n in window)
    correct = sum(s for s, _ in window)

    def shortest(texts: list[str]) -> list[str]:
        unique = list(dict.fromkeys(t.strip() for t in texts if t and t.strip()))
        return sorted(unique, key=lambda t: (len(t), t))[:EXAMPLES_SHOWN]

    return Summary(
        pass_rate=correct / scored if scored else None,
        attempts=scored,
        scored=scored,
        correct=correct,
        format_failures=0,
        infra_failures=0,
        solved=shortest([t for t, r in attempts if r is not None and float(r) >= 0.5]),
        failed=shortest([t for t, r in attempts if r is not None and float(r) < 0.5]),
    )


class JobMaker:
    """Resolves requests against the pool (`pool` is a synthgen.online.pool.OnlinePool)."""

    def __init__(self, pool, seed: int):
        self.pool, self.seed = pool, seed

    def make(
        self, requests: list[OnlineRequest], policy_step: int
    ) -> tuple[list[TeacherJob], list[tuple[OnlineRequest, str]]]:
        """(jobs, skipped requests with the reason) for the requests the budget took; `policy_step`
        names the weights that will answer as the student."""
        pool, active = self.pool, self.pool.curation.active_envs()
        wanted = [e for e in sorted(pool.envs) if e in active]
        jobs_by_env: dict[str, list[OnlineRequest]] = defaultdict(list)
        skipped: list[tuple[OnlineRequest, str]] = []
        for req in requests:
            rng = random.Random(f"{self.seed}:request:{req.request_id}")
            if req.kind == EXPLORE:
                if not pool.seeds:
                    skipped.append((req, "no seeds to explore from"))
                    continue
                req.env = req.env or rng.choice(wanted)
                req.seed_id = req.seed_id or rng.choice(sorted(pool.seeds))
            elif req.env not in active:
                skipped.append((req, f"environment {req.env} is retired by the controller"))
                continue
            jobs_by_env[req.env].append(req)
        jobs = []
        for env, reqs in jobs_by_env.items():
            # SCALER's realisation of the real d over this batch of the environment's requests.
            for req, level in zip(reqs, pool.curation.levels(env, len(reqs))):
                req.level = level if req.level is None else req.level
                jobs.append(self._job(req, policy_step))
        order = {r.request_id: i for i, r in enumerate(requests)}
        return sorted(jobs, key=lambda j: order[j.request.request_id]), skipped

    def _job(self, req: OnlineRequest, policy_step: int) -> TeacherJob:
        pool = self.pool
        band = pool.curation.band(req.level, pool.accept.low, pool.accept.high)
        if req.kind == EXPLORE:
            return TeacherJob(
                req,
                req.env,
                band,
                f"online:{req.request_id}",
                req.seed_id,
                pool.seeds[req.seed_id],
                policy_step=policy_step,
            )
        row, entry = pool.problem_rows[req.parent], pool.buffer.entries[req.parent]
        summary = retarget(policy_summary(list(entry.window), entry.attempts), band)
        return TeacherJob(
            req,
            req.env,
            band,
            row["lineage_id"],
            row.get("seed_id") or "data",
            parent=Problem.from_fields(row),
            summary=summary,
            policy_step=policy_step,
        )


class OnlineWorker:
    """Runs jobs with one TurnRunner (its llm is a synthgen.online.student.PolicyLLM)."""

    def __init__(self, runner: TurnRunner, accept):
        self.runner, self.accept = runner, accept

    async def run_many(self, jobs: list[TeacherJob]) -> list[JobOutcome]:
        return list(await asyncio.gather(*(self.run(job) for job in jobs)))

    async def run(self, job: TeacherJob) -> JobOutcome:
        # The policy the student requests name (jobs running at once share one step: the newest).
        self.runner.llm.student.policy_step = job.policy_step
        lineage = Lineage(
            job.lineage_id,
            job.seed_id,
            get_env(job.env),
            Mode.ONLINE,
            seed_text=job.seed_text,
            previous=job.parent,
            summary=job.summary,
        )
        turns: list[dict[str, Any]] = []
        last_rate: float | None = None
        for turn in range(1, self.accept.max_turns + 1):
            outcome = await self.runner.run(lineage.request(turn, key=job.request.request_id))
            if not outcome.finished:
                return JobOutcome(job, INFRA, turns=turns, detail=outcome.infra)
            row = {**outcome.row, **self._columns(job)}
            turns.append(row)
            if outcome.problem is None or outcome.summary is None:
                lineage.absorb(outcome)
                row["decision"] = INVALID
                continue
            rate = last_rate = outcome.summary.pass_rate
            if rate is not None and self.accept.low <= rate <= self.accept.high:
                row["decision"] = ACCEPTED
                return JobOutcome(job, ACCEPTED, row, turns, rate)
            row["decision"] = TOO_EASY if rate is not None and rate > self.accept.high else TOO_HARD
            lineage.absorb(outcome, retarget(outcome.summary, job.band))
        status = INVALID if last_rate is None else (TOO_EASY if last_rate > self.accept.high else TOO_HARD)
        return JobOutcome(job, status, None, turns, last_rate)

    @staticmethod
    def _columns(job: TeacherJob) -> dict[str, Any]:
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
