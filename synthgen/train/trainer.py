"""`CurriculumGRPOTrainer`: TRL's GRPOTrainer with a curriculum sampler and per-bin metrics.

What it changes in TRL, and only this:
  * `_get_train_sampler` returns a `CurriculumRepeatSampler` whose strata are difficulty bins, or
    source/bin pairs when weighted sources are mixed (synthgen.train.curriculum.SourceMix);
  * `_calculate_rewards` also records, per generation round and bin, the groups drawn, the
    completions solved / scored / infra and the group regret 1[s>=1] - s/n, which the `frontier`
    curriculum learns from; they go to `curriculum_metrics.jsonl`, the solve-rate CSVs
    (synthgen.train.solve_rates) and TRL's logs (`curriculum/...` keys, for every `report_to`);
  * checkpoints also hold `curriculum_state.json`, read back on resume so that the replayed
    schedule is the one the interrupted run drew;
  * `--save-completions` writes each round's completions (synthgen.train.completions).
TRL's own log lines go to `<output>/trainer_log.jsonl` as well.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.utils.data import Sampler
from transformers import TrainerCallback
from trl import GRPOTrainer

from synthgen.interop.curriculum import CurriculumDraw
from synthgen.train.curriculum import CurriculumSpec, SourceMix
from synthgen.train.frontier import FrontierPolicy, group_regret
from synthgen.train.solve_rates import (
    CUMULATIVE_FIELDS,
    CUMULATIVE_FILE,
    PER_ROUND_FIELDS,
    PER_ROUND_FILE,
    CumulativeSolveRates,
    append_csv,
    keep_lines,
    truncate_csv,
)

logger = logging.getLogger(__name__)

STATE_FILE = "curriculum_state.json"
# TRL's model card (trl/templates/lm_model_card.md) when its base model is a local folder, which it leaves unnamed.
UNNAMED_BASE = "fine-tuned version of [None](https://huggingface.co/None)"
# What a checkpoint holds besides the model: the state to resume training, not what a user loads.
TRAINING_STATE = (
    "optimizer",
    "scheduler",
    "scaler",
    "rng_state",
    "trainer_state.json",
    "latest",
    "zero_to_fp32",
    "rollout_state",
)


def name_base_model(card: Path, base: str) -> None:
    """Name the local model folder a run started from in TRL's model card, where TRL wrote "[None]"."""
    try:
        text = card.read_text(encoding="utf-8")
    except OSError:
        return
    if UNNAMED_BASE in text:
        card.write_text(text.replace(UNNAMED_BASE, f"fine-tuned version of the local model `{base}`"), "utf-8")


def link_final_weights(checkpoint: Path, out: Path) -> None:
    """Put the final checkpoint's model files (weights, config, tokenizer) in `out` as hard links:
    `from_pretrained(OUTPUT)` and `--resume` both work, and the weights are written to disk once.
    Where the file system has no hard links, the file is copied."""
    import shutil

    for src in sorted(checkpoint.iterdir()):
        if not src.is_file() or src.name.startswith(TRAINING_STATE) or src.name in (STATE_FILE, "README.md"):
            continue
        dst = out / src.name
        dst.unlink(missing_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)


def combined_rewards(trainer: GRPOTrainer, rewards_per_func: torch.Tensor) -> list[float | None]:
    """Each completion's weighted reward; None where every reward function gave None (infra)."""
    r = rewards_per_func.detach().float().cpu()
    total = (r * trainer.reward_weights.detach().float().cpu().unsqueeze(0)).nansum(dim=1)
    missing = torch.isnan(r).all(dim=1)
    return [None if m else float(t) for t, m in zip(total.tolist(), missing.tolist())]


def checkpoint_folder(trainer: GRPOTrainer, trial) -> Path:
    """The folder `_save_checkpoint` just wrote for the current step."""
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    return Path(trainer._get_output_dir(trial=trial)) / f"{PREFIX_CHECKPOINT_DIR}-{trainer.state.global_step}"


ROUNDS_FILE = "curriculum_metrics.jsonl"
LOG_FILE = "trainer_log.jsonl"


