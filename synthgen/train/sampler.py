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
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence

from torch.utils.data import Sampler

from synthgen.train.curriculum import resolve_weights

WeightsFn = Callable[[int, int], Mapping[str, float]]  # (round, step) -> weights over data bins


class CurriculumSampler(Sampler[int]):
    HISTORY = 256

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
        self.row_bins = list(bins)
        self.num_samples = len(self.row_bins)
        self.mini_repeat_count = mini_repeat_count
        self.batch_size = batch_size
        self.repeat_count = repeat_count
        self.weights_fn = weights_fn
        self.steps_per_round = steps_per_round
        self.seed = seed
        self.epoch = 0
        self.members: dict[str, list[int]] = {}
        for i, b in enumerate(self.row_bins):
            self.members.setdefault(b, []).append(i)
        self.present = {b: len(v) for b, v in self.members.items()}
        # As many chunks per epoch as RepeatSampler would make, so that the Trainer's epoch and
        # resume arithmetic (len(dataloader)) is unchanged; a tiny dataset still gets one chunk.
        self.chunks_per_epoch = max(1, self.num_samples // self.batch_size)
        self._walk_round = 0  # the next round the within-bin walk is positioned at
        self._walk: dict[str, tuple[int, int]] = {}  # bin -> (pass over the bin, position in it)
        self._orders: dict[str, tuple[int, list[int]]] = {}  # bin -> (pass, its shuffled order)
        self.history: dict[int, list[str]] = {}  # round -> bins drawn, for the last HISTORY rounds

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

    # -- the curriculum ---------------------------------------------------------------------
    def step_of_round(self, round_: int) -> int:
        return int(round_ * self.steps_per_round + 1e-9)

    def weights(self, round_: int) -> dict[str, float]:
        return resolve_weights(self.weights_fn(round_, self.step_of_round(round_)), self.present)

    def chunk(self, round_: int) -> list[int]:
        """The distinct prompt indices of generation round `round_` (a pure function of the round)."""
        if round_ < self._walk_round:  # an earlier round again (resume replay): restart the walk
            self._walk_round, self._walk = 0, {}
        while self._walk_round < round_:
            self._draw(self._walk_round)
        return self._draw(round_)

    def _draw(self, round_: int) -> list[int]:
        weights = self.weights(round_)
        names = sorted(weights)
        rng = random.Random(f"{self.seed}:round:{round_}")
        drawn_bins = rng.choices(names, weights=[weights[n] for n in names], k=self.batch_size)
        out = [self._next_in_bin(b) for b in drawn_bins]
        self.history[round_] = drawn_bins
        self.history.pop(round_ - self.HISTORY, None)
        self._walk_round = round_ + 1
        return out

    def _next_in_bin(self, b: str) -> int:
        members = self.members[b]
        lap, pos = self._walk.get(b, (0, 0))
        if pos >= len(members):
            lap, pos = lap + 1, 0
        cached = self._orders.get(b)
        if cached is None or cached[0] != lap:  # one shuffle per pass over the bin, not per draw
            order = list(members)
            random.Random(f"{self.seed}:bin:{b}:{lap}").shuffle(order)
            cached = self._orders[b] = (lap, order)
        self._walk[b] = (lap, pos + 1)
        return cached[1][pos]
