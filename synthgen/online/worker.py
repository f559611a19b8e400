"""One teacher request, end to end: the paper's multi-turn loop with the policy as student, SvS's band as the gate.

Requests (explore: a fresh problem from a seed; mutate or respawn a pool problem) are made where
Frontier Learning decides (a drawn slot explores, a drawn problem mutates) and where a mastered
problem retires (respawn: a harder variant). They wait in a bounded queue, respawns first (each is a
retirement's one chance), then oldest first; past `max_pending` the oldest are dropped (and logged):
a request made many rounds ago describes a policy that has moved on.

`make_jobs` resolves requests into `TeacherJob`s with all they need (environment, SCALER's target
slice, the seed or the parent and the policy's summary on it) at a step boundary, seeded by the
request id (a resumed run makes the same choices), so the worker never reads the live buffer and
can run beside training. `OnlineWorker.run` is the loop (synthgen.turns.turn runs each turn): turn 1
from the seed (explore) or as a mutation of the parent; a policy pass rate p in SvS's band accepts
the candidate into the pool; else, up to `max_turns`, the teacher mutates it, told p and the
strategy the paper's progression picks against the target slice (p = 0 -> easier, below ->
somewhat easier, inside -> a variant at the same level, above -> harder). A malformed or invalid
answer is fed back in the next turn; a turn that failed on infrastructure ends the job as `infra`
(the caller requeues it), and nothing of it counts.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict, deque
from dataclasses import asdict, dataclass, field
from typing import Any

from synthgen.envs import get_env
from synthgen.envs.problem import Problem
from synthgen.envs.settings import ProgressionSettings
from synthgen.envs.summary import Summary, choose_strategy
from synthgen.envs.summary import _shortest_distinct as shortest_distinct
from synthgen.turns.turn import Lineage, Mode, TurnRunner

EXPLORE, MUTATE, RESPAWN = "explore", "mutate", "respawn"
KINDS = (EXPLORE, MUTATE, RESPAWN)


@dataclass
class OnlineRequest:
    request_id: str  # unique in a run; the teacher's request key (its cache key and sampling seed)
    kind: str  # explore | mutate | respawn
    round: int  # the round it was asked in
    env: str | None = None  # None for explore until the worker picks an active environment
    parent: int | None = None  # registry index of the problem to mutate (mutate, respawn)
    level: int | None = None  # SCALER level, set when the worker starts it
    seed_id: str | None = None  # explore: the seed snippet, set when the worker starts it


class RequestQueue:
    def __init__(self, max_pending: int):
        self.max_pending = max_pending
        self.respawns: deque[OnlineRequest] = deque()
        self.others: deque[OnlineRequest] = deque()

    def __len__(self) -> int:
        return len(self.respawns) + len(self.others)

    def push(self, req: OnlineRequest) -> list[OnlineRequest]:
        """Queue `req`; returns the requests dropped to stay within max_pending (oldest first)."""
        (self.respawns if req.kind == RESPAWN else self.others).append(req)
        dropped = []
        while len(self) > self.max_pending:
            lane = self.others if self.others else self.respawns
            dropped.append(lane.popleft())
        return dropped

    def push_front(self, reqs: list[OnlineRequest]) -> None:
        """Put requests back at the head of their lanes (retried after an infrastructure failure)."""
        for req in reversed(reqs):
            (self.respawns if req.kind == RESPAWN else self.others).appendleft(req)

    def take(self, n: int) -> list[OnlineRequest]:
        out = []
        while len(out) < n and (self.respawns or self.others):
            out.append((self.respawns or self.others).popleft())
        return out

    def state_dict(self) -> list[dict[str, Any]]:
        return [asdict(r) for r in (*self.respawns, *self.others)]

    def load_state_dict(self, rows: list[dict[str, Any]]) -> None:
        self.respawns.clear()
        self.others.clear()
        self.push_front([OnlineRequest(**row) for row in rows])


ACCEPTED, TOO_EASY, TOO_HARD, INVALID, INFRA = "accepted", "too_easy", "too_hard", "invalid", "infra"


@dataclass
class TeacherJob:
    request: OnlineRequest
    band: tuple[float, float]  # the pass-rate slice the teacher aims at (SCALER level)
    lineage_id: str
    seed_id: str
    parent: Problem | None = None  # mutate, respawn
    summary: Summary | None = None  # the policy's results on the parent
    seed_text: str | None = None  # explore
    policy_step: int = 0


@dataclass
class JobOutcome:
    job: TeacherJob
    status: str  # accepted | too_easy | too_hard | invalid | infra
    row: dict[str, Any] | None = None  # the accepted turn's PROBLEMS row
    turns: list[dict[str, Any]] = field(default_factory=list)  # every finished turn, with the request's columns
    pass_rate: float | None = None  # of the accepted turn, else of the last evaluated one
    detail: str | None = None


def target_rule(band: tuple[float, float]) -> ProgressionSettings:
    """The paper's progression aimed at `band`: its strategy is chosen against it, and the prompt names it."""
    return ProgressionSettings(easier_at=0.0, target_low=band[0], target_high=band[1])


