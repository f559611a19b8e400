"""verl's entry points: the reward (`compute_score`, `compute_score_batch`) and the curriculum (`CurriculumSampler`).

On a verl export (`synthgen export --format verl`: `prompt`, `data_source` "synthgen/<env>",
`reward_model.ground_truth`, `extra_info.difficulty`, ...):

    python3 -m verl.trainer.main_ppo data.train_files=OUT/train.parquet ... \\
        reward.custom_reward_function.path=pkg://synthgen.interop.verl \\
        reward.custom_reward_function.name=compute_score \\
        data.sampler.class_path=pkg://synthgen.interop.verl data.sampler.class_name=CurriculumSampler \\
        +data.sampler.curriculum=reverse-medium +data.sampler.steps=500 data.dataloader_num_workers=0

Scoring runs the environments' own verifiers in synthgen's sandbox pool (synthgen.interop.scorer:
one pool per process, started on the first call, closed at exit), never in verl's process.

Which verl calls what (verl 0.7):
  * the trainer's reward loop (`reward.reward_manager.name=naive`, the default, and dapo, limited)
    calls `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)` once per sample,
    from a thread pool of each reward-loop worker;
  * verl's older worker-side managers, `verl.workers.reward_manager` (what `reward_model.reward_manager`
    chose in verl 0.6 and before): `naive` calls `compute_score` the same way, `batch` calls
    `compute_score_batch(data_sources=, solution_strs=, ground_truths=, extra_infos=)` once per batch.
Both return dicts with the same keys for every sample, since verl stacks each key into one
column of `reward_extra_info`: `score` (what trains), `acc` (1.0 / 0.0 the verdict, None when the
sandbox failed: verl's validation metrics skip None), `infra` (1.0 when the sandbox failed) and
`status` (synthgen's: ok, format, infra; strings are skipped by verl's metrics).

A sandbox infrastructure failure is never scored as a wrong answer. The pool already re-queues a
job lost with its worker; a sample that still comes back `infra` is scored once more, then:
  * per sample (`compute_score`): `SandboxInfraError` is raised. verl needs a number for every
    sample (its reward tensor has no "missing"), and one call sees one sample, so there is no
    honest number to give: a crashed step says what happened, a made-up 0.0 would train the model
    away from a right answer. (Not a TimeoutError: the naive manager of verl 0.9 turns that into 0.0.)
  * per batch (`compute_score_batch`): the sample gets the mean score of the scored samples with
    the same ground truth in the batch (its GRPO group, unless the batch holds the prompt twice)
    and `infra: 1.0`. Adding a value equal to the group's mean leaves the mean unchanged, so its
    advantage is exactly 0 and the others' are unchanged when advantages are not divided by the
    group's std (the paper's setting); with the std, theirs grow slightly (one more value at the
    mean). This is what TRL does with None. If none of its group was scored, the whole group gets
    0.0: all equal, advantage 0 for each.

Truncation: verl hands over decoded text, not whether the response hit the length limit, so a
cut-off answer is scored on what it says (synthgen train scores it 0.0); verl's own overlong
shaping (DAPO's overlong buffer) applies on top if configured.

The curriculum, `CurriculumSampler`, is verl's `data.sampler` class (verl 0.5-0.7; later verl
dropped the hook: there, take `synthgen.interop.curriculum.ScheduleIndices` to write the rows in
schedule order and train with `data.shuffle=False`). It reads each row's bin from the dataset's
`extra_info.difficulty` and the schedule from `data.sampler`: `curriculum` (a name or a YAML
file; else $SYNTHGEN_CURRICULUM), `steps` (the run's steps; else $SYNTHGEN_CURRICULUM_STEPS,
else one pass over the data), `seed` (else `data.seed`, else 0). The batch size is verl's
dataloader's, `data.gen_batch_size` or else `data.train_batch_size`, so the i-th index belongs to
step i // batch size. One pass of the sampler is the whole schedule (`steps` batches), so train
one epoch (`trainer.total_epochs=1`); further epochs continue in the schedule's last phase. verl
insists on `data.dataloader_num_workers=0` with a custom sampler.

Nothing heavy at import: verl (for the sampler's base class) is imported when the class is first
asked for, the sandbox pool on the first score.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

INFRA_RETRIES = 1  # scoring attempts after the first for a sample the sandbox failed on
CURRICULUM_VARIABLE = "SYNTHGEN_CURRICULUM"
STEPS_VARIABLE = "SYNTHGEN_CURRICULUM_STEPS"


class SandboxInfraError(RuntimeError):
    """The sandbox could not score a sample (not the model's fault); raised rather than a made-up score."""


def _rewards(truths: Sequence[Any], solutions: Sequence[str]) -> list:
    """Rewards from the shared scorer, the infra ones scored again up to INFRA_RETRIES times."""
    from synthgen.interop import scorer

    truths = [_truth_text(t) for t in truths]
    solutions = [s if isinstance(s, str) else str(s) for s in solutions]
    rewards = scorer.score(truths, solutions)
    for _ in range(INFRA_RETRIES):
        again = [i for i, r in enumerate(rewards) if r.status == "infra"]
        if not again:
            break
        log.warning("synthgen reward: the sandbox failed on %d sample(s); scoring them again", len(again))
        for i, reward in zip(again, scorer.score([truths[i] for i in again], [solutions[i] for i in again])):
            rewards[i] = reward
    return rewards


def _truth_text(truth: Any) -> Any:
    # verl keeps non-tensor columns as numpy object arrays: a string arrives as numpy.str_ at worst.
    return str(truth) if isinstance(truth, str) else truth


def _result(score: float, acc: float | None, status: str) -> dict[str, Any]:
    return {"score": float(score), "acc": acc, "infra": 1.0 if status == "infra" else 0.0, "status": status}


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> dict[str, Any]:
    """verl's per-sample reward: 1.0 / 0.0 by the environment's verifier; SandboxInfraError if the sandbox failed.

    `data_source` and `extra_info` are not needed: the ground truth names the environment.
    """
    reward = _rewards([ground_truth], [solution_str])[0]
    if reward.status == "infra":
        raise SandboxInfraError(
            f"synthgen reward: the sandbox failed on this sample ({reward.detail or 'no detail'}); "
            "not scored, rather than scored 0 (see synthgen.interop.verl)"
        )
    return _result(reward.value, reward.value, reward.status)


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None, **kwargs) -> list[dict]:
    """verl's batch reward: one dict per sample; a sample the sandbox failed on gets its group's mean, `infra` 1.0."""
    truths = list(ground_truths)
    rewards = _rewards(truths, list(solution_strs))
    groups: dict[str, list[float]] = {}
    for truth, reward in zip(truths, rewards):
        if reward.status != "infra":
            groups.setdefault(_key(truth), []).append(float(reward.value))
    out = []
    for truth, reward in zip(truths, rewards):
        if reward.status != "infra":
            out.append(_result(reward.value, reward.value, reward.status))
            continue
        scored = groups.get(_key(truth), [])
        # The group's mean: this sample's advantage is then 0, as if it were not there.
        out.append(_result(sum(scored) / len(scored) if scored else 0.0, None, "infra"))
    infra = sum(r.status == "infra" for r in rewards)
    if infra:
        log.warning(
            "synthgen reward: %d of %d sample(s) not scored (sandbox failure): their group's mean", infra, len(rewards)
        )
    return out


