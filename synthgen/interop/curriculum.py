"""synthgen's curricula as dataset indices, for any trainer: the draw `synthgen train` makes, without TRL.

    from synthgen.interop.curriculum import ScheduleIndices
    bins = [row["difficulty"] for row in rows]              # each row's bin (the export's `difficulty`)
    order = ScheduleIndices(bins, "reverse-medium", batch_size=64, steps=500)
    for step in range(500):
        batch = order.batch(step)                           # 64 row indices, drawn with the weights at `step`
    DataLoader(dataset, batch_size=64, sampler=order)      # or as any torch sampler: one pass is the schedule

A schedule (synthgen.train.curriculum: the paper's tables, a YAML file) gives, per step, weights
over bins; it is fitted to the run's `steps` by the schedule's own scaling rule. Each of a step's
`batch_size` slots draws a bin from those weights, then the next problem of that bin: a bin's
problems are walked in a seeded order, each once before any repeats. Every choice is seeded by
(seed, step) or (seed, bin, pass over the bin), so the order is a pure function of its arguments:
every process of a distributed job, and a resumed job, draws the same indices.

`CurriculumDraw` is that draw, round by round; synthgen's own TRL sampler
(synthgen.train.trainer.CurriculumRepeatSampler), `synthgen train --async` and verl's sampler
(synthgen.interop.verl.CurriculumSampler) all use it, so a schedule means the same thing in each.
The adaptive `frontier` curriculum needs the trainer's solve rates: it is not offered here.
Pure Python: no torch, nothing started at import.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence

from synthgen.errors import UserError
from synthgen.train.curriculum import ADAPTIVE, EVERYTHING, Schedule, get_schedule, resolve_weights

log = logging.getLogger(__name__)

WeightsFn = Callable[[int, int], Mapping[str, float]]  # (round, step) -> weights over data bins


class CurriculumDraw:
    """Per round, `batch_size` row indices: each slot a bin drawn from the weights, then that bin's next row."""

    HISTORY = 256

    def __init__(
        self,
        bins: Sequence[str],
        *,
        batch_size: int,
        weights_fn: WeightsFn,
        steps_per_round: float = 1.0,
        seed: int = 0,
    ):
        """`bins[i]` is the bin of row i; `steps_per_round` is optimizer steps per round (1.0: a round is a step)."""
        if batch_size < 1:
            raise UserError(f"a curriculum needs a batch size of at least 1, not {batch_size}")
        self.row_bins = list(bins)
        if not self.row_bins:
            raise UserError("a curriculum needs at least one row")
        self.batch_size = batch_size
        self.weights_fn = weights_fn
        self.steps_per_round = steps_per_round
        self.seed = seed
        self.members: dict[str, list[int]] = {}
        for i, b in enumerate(self.row_bins):
            self.members.setdefault(b, []).append(i)
        self.present = {b: len(v) for b, v in self.members.items()}
        self._walk_round = 0  # the next round the within-bin walk is positioned at
        self._walk: dict[str, tuple[int, int]] = {}  # bin -> (pass over the bin, position in it)
        self._orders: dict[str, tuple[int, list[int]]] = {}  # bin -> (pass, its shuffled order)
        self.history: dict[int, list[str]] = {}  # round -> bins drawn, for the last HISTORY rounds

    def step_of_round(self, round_: int) -> int:
        return int(round_ * self.steps_per_round + 1e-9)

    def weights(self, round_: int) -> dict[str, float]:
        """The weights over the data's bins that round `round_` draws with."""
        return resolve_weights(self.weights_fn(round_, self.step_of_round(round_)), self.present)

    def chunk(self, round_: int) -> list[int]:
        """The row indices of round `round_` (a pure function of the round)."""
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


def fitted_schedule(curriculum: str | Schedule, steps: int) -> Schedule:
    """A schedule by name or YAML file (or a Schedule), fitted to a run of `steps` steps."""
    if isinstance(curriculum, str) and curriculum in ADAPTIVE:
        raise UserError(
            f"the {curriculum!r} curriculum adapts to the trainer's solve rates, so it exists only inside "
            "`synthgen train`; choose a fixed schedule (see `synthgen train --show-schedule NAME`)"
        )
    if steps < 1:
        raise UserError(f"a curriculum needs at least one step, not {steps}")
    schedule = get_schedule(curriculum) if isinstance(curriculum, str) else curriculum
    return schedule.scaled(steps)


class ScheduleIndices:
    """A schedule as dataset indices: `batch_size` per step for `steps` steps, steps in order.

    Iterating yields step 0's batch, then step 1's, ...: steps x batch_size indices in all, which
    is what `len` says, so it serves as a torch `Sampler` too (a DataLoader with this batch size
    and no shuffling gets step s's batch as its s-th batch). `start_step` skips the steps a resumed
    run already trained on.
    """

    def __init__(
        self,
        bins: Sequence[str],
        curriculum: str | Schedule,
        *,
        batch_size: int,
        steps: int,
        seed: int = 0,
        start_step: int = 0,
    ):
        self.schedule = fitted_schedule(curriculum, steps)
        self.steps = steps
        self.start_step = start_step
        schedule = self.schedule
        self.draw = CurriculumDraw(
            bins, batch_size=batch_size, weights_fn=lambda _round, step: schedule.weights_at(step), seed=seed
        )
        missing = [b for b in schedule.bins_used() if b not in EVERYTHING and b not in self.draw.present]
        if missing:
            # resolve_weights shares their weight out over the phase's other bins (or all bins).
            log.warning(
                "curriculum %s: the data has no rows in bin(s) %s (it has %s); their weight goes to the other bins",
                schedule.name,
                ", ".join(missing),
                ", ".join(sorted(self.draw.present)),
            )

    @property
    def batch_size(self) -> int:
        return self.draw.batch_size

    def weights(self, step: int) -> dict[str, float]:
        """The weights over the data's bins at `step`."""
        return self.draw.weights(step)

    def batch(self, step: int) -> list[int]:
        """The row indices of `step`."""
        return self.draw.chunk(step)

    def __len__(self) -> int:
        return max(0, self.steps - self.start_step) * self.batch_size

    def __iter__(self) -> Iterator[int]:
        for step in range(self.start_step, self.steps):
            yield from self.batch(step)


def schedule_indices(
    bins: Sequence[str], curriculum: str | Schedule, batch_size: int, steps: int, seed: int = 0
) -> Iterator[int]:
    """Dataset indices in the schedule's order, `batch_size` per step for `steps` steps (see ScheduleIndices)."""
    return iter(ScheduleIndices(bins, curriculum, batch_size=batch_size, steps=steps, seed=seed))
