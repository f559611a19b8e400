"""`OnlineGRPOTrainer`: TRL's GRPOTrainer whose prompts come from the online pool.

What it changes in TRL, and only this:
  * `_get_train_sampler` returns a `PoolSampler` over `PoolDataset`: TRL's RepeatSampler layout
    (synthgen.train.trainer.RepeatLayout), each round's chunk drawn by the pool at an earlier step
    boundary, so no randomness is the sampler's own. The dataset is the pool's append-only rows
    by registry index, read at fetch time in this process (hence `dataloader_num_workers` 0): an
    index handed out stays valid whatever the pool evicts later;
  * `_calculate_rewards` is wrapped to hand each scored round's groups (problem, rewards, answers)
    to the pool: regret windows, SCALER's controllers, the summaries the teacher mutates from;
  * a callback runs the pool's step boundary after every optimizer step (retirements, the worker,
    the draws ahead) and writes the policy for a server student every `sync_every` steps;
  * checkpoints also hold `online_state.json` (synthgen.online.session), written last.
The curriculum trainer's per-bin files do not apply (the pool has no fixed bins); the pool's
own log (synthgen.online.log) says what was drawn, scored, admitted and retired, and when.
"""

from __future__ import annotations

import logging

from torch.utils.data import Dataset
from transformers import TrainerCallback
from trl import GRPOTrainer

from synthgen.train.rewards import completion_text
from synthgen.train.trainer import Geometry, RepeatLayout, checkpoint_folder, combined_rewards

logger = logging.getLogger(__name__)

ANSWER_CHARS = 3000  # an answer kept for the teacher's summary is cut here (the summary cuts there too)


class PoolDataset(Dataset):
    def __init__(self, pool):
        self.pool = pool

    def __len__(self) -> int:
        return len(self.pool.rows)

    def __getitem__(self, index: int) -> dict:
        return self.pool.rows[index]


class PoolSampler(RepeatLayout):
    def __init__(self, pool, geometry: Geometry, chunks_per_epoch: int):
        self.chunk, self.batch_size = pool.chunk, geometry.prompts
        self.mini_repeat_count, self.repeat_count = geometry.generations, geometry.batches_per_round
        self.chunks_per_epoch = max(1, chunks_per_epoch)


class OnlineGRPOTrainer(GRPOTrainer):
    """Set `session` (synthgen.online.session.OnlineSession) and `train_dataset` before `train()`."""

    def __init__(self, *args, **kwargs):
        self.session = None
        self._next_round = 0
        super().__init__(*args, **kwargs)
        self.geometry = Geometry.of(self.args, self.num_generations, self.num_iterations)
        self.add_callback(_OnlineCallback(self))

    def _get_train_sampler(self, dataset=None):
        chunks = self.session.online.buffer.capacity // max(1, self.geometry.prompts)
        return PoolSampler(self.session.pool, self.geometry, chunks)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        if self.model.training:
            from accelerate.utils import gather_object

            # Every process gets every process's rows, in the order of the gathered rewards.
            rows = gather_object(
                [(int(x["registry_index"]), completion_text(c)[:ANSWER_CHARS]) for x, c in zip(inputs, completions)]
            )
            rewards = combined_rewards(self, rewards_per_func)
            g = self.num_generations
            groups = [
                (rows[i][0], rewards[i : i + g], [text for _, text in rows[i : i + g]]) for i in range(0, len(rows), g)
            ]
            round_ = self._next_round
            # The gathered groups must be this process's draw for the round, in order: a group whose
            # G rows are not one problem, or a problem another process did not draw, means the
            # processes' pools disagree. Counted and reported, never hidden.
            split = sum(len({index for index, _ in rows[i : i + g]}) != 1 for i in range(0, len(rows), g))
            drawn = self.session.pool.draws.get(round_)
            if drawn is not None and [index for index, *_ in groups] != drawn:
                split = max(split, 1)
            if split:
                logger.warning("online: round %d: %d prompt group(s) differ from the pool's draw", round_, split)
                self.session.pool.split_groups += split
            self._next_round += 1
            self.session.pool.record_round(round_, groups, self.state.global_step)
        return rewards_per_func

    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            # Last: a checkpoint with this file is complete (synthgen.online.run picks only those).
            self.session.save(checkpoint_folder(self, trial), self.state.global_step)


class _OnlineCallback(TrainerCallback):
    def __init__(self, trainer: OnlineGRPOTrainer):
        self.trainer = trainer

    def on_train_begin(self, args, state, control, **kwargs):
        t = self.trainer
        t._next_round = t.geometry.round_of_step(state.global_step)
        t.session.begin(state.global_step)

    def on_step_end(self, args, state, control, **kwargs):
        t, step, session = self.trainer, state.global_step, self.trainer.session
        session.sync_policy(t, step)
        session.boundary(step)
        metrics = t._metrics["train"]
        for key, count in session.pool.counts().items():  # problems, active, retired, evicted, pending
            metrics[f"online/{key}"].append(count)
        for env, st in session.pool.curation.envs.items():
            metrics[f"online/difficulty/{env}"].append(st.d)
        return control
