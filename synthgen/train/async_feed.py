"""The curriculum under `train --async`: the same `CurriculumSampler`, laid out as the prompt order.

TRL's async rollout process walks its dataset in order, one prompt per group (it repeats each
row G times itself), cycling at the end, and a resumed run restarts at the first group not yet
trained (`rollout_state.json`). So the curriculum is fed by *order*: the dataset handed to TRL
is the training set re-indexed so that row r*K .. r*K+K-1 are the K groups the sampler draws for
round r, where a round is one optimizer step's groups (K = per-device batch x accumulation x
processes / G) and the weights are the schedule's at step r. Draws are the sampler's (seeded by
round and bin, each problem of a bin once before any repeats), so the order is a pure function
of the settings and the data, and a resume replays it.

A group drawn for step r trains at about step r: the rollout process runs at most
`max_staleness` steps ahead, and completions finish a little out of order inside that window.
The order holds `rounds_needed` rounds, room for the rollouts TRL drops as stale, so it never
wraps back to step 0's weights in a run of `max_steps`.
"""

from __future__ import annotations

from collections.abc import Sequence

from synthgen.errors import UserError
from synthgen.train.mix import SourceMix
from synthgen.train.sampler import CurriculumSampler


def groups_per_step(args, num_processes: int) -> int:
    """Prompt groups one optimizer step trains on; the batch must hold whole groups."""
    samples = args.per_device_train_batch_size * args.gradient_accumulation_steps * num_processes
    g = args.num_generations
    if samples % g:
        raise UserError(
            f"--async: a step's {samples} completions (per-device batch x accumulation x processes) "
            f"are not whole groups of G={g}"
        )
    return samples // g


def rounds_needed(max_steps: int, max_staleness: int) -> int:
    """Rounds in the order: every step's, twice over for dropped stale rollouts, plus the look-ahead."""
    return 2 * max_steps + max_staleness + 1


def curriculum_order(
    strata: Sequence[str], weights_fn, *, groups_per_step: int, rounds: int, seed: int
) -> tuple[list[int], CurriculumSampler]:
    """Dataset row indices, round after round, as `CurriculumSampler` draws them (one step a round)."""
    sampler = CurriculumSampler(
        strata,
        mini_repeat_count=1,  # TRL's rollout process repeats each prompt G times itself
        batch_size=groups_per_step,
        repeat_count=1,
        weights_fn=weights_fn,
        steps_per_round=1.0,
        seed=seed,
    )
    order = [i for r in range(rounds) for i in sampler.chunk(r)]
    return order, sampler


def feed(dataset, spec, args, *, num_processes: int, max_steps: int):
    """(the dataset in curriculum order, the sampler that drew it, groups per step) for TRL's rollouts."""
    columns = dataset.column_names
    bins = [str(b) for b in dataset["difficulty"]]
    sources = [str(s) for s in dataset["source"]] if "source" in columns else [""] * len(bins)
    mix = SourceMix(sources, bins, spec.source_weights, spec.curriculum_sources)
    schedule = spec.schedule

    def weights_fn(round_: int, step: int):
        return mix.weights(schedule.weights_at(step))

    k = groups_per_step(args, num_processes)
    order, sampler = curriculum_order(
        mix.strata, weights_fn, groups_per_step=k, rounds=rounds_needed(max_steps, args.max_staleness), seed=args.seed
    )
    return dataset.select(order), sampler, mix, k