def retarget(summary: Summary, band: tuple[float, float]) -> Summary:
    """The summary with the paper's strategy chosen against `band` (and the band the prompt names)."""
    strategy = choose_strategy(summary.pass_rate, target_rule(band))
    return dataclasses.replace(summary, strategy=strategy, target_low=band[0], target_high=band[1])


def policy_summary(window: list[tuple[int, int]], attempts: list[tuple[str, Any]], band) -> Summary:
    """What the teacher learns about the policy on a pool problem, aimed at `band`: its windowed
    training pass rate and the newest group's answers (shortest distinct solved and failed ones)."""
    scored = sum(n for _, n in window)
    correct = sum(s for s, _ in window)
    return Summary.of(
        target_rule(band),
        pass_rate=correct / scored if scored else None,
        attempts=scored,
        scored=scored,
        correct=correct,
        format_failures=0,
        infra_failures=0,
        solved=shortest_distinct([t for t, r in attempts if r is not None and float(r) >= 0.5]),
        failed=shortest_distinct([t for t, r in attempts if r is not None and float(r) < 0.5]),
    )


def make_jobs(
    pool, requests: list[OnlineRequest], policy_step: int
) -> tuple[list[TeacherJob], list[tuple[OnlineRequest, str]]]:
    """The requests the budget took, resolved against `pool` (a synthgen.online.pool.OnlinePool):
    (jobs, skipped requests with the reason); `policy_step` names the weights that will answer."""
    active = pool.curation.active_envs()
    wanted = [e for e in sorted(pool.envs) if e in active]
    by_env: dict[str, list[OnlineRequest]] = defaultdict(list)
    skipped: list[tuple[OnlineRequest, str]] = []
    for req in requests:
        rng = random.Random(f"{pool.seed}:request:{req.request_id}")
        if req.kind == EXPLORE:
            if not pool.seeds:
                skipped.append((req, "no seeds to explore from"))
                continue
            req.env = req.env or rng.choice(wanted)
            req.seed_id = req.seed_id or rng.choice(sorted(pool.seeds))
        elif req.env not in active:
            skipped.append((req, f"environment {req.env} is retired by the controller"))
            continue
        by_env[req.env].append(req)
    jobs = []
    for env, reqs in by_env.items():
        # SCALER's realisation of the real d over this batch of the environment's requests.
        for req, level in zip(reqs, pool.curation.levels(env, len(reqs))):
            req.level = level if req.level is None else req.level
            band = pool.curation.band(req.level, pool.accept.low, pool.accept.high)
            if req.kind == EXPLORE:
                job = TeacherJob(req, band, f"online:{req.request_id}", req.seed_id, seed_text=pool.seeds[req.seed_id])
            else:
                row, entry = pool.problem_rows[req.parent], pool.buffer.entries[req.parent]
                job = TeacherJob(req, band, row["lineage_id"], row.get("seed_id") or "data", Problem.from_fields(row))
                job.summary = policy_summary(list(entry.window), entry.attempts, band)
            job.policy_step = policy_step
            jobs.append(job)
    order = {r.request_id: i for i, r in enumerate(requests)}
    return sorted(jobs, key=lambda j: order[j.request.request_id]), skipped


class OnlineWorker:
    """Runs jobs with one TurnRunner (its llm is a synthgen.online.student.PolicyLLM)."""

    def __init__(self, runner: TurnRunner, accept):
        self.runner, self.accept = runner, accept

    async def run(self, job: TeacherJob) -> JobOutcome:
        # The policy the student requests name (jobs running at once share one step: the newest).
        self.runner.llm.student.policy_step = job.policy_step
        req, (low, high) = job.request, job.band
        env = get_env(req.env)
        lineage = Lineage(job.lineage_id, job.seed_id, env, Mode.ONLINE, job.seed_text, job.parent, job.summary)
        columns = dict(request_id=req.request_id, request_kind=req.kind, level=req.level, band_low=low, band_high=high)
        columns |= {"policy_step": job.policy_step, "decision": None}
        turns: list[dict[str, Any]] = []
        last_rate: float | None = None
        for turn in range(1, self.accept.max_turns + 1):
            outcome = await self.runner.run(lineage.request(turn, key=req.request_id))
            if not outcome.finished:
                return JobOutcome(job, INFRA, turns=turns, detail=outcome.infra)
            row = {**outcome.row, **columns}
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
