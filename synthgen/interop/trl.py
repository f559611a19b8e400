"""The reward for a plain TRL `GRPOTrainer` script (or open-r1's), outside `synthgen train`.

    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer
    from synthgen.interop.trl import reward

    data = load_dataset("parquet", data_files="OUT/train.parquet", split="train")  # synthgen export --format trl
    GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=data, args=GRPOConfig(...)).train()

TRL passes every dataset column to a reward function as a keyword list, one entry per
completion: `reward` reads the `ground_truth` column and scores each completion with its
environment's own verifier, in synthgen's sandbox pool (synthgen.interop.scorer: one per process,
started on the first call, closed at exit); model-written code never runs in the trainer's
process. Its metrics appear under `rewards/synthgen/...` (TRL names them after `__name__`).

A sandbox infrastructure failure gives None, never 0.0: TRL turns None into NaN, leaves it out
of its group's mean and std, and sets its advantage to 0, so the completion teaches nothing
rather than something false. (With several reward functions TRL adds them up with `nansum`,
so there the others' rewards still count for that completion.) A completion cut off by the
token limit scores 0.0, as in `synthgen train`, when the reward knows the limit:
`SynthgenReward(max_completion_length=..., eos_token_id=...)` (a plain `reward` scores what
the text says).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class SynthgenReward:
    """A TRL reward function: 1.0 / 0.0 per completion by the environment's verifier, None for a sandbox failure."""

    __name__ = "synthgen"  # TRL names the reward's metrics after this

    def __init__(self, max_completion_length: int | None = None, eos_token_id: int | None = None):
        self.max_completion_length = max_completion_length
        self.eos_token_id = eos_token_id

    def truncated(self, completion_ids: Sequence[Sequence[int]] | None, n: int) -> list[bool]:
        """Which completions used the whole token budget without ending (a format failure, as in synthgen train)."""
        from synthgen.train.rewards import cut_off

        return cut_off(completion_ids, n, self.max_completion_length, self.eos_token_id)

    def __call__(
        self, prompts, completions, ground_truth: Sequence[Any], completion_ids=None, **columns
    ) -> list[float | None]:
        from synthgen.interop import scorer
        from synthgen.train.rewards import completion_text

        texts = [completion_text(c) for c in completions]
        rewards = scorer.score(list(ground_truth), texts, self.truncated(completion_ids, len(texts)))
        return [None if r.status == "infra" else float(r.value) for r in rewards]


reward = SynthgenReward()
