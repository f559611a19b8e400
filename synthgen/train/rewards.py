"""The GRPO reward: each environment's own verifier, run in the sandbox pool, a step at a time.

TRL calls the reward once per generation round with this process's completions and every dataset
column as a keyword list. It returns 1.0 / 0.0 per completion, or None for a sandbox infrastructure
failure: TRL leaves None out of the group mean, so a broken sandbox never reads as a wrong answer.
The seam is a *scorer*, `scorer(rows, completions, truncated) -> list[float | None]` (sync or
async): `EnvScorer` is the real one; tests pass their own to simulate infra failures.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from synthgen.interop.scorer import Scorer
from synthgen.store.records import SCORING_COLUMNS

ScoreFn = Callable[[list, list, list], list | Awaitable[list]]


def completion_text(completion: Any) -> str:
    """The text of a completion: a plain string, or the assistant messages of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        parts = [
            m.get("content") or ""
            for m in completion
            if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
        ]
        return "".join(p if isinstance(p, str) else str(p) for p in parts)
    return str(completion)


def cut_off(
    completion_ids: Sequence[Sequence[int]] | None, n: int, max_completion_length: int | None, eos_token_id: int | None
) -> list[bool]:
    """Which of n completions used the whole token budget without ending: cut off, which the paper's
    pipeline counts as a format failure (0), not infra. Without token ids or a budget, none."""
    if not completion_ids or max_completion_length is None:
        return [False] * n
    return [
        len(ids) >= max_completion_length and not (ids and ids[-1] == eos_token_id) for ids in map(list, completion_ids)
    ]


class EnvScorer(Scorer):
    """The interop `Scorer` as the reward calls it: dataset rows in, reward values out (None: infra)."""

    async def __call__(self, rows: Sequence[dict], completions: Sequence[str], truncated: Sequence[bool]) -> list:
        from synthgen.envs.problem import Problem

        rewards = await self.rewards([Problem.from_fields(row) for row in rows], completions, truncated)
        return [reward.value for reward in rewards]


class SandboxReward:
    """The reward function handed to GRPOTrainer (async, so TRL awaits it on its reward loop)."""

    __name__ = "sandbox"  # TRL names the reward's metrics after this

    def __init__(self, scorer: ScoreFn, *, max_completion_length: int | None = None, eos_token_id: int | None = None):
        self.scorer = scorer
        self.max_completion_length = max_completion_length
        self.eos_token_id = eos_token_id

    async def __call__(self, prompts, completions, completion_ids=None, **columns) -> list:
        n = len(completions)
        rows = [{k: columns[k][i] for k in SCORING_COLUMNS if k in columns} for i in range(n)]
        texts = [completion_text(c) for c in completions]
        result = self.scorer(rows, texts, cut_off(completion_ids, n, self.max_completion_length, self.eos_token_id))
        if inspect.isawaitable(result):
            result = await result
        values = [None if v is None else float(v) for v in result]
        if len(values) != n:
            raise RuntimeError(f"scorer returned {len(values)} rewards for {n} completions")
        return values
