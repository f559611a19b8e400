"""A curriculum sampler for TRL's GRPOTrainer that keeps RepeatSampler's layout exactly.

TRL's `RepeatSampler` emits, per generation round, a chunk of `generation_batch_size / G`
distinct prompt indices, each index G times in a row, and the whole chunk `num_iterations x
steps_per_generation` times; every process runs the same sampler and accelerate hands each its
slice, so the G completions of a prompt are scored as one group. `CurriculumSampler` keeps that
layout and changes only *which* indices fill a chunk: each slot draws a difficulty bin from the
curriculum's weights at the step the chunk trains on, then the next problem of that bin.

Why it is safe on many processes and on resume:
  * the round of a chunk is computed from (epoch, chunk index): round = epoch * chunks_per_epoch
    + chunk; the step it trains on from the round (never from the live trainer state, which the
    dataloader's read-ahead puts off by a round);
  * every random choice comes from `random.Random` seeded by (seed, round) or (seed, bin,
    pass over the bin), not from the process-specific torch seed, so all processes agree;
  * within a bin, problems are walked in a seeded order, each once before any repeats; that
    walk is replayed from round 0 when an earlier round is asked for (resume via
    skip_first_batches re-iterates the epoch), so a resumed run draws what the original drew.

The draw itself (bins by weight, rows within a bin) is `synthgen.interop.curriculum.CurriculumDraw`,
shared with `train --async` and with the curricula synthgen offers other trainers (verl, a plain
index order), so that one schedule draws the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from torch.utils.data import Sampler

from synthgen.interop.curriculum import CurriculumDraw, WeightsFn


class CurriculumSampler(CurriculumDraw, Sampler[int]):
    """RepeatSampler's layout around `CurriculumDraw`, the one draw every synthgen curriculum uses."""

    def __init__(
        self,
        bins: Sequence[str],
        *,
        mini_repeat_count: int,
        batch_size: int,
        repeat_count: int,
        weights_fn: WeightsFn,
        steps_per_round: float,
        seed: int = 0,
    ):
        """`bins[i]` is the difficulty bin of dataset row i; `steps_per_round` is optimizer steps per round."""
        super().__init__(bins, batch_size=batch_size, weights_fn=weights_fn, steps_per_round=steps_per_round, seed=seed)
        self.num_samples = len(self.row_bins)
        self.mini_repeat_count = mini_repeat_count
        self.repeat_count = repeat_count
        self.epoch = 0
        # As many chunks per epoch as RepeatSampler would make, so that the Trainer's epoch and
        # resume arithmetic (len(dataloader)) is unchanged; a tiny dataset still gets one chunk.
        self.chunks_per_epoch = max(1, self.num_samples // self.batch_size)

    # -- the Trainer's hooks ---------------------------------------------------------------
    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.chunks_per_epoch * self.batch_size * self.mini_repeat_count * self.repeat_count

    def __iter__(self) -> Iterator[int]:
        for chunk in range(self.chunks_per_epoch):
            indices = self.chunk(self.epoch * self.chunks_per_epoch + chunk)
            for _ in range(self.repeat_count):
                for index in indices:
                    for _ in range(self.mini_repeat_count):
                        yield index
