"""From queued requests to runnable jobs: an environment, SCALER's target slice, a seed or a parent.

Everything a job needs is read here, in the training process's main thread, at a step boundary,
so the worker (which may run in another thread) never touches the live buffer. Choices are
seeded by the request id: a resumed run makes the same ones.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from synthgen.envs.problem import Problem
from synthgen.envs.summary import Summary
from synthgen.online.requests import EXPLORE, Request
from synthgen.online.worker import Job, retarget

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

    def make(self, requests: list[Request], policy_step: int) -> tuple[list[Job], list[tuple[Request, str]]]:
        """(jobs, skipped requests with the reason) for the requests the budget took; `policy_step`
        names the weights that will answer as the student."""
        pool, active = self.pool, self.pool.curation.active_envs()
        wanted = [e for e in sorted(pool.envs) if e in active]
        jobs_by_env: dict[str, list[Request]] = defaultdict(list)
        skipped: list[tuple[Request, str]] = []
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

    def _job(self, req: Request, policy_step: int) -> Job:
        pool = self.pool
        band = pool.curation.band(req.level, pool.accept.low, pool.accept.high)
        if req.kind == EXPLORE:
            return Job(
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
        return Job(
            req,
            req.env,
            band,
            row["lineage_id"],
            row.get("seed_id") or "data",
            parent=Problem.from_fields(row),
            summary=summary,
            policy_step=policy_step,
        )
