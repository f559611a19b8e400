"""What every benchmark hands the eval loop: items to sample and score, each in one or more splits.

    item = EvalItem("lcb", "abc301_a", ("2024.08-2025.05", "v5-easy"), messages, score)
    reward = await item.score(completion_text, truncated)     # synthgen.envs.problem.Reward

A Reward with value None (status "infra") is an infrastructure failure: never written, never
counted. `choose(items, n, seed)` is the seeded subset of `--max-problems`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from synthgen.envs.problem import Reward

Score = Callable[[str, bool], Awaitable[Reward]]


@dataclass
class EvalItem:
    benchmark: str
    problem_id: str
    splits: tuple[str, ...]
    messages: list[dict]
    score: Score


def choose(items: Sequence[EvalItem], limit: int | None, seed: int) -> list[EvalItem]:
    """At most `limit` items, a choice that depends only on the ids and the seed (stable across runs)."""
    items = list(items)
    if limit is None or len(items) <= limit:
        return items
    key = lambda item: hashlib.sha256(f"{seed}:{item.problem_id}".encode()).hexdigest()  # noqa: E731
    chosen = {id(i) for i in sorted(items, key=key)[:limit]}
    return [i for i in items if id(i) in chosen]


def env_scorer(env, problem, pool, sandbox) -> Score:
    """An item's score through an environment's own verifier (contest, induction, ...)."""

    async def score(text: str, truncated: bool) -> Reward:
        return await env.score(problem, text, pool, sandbox, truncated=truncated)

    return score