@dataclass(frozen=True)
class Geometry:
    """Rounds and steps of a GRPO run, the same for the curriculum and the online trainer."""

    prompts: int  # distinct prompts per round: generation_batch_size / G
    generations: int  # G
    batches_per_round: int  # steps_per_generation x num_iterations micro-batches share a round
    grad_accum: int
    lag: int  # rounds between a round's draw and the newest stats it may use

    @classmethod
    def of(cls, args, num_generations: int, num_iterations: int) -> Geometry:
        per_round, accum = args.steps_per_generation * num_iterations, args.gradient_accumulation_steps
        workers = args.dataloader_num_workers
        prefetch = workers * (args.dataloader_prefetch_factor or 2) if workers else 0
        # The read-ahead, rounded up: the Trainer's accum batches a step, accelerate's one, prefetch per worker.
        lag = 1 + math.ceil((accum + 1 + prefetch) / per_round)
        return cls(args.generation_batch_size // num_generations, num_generations, per_round, accum, lag)

    def round_of_step(self, step: int) -> int:
        """The round the micro-batch after `step` optimizer steps belongs to."""
        return (step * self.grad_accum) // self.batches_per_round


class RepeatLayout(Sampler[int]):
    """TRL's RepeatSampler layout around `chunk(round_)`, the distinct prompt indices of a round.

    Per generation round, the chunk's `batch_size` indices each `mini_repeat_count` (G) times in a
    row, the whole chunk `repeat_count` (num_iterations x steps_per_generation) times; every process
    runs the same sampler and accelerate hands each its slice, so a prompt's G completions are one
    group. Only *which* indices fill a chunk changes. A chunk's round comes from (epoch, chunk
    index), never from the live trainer state (the read-ahead puts that off by a round), so many
    processes and a resumed run see the same rounds. A subclass sets these and `chunks_per_epoch`,
    constant so that the Trainer's epoch and resume arithmetic (len(dataloader)) never changes.
    """

    epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.chunks_per_epoch * self.batch_size * self.mini_repeat_count * self.repeat_count

    def __iter__(self) -> Iterator[int]:
        for chunk in range(self.chunks_per_epoch):
            indices = self.chunk(self.epoch * self.chunks_per_epoch + chunk)
            for _ in range(self.repeat_count):
                yield from (index for index in indices for _ in range(self.mini_repeat_count))


class CurriculumRepeatSampler(CurriculumDraw, RepeatLayout):
    """`RepeatLayout` around `CurriculumDraw`, the one draw every synthgen curriculum uses: every
    random choice is seeded by round or bin; the within-bin walk replays from round 0 (resume
    re-iterates the epoch)."""

    def __init__(self, bins: Sequence[str], *, mini_repeat_count: int, repeat_count: int, **draw):
        """`draw`: CurriculumDraw's batch_size, weights_fn, steps_per_round and seed."""
        super().__init__(bins, **draw)
        self.mini_repeat_count, self.repeat_count = mini_repeat_count, repeat_count
        # As many chunks per epoch as RepeatSampler would make; a tiny dataset still gets one chunk.
        self.chunks_per_epoch = max(1, len(self.row_bins) // self.batch_size)


class CurriculumGRPOTrainer(GRPOTrainer):
    def __init__(self, *args, curriculum: CurriculumSpec, completion_log=None, **kwargs):
        self.curriculum = curriculum
        self.completion_log = completion_log  # synthgen.train.completions.CompletionLog, or None
        self.curriculum_sampler: CurriculumRepeatSampler | None = None
        self.frontier: FrontierPolicy | None = None
        self._next_round = 0
        self.checkpoint_used: str | None = None  # the checkpoint this run resumed from
        self.checkpoint_step = 0  # its step
        # What the run started from, for the model card: TRL names only Hub ids and writes "[None]" for a folder.
        model = kwargs.get("model", args[0] if args else None)
        self.base_model_name = model if isinstance(model, str) else None
        super().__init__(*args, **kwargs)
        self.geometry = Geometry.of(self.args, self.num_generations, self.num_iterations)
        self.mix = SourceMix.of_dataset(self.train_dataset, curriculum.source_weights, curriculum.curriculum_sources)
        bins = [str(b) for b in self.train_dataset["difficulty"]]
        self.solve_rates = CumulativeSolveRates({b: bins.count(b) for b in sorted(set(bins))})
        if curriculum.frontier is not None:
            self.frontier = FrontierPolicy(
                curriculum.frontier_bins or sorted(self.mix.scoped_bins()), curriculum.frontier, lag=self.geometry.lag
            )
        self.out_dir = Path(self.args.output_dir)
        self.add_callback(_CurriculumCallback(self))
        self.add_callback(TrainerLog())

    def _weights_fn(self, round_: int, step: int):
        """Weights over the sampler's strata: the curriculum's bin weights, mixed over sources."""
        if self.frontier is not None:
            return self.mix.weights(self.frontier.weights_for_round(round_))
        return self.mix.weights(self.curriculum.schedule.weights_at(step))

    def _get_train_sampler(self, dataset=None):
        self.curriculum_sampler = CurriculumRepeatSampler(
            self.mix.strata,  # one per row of train_dataset, the only dataset the Trainer samples
            mini_repeat_count=self.num_generations,
            batch_size=self.geometry.prompts,
            repeat_count=self.geometry.batches_per_round,
            weights_fn=self._weights_fn,
            steps_per_round=self.geometry.batches_per_round / self.geometry.grad_accum,
            # args.seed, not the per-process seed: every process must draw the same indices.
            seed=self.args.seed,
        )
        return self.curriculum_sampler

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        if self.model.training:
            from accelerate.utils import gather_object

            # Every process gets the same gathered rewards and bins, so every process's frontier
            # state stays identical without further communication.
            keys = gather_object([(str(x.get("difficulty")), str(x.get("problem_id"))) for x in inputs])
            rewards = combined_rewards(self, rewards_per_func)
            self._record_round(keys, rewards)
            if self.completion_log is not None:
                self._log_completions(inputs, completions, rewards)  # rewards: already every process's
        return rewards_per_func

    def _log_completions(self, inputs, completions, rewards: list[float | None]) -> None:
        """This round's completions with their rewards, gathered, written by the main process."""
        from accelerate.utils import gather_object

        from synthgen.train.rewards import completion_text

        rows = gather_object([{k: x.get(k) for k in ("problem_id", "env", "difficulty")} for x in inputs])
        texts = gather_object([completion_text(c) for c in completions])
        if self.accelerator.is_main_process:
            round_ = self._next_round - 1
            self.completion_log.write(round_, self._step_of_round(round_), rows, texts, rewards)

    def _step_of_round(self, round_: int) -> int:
        sampler = self.curriculum_sampler
        return sampler.step_of_round(round_) if sampler else self.state.global_step

    def _record_round(self, keys: list[tuple[str, str]], rewards: list[float | None]) -> None:
        round_, g = self._next_round, self.num_generations
        self._next_round += 1
        # bin -> groups, groups with a scored completion, regret sum, solved, scored, infra
        per_bin: dict[str, list[float]] = {}
        drawn: list[tuple[str, str, int]] = []  # (bin, problem, solved completions) per group
        # A group whose G rows are not one problem means the processes disagreed on the draw:
        # the advantages would be meaningless, so it is counted and reported, never hidden.
        split_groups = 0
        for start in range(0, len(rewards), g):
            (b, problem), group = keys[start], rewards[start : start + g]
            split_groups += len(set(keys[start : start + g])) != 1
            rho, solved, scored = group_regret(group) or (0.0, 0, 0)
            acc = per_bin.setdefault(b, [0, 0, 0.0, 0, 0, 0])
            for i, value in enumerate((1, scored > 0, rho, solved, scored, sum(v is None for v in group))):
                acc[i] += value
            drawn.append((b, problem, solved))
        self.solve_rates.update(round_, drawn)
        if self.frontier is not None:
            # A group that was all infra says nothing about difficulty: only scored groups count.
            self.frontier.record(round_, {b: tuple(v[1:5]) for b, v in per_bin.items()})
        step = self._step_of_round(round_)
        strata = self.curriculum_sampler.weights(round_) if self.curriculum_sampler else {}
        weights = self.mix.by_bin(strata)
        source_weights = None if self.mix.pooled else self.mix.by_source(strata)
        cumulative = self.solve_rates.rows(round_, step)
        metrics = self._metrics["train"]
        for key, shares in (("weight", weights), ("source_weight", source_weights or {})):
            for name, w in shares.items():
                metrics[f"curriculum/{key}/{name}"].append(w)
        for b, (groups, _, _, solved, scored, _) in per_bin.items():
            if scored:
                metrics[f"curriculum/solve_rate/{b}"].append(solved / scored)
            metrics[f"curriculum/groups/{b}"].append(groups)
        for row in cumulative:
            if row["cumulative_solve_rate"] != "":
                metrics[f"curriculum/cumulative_solve_rate/{row['bin']}"].append(row["cumulative_solve_rate"])
        if split_groups:
            logger.warning("round %d: %d prompt group(s) mix different problems", round_, split_groups)
        if not self.accelerator.is_main_process:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        bins_out, rows = {}, []
        for b in sorted(set(per_bin) | set(weights)):
            groups, scored_groups, regret_sum, solved, scored, infra = per_bin.get(b, [0, 0, 0.0, 0, 0, 0])
            rate = solved / scored if scored else None
            regret = regret_sum / scored_groups if scored_groups else None
            counts = {"groups": int(groups), "solved": int(solved), "scored": int(scored), "infra": int(infra)}
            if groups:
                bins_out[b] = {**counts, "solve_rate": rate, "regret": regret}
            shown = ["" if v is None else round(v, 6) for v in (rate, regret)]
            rows.append(
                dict(zip(PER_ROUND_FIELDS, (round_, step, b, round(weights.get(b, 0.0), 6), *counts.values(), *shown)))
            )
        line = {
            "round": round_,
            "step": step,
            "curriculum": self.curriculum.name,
            "split_groups": split_groups,
            "weights": {b: round(w, 6) for b, w in sorted(weights.items())},
            "bins": bins_out,
            "cumulative_solve_rate": {r["bin"]: r["cumulative_solve_rate"] for r in cumulative},
        }
        if source_weights is not None:
            line["source_weights"] = {s: round(w, 6) for s, w in sorted(source_weights.items())}
        with open(self.out_dir / ROUNDS_FILE, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, sort_keys=True) + "\n")
        append_csv(self.out_dir / PER_ROUND_FILE, PER_ROUND_FIELDS, rows)
        append_csv(self.out_dir / CUMULATIVE_FILE, CUMULATIVE_FIELDS, cumulative)

    def _truncate_metrics(self, from_round: int) -> None:
        """On resume, drop rows of rounds the interrupted run got to after its last checkpoint."""
        keep_lines(self.out_dir / ROUNDS_FILE, lambda line, _: line.strip() and json.loads(line)["round"] < from_round)
        for name in (PER_ROUND_FILE, CUMULATIVE_FILE):
            truncate_csv(self.out_dir / name, from_round)
        if self.completion_log is not None:
            self.completion_log.drop_after(from_round - 1)

    def create_model_card(self, model_name=None, dataset_name=None, tags=None):
        super().create_model_card(model_name=model_name, dataset_name=dataset_name, tags=tags)
        if self.is_world_process_zero() and self.base_model_name:
            name_base_model(Path(self.args.output_dir) / "README.md", self.base_model_name)

    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.args.should_save:
            state = {
                "curriculum": self.curriculum.name,
                "next_round": self._next_round,
                "frontier": self.frontier.state_dict() if self.frontier else None,
                "solve_rates": self.solve_rates.state_dict(),
            }
            (checkpoint_folder(self, trial) / STATE_FILE).write_text(json.dumps(state), encoding="utf-8")

    def restore(self, checkpoint: str) -> None:
        """Before `train(resume_from_checkpoint=...)`: the curriculum state the checkpoint holds."""
        self.checkpoint_used = checkpoint
        self.checkpoint_step = json.loads((Path(checkpoint) / "trainer_state.json").read_text())["global_step"]
        path = Path(checkpoint) / STATE_FILE
        if not path.exists():
            return
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("curriculum") != self.curriculum.name:
            logger.warning(
                "resuming a %r run with curriculum %r: the schedule changes from here on",
                state.get("curriculum"),
                self.curriculum.name,
            )
        if self.frontier is not None and state.get("frontier"):
            self.frontier.load_state_dict(state["frontier"])
        if state.get("solve_rates"):
            self.solve_rates.load_state_dict(state["solve_rates"])


class _CurriculumCallback(TrainerCallback):
    def __init__(self, trainer: CurriculumGRPOTrainer):
        self.trainer = trainer

    def on_train_begin(self, args, state, control, **kwargs):
        # The state is restored by now: the next generation round follows the restored step.
        t = self.trainer
        t._next_round = t.geometry.round_of_step(state.global_step)
        t.solve_rates.forget_from(t._next_round)
        if t.accelerator.is_main_process:
            t._truncate_metrics(t._next_round)


class TrainerLog(TrainerCallback):
    """TRL's log lines to OUTPUT/trainer_log.jsonl (synchronous and --async trainers), and the step last saved."""

    def __init__(self):
        self.saved_step: int | None = None  # the step of the newest checkpoint this process saved

    def on_save(self, args, state, control, **kwargs):
        self.saved_step = state.global_step

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and state.is_world_process_zero:
            out = Path(args.output_dir)
            out.mkdir(parents=True, exist_ok=True)
            clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in logs.items()}
            with open(out / LOG_FILE, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"step": state.global_step, **clean}, sort_keys=True) + "\n")


def save_final(trainer, out: Path) -> None:
    """The final weights in OUTPUT. TRL saves a checkpoint at the last step; writing the same weights
    again with save_model doubled the disk writes of every run (16 GB for an 8B model), so the
    checkpoint's model files are linked into OUTPUT instead. Every process takes the same branch
    (the step is shared), so save_model's collective gathers under DeepSpeed stay matched."""
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    step = trainer.state.global_step
    saved = next(c.saved_step for c in trainer.callback_handler.callbacks if isinstance(c, TrainerLog))
    if saved != step:
        trainer.save_model(str(out))
        return
    if trainer.accelerator.is_main_process:
        link_final_weights(out / f"{PREFIX_CHECKPOINT_DIR}-{step}", out)
    trainer.accelerator.wait_for_everyone()
