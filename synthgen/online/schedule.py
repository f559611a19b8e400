"""How the pool feeds TRL: a growing map-style dataset and a sampler with RepeatSampler's layout.

TRL's `RepeatSampler` emits, per generation round, a chunk of `generation_batch_size / G`
prompt indices, each index G times in a row, the chunk `num_iterations x steps_per_generation`
times; every process iterates the same sampler and takes its slice, so a prompt's G completions
are scored as one group. `PoolSampler` keeps that layout and takes each round's chunk from the
pool (`OnlinePool.chunk`), which drew it at an earlier step boundary: the sampler holds no
randomness of its own, so every process and a resumed run see the same rounds.

`PoolDataset` is the training set: the pool's rows by registry index, append-only, so an index
the sampler handed out stays valid whatever the pool admits or evicts later. It is read at fetch
time in the training process, which is why the online run keeps `dataloader_num_workers` at 0
(a worker process would hold a stale copy).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from torch.utils.data import Dataset, Sampler


@dataclass(frozen=True)
class Geometry:
    """Rounds and steps of a GRPO run (see synthgen.train.trainer for the read-ahead reasoning)."""

    prompts: int  # distinct prompts per round: generation_batch_size / G
    generations: int  # G
    batches_per_round: int  # steps_per_generation x num_iterations micro-batches share a round
    grad_accum: int
    lag: int  # rounds drawn ahead of the round being trained

    @classmethod
    def of(cls, args, num_generations: int, num_iterations: int) -> Geometry:
        per_round = args.steps_per_generation * num_iterations
        ahead = args.gradient_accumulation_steps + 1  # the Trainer's pull plus accelerate's read-ahead
        return cls(
            prompts=args.generation_batch_size // num_generations,
            generations=num_generations,
            batches_per_round=per_round,
            grad_accum=args.gradient_accumulation_steps,
            lag=1 + math.ceil(ahead / per_round),
        )

    def round_of_step(self, step: int) -> int:
        """The round the micro-batch after `step` optimizer steps belongs to."""
        return (step * self.grad_accum) // self.batches_per_round


class PoolDataset(Dataset):
    def __init__(self, pool):
        self.pool = pool

    def __len__(self) -> int:
        return len(self.pool.rows)

    def __getitem__(self, index: int) -> dict:
        return self.pool.rows[index]


class PoolSampler(Sampler[int]):
    def __init__(self, pool, geometry: Geometry, chunks_per_epoch: int):
        self.pool, self.g = pool, geometry
        # Constant, so that the Trainer's epoch arithmetic (and its resume skipping) never changes.
        self.chunks_per_epoch = max(1, chunks_per_epoch)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.chunks_per_epoch * self.g.prompts * self.g.generations * self.g.batches_per_round

    def __iter__(self) -> Iterator[int]:
        for chunk in range(self.chunks_per_epoch):
            indices = self.pool.chunk(self.epoch * self.chunks_per_epoch + chunk)
            for _ in range(self.g.batches_per_round):
                for index in indices:
                    for _ in range(self.g.generations):
                        yield index