def _key(truth: Any) -> str:
    return truth if isinstance(truth, str) else repr(truth)


# -- the curriculum: verl's data.sampler -------------------------------------------------------


def row_bins(data_source) -> list[str]:
    """Each row's bin (`extra_info.difficulty`) of a verl dataset, in its row order."""
    frame = getattr(data_source, "dataframe", None)  # verl's RLHFDataset: a datasets.Dataset, after its filters
    if frame is not None and "extra_info" in getattr(frame, "column_names", ()):
        infos = frame["extra_info"]
    else:
        infos = [data_source[i].get("extra_info") for i in range(len(data_source))]
    bins = []
    for i, info in enumerate(infos):
        difficulty = info.get("difficulty") if isinstance(info, dict) else None
        if difficulty is None:
            from synthgen.errors import UserError

            raise UserError(
                f"row {i} of the training data has no extra_info.difficulty: the curriculum sampler needs each "
                "row's bin (train on `synthgen export --format verl` output)"
            )
        bins.append(str(difficulty))
    return bins


def _setting(config, key: str, default=None):
    value = config.get(key) if config is not None else None
    return default if value is None else value


def sampler_settings(data_config, rows: int) -> dict[str, Any]:
    """(curriculum, steps, seed, batch_size) from verl's `data` config, with the environment's fallbacks."""
    from synthgen.errors import UserError

    sampler = _setting(data_config, "sampler")
    batch_size = int(_setting(data_config, "gen_batch_size") or _setting(data_config, "train_batch_size", 0))
    if batch_size < 1:
        raise UserError("the curriculum sampler needs data.train_batch_size")
    curriculum = _setting(sampler, "curriculum") or os.environ.get(CURRICULUM_VARIABLE)
    if not curriculum:
        raise UserError(
            f"name a curriculum: +data.sampler.curriculum=NAME (or ${CURRICULUM_VARIABLE}); "
            "see `synthgen train --show-schedule NAME`"
        )
    steps = _setting(sampler, "steps") or os.environ.get(STEPS_VARIABLE) or max(1, rows // batch_size)
    seed = _setting(sampler, "seed", _setting(data_config, "seed", 0))
    return {"curriculum": str(curriculum), "steps": int(steps), "seed": int(seed), "batch_size": batch_size}


def _make_sampler_class():
    from verl.experimental.dataset.sampler import AbstractSampler

    from synthgen.interop.curriculum import ScheduleIndices

    class CurriculumSampler(AbstractSampler):
        """A synthgen schedule as verl's training sampler: step s's batch is drawn with the schedule's weights at s."""

        def __init__(self, data_source, data_config):
            settings = sampler_settings(data_config, len(data_source))
            self.batch_size = settings["batch_size"]
            self.order = ScheduleIndices(
                row_bins(data_source),
                settings["curriculum"],
                batch_size=self.batch_size,
                steps=settings["steps"],
                seed=settings["seed"],
            )
            self.steps = settings["steps"]
            self.epoch = 0
            log.info(
                "synthgen curriculum %s over %d steps of %d", self.order.schedule.name, self.steps, self.batch_size
            )

        def __len__(self) -> int:
            return self.steps * self.batch_size

        def __iter__(self):
            # verl iterates once per epoch; a later epoch continues past the schedule's end.
            first = self.epoch * self.steps
            self.epoch += 1
            for step in range(first, first + self.steps):
                yield from self.order.batch(step)

        def weights(self, step: int) -> dict[str, float]:
            return self.order.weights(step)

    CurriculumSampler.__module__ = __name__
    return CurriculumSampler


_classes: dict[str, type] = {}


def __getattr__(name: str):
    # The class derives from verl's AbstractSampler (verl asserts it), so it is built on first use:
    # importing this module for `compute_score` never imports verl.
    if name == "CurriculumSampler":
        if name not in _classes:
            _classes[name] = _make_sampler_class()
        return _classes[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
