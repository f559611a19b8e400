"""The train stage: settings -> dataset, GRPO config, curriculum, trainer -> checkpoints + metrics.

    from synthgen.config.train import TrainSettings
    from synthgen.train.run import run
    run(TrainSettings(data=["data/runs/demo/bin"], model="data/tiny-model", curriculum="reverse-medium",
                      max_steps=3, recipe="recipes/tiny-cpu.yaml"))

Launch on several processes with `accelerate launch --config_file recipes/accelerate/zero2.yaml
-m synthgen train ...` or `torchrun --nproc_per_node N -m synthgen train ...`: every process runs
this same function; TRL and accelerate split the work.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from synthgen.curriculum import ADAPTIVE, FrontierSettingsData, PAPER_STEPS, Schedule, get_schedule
from synthgen.errors import UserError

log = logging.getLogger(__name__)


def output_dir(settings) -> Path:
    return Path(settings.output) if settings.output else Path(settings.run_dir) / "train"


def data_dirs(settings) -> list[str]:
    return list(settings.data) or [str(Path(settings.run_dir) / "bin")]


def curriculum_spec(name: str, max_steps: int | None, frontier=None):
    """The curriculum for a run of `max_steps` steps: a scaled schedule, or the frontier rule."""
    from synthgen.train.trainer import CurriculumSpec

    if name in ADAPTIVE:
        data = FrontierSettingsData(**(frontier.model_dump(exclude={"bins"}) if frontier else {}))
        return CurriculumSpec(name, None, data, list(frontier.bins) if frontier and frontier.bins else None)
    schedule = get_schedule(name).scaled(max_steps)
    return CurriculumSpec(schedule.name, schedule)


def check_bins(schedule: Schedule | None, counts: dict[str, int], policy: str) -> list[str]:
    """Bins the schedule draws from that the data lacks; an error under policy 'error'."""
    if schedule is None:
        return []
    missing = [b for b in schedule.bins_used() if b != "*" and counts.get(b, 0) == 0]
    if missing and policy == "error":
        raise UserError(f"curriculum {schedule.name!r} draws from bin(s) {', '.join(missing)} but the data has "
                        f"only {', '.join(f'{b} ({n})' for b, n in counts.items())}")
    return missing


def resolve_max_steps(settings, recipe: dict[str, Any]) -> int:
    if settings.max_steps:
        return settings.max_steps
    if isinstance(recipe.get("max_steps"), int) and recipe["max_steps"] > 0:
        return recipe["max_steps"]
    if settings.curriculum not in ADAPTIVE:
        return get_schedule(settings.curriculum).length or PAPER_STEPS
    return PAPER_STEPS


def grpo_overrides(settings, out: Path, max_steps: int) -> dict[str, Any]:
    return {
        "output_dir": str(out),
        "max_steps": max_steps,
        "seed": settings.seed,
        "num_generations": settings.num_generations,
        "per_device_train_batch_size": settings.per_device_train_batch_size,
        "learning_rate": settings.learning_rate,
        "max_completion_length": settings.max_completion_length,
        "save_steps": settings.save_steps,
        "logging_steps": settings.logging_steps,
        "report_to": settings.report_to,
        "use_vllm": settings.use_vllm,
        "vllm_mode": settings.vllm_mode,
        "vllm_server_base_url": settings.vllm_server_base_url,
    }


def resume_checkpoint(settings, out: Path) -> str | None:
    if settings.resume_from:
        path = Path(settings.resume_from)
        if not (path / "trainer_state.json").exists():
            raise UserError(f"not a checkpoint folder (no trainer_state.json): {path}")
        return str(path)
    if settings.resume:
        from transformers.trainer_utils import get_last_checkpoint

        last = get_last_checkpoint(str(out)) if out.is_dir() else None
        if last is None:
            log.warning("--resume: no checkpoint in %s yet; starting from step 0", out)
        return last
    return None


def run(settings, *, scorer=None, prompt_fn=None, callbacks=None) -> Path:
    """Train; returns the output folder. `scorer` / `prompt_fn` replace the env-based ones (tests)."""
    from synthgen.train.data import bin_counts, load_problem_rows, to_dataset
    from synthgen.train.recipe import build_grpo_config, describe, load_recipe
    from synthgen.train.rewards import EnvScorer

    started = time.time()
    recipe = load_recipe(settings.recipe)
    model = settings.model or recipe.get("model_name_or_path")
    if not model:
        raise UserError("no model: pass --model PATH (or model_name_or_path in the recipe)")
    out = output_dir(settings)
    max_steps = resolve_max_steps(settings, recipe)
    spec = curriculum_spec(settings.curriculum, max_steps, settings.frontier)

    rows = load_problem_rows(data_dirs(settings))
    counts = bin_counts(rows)
    missing = check_bins(spec.schedule, counts, settings.missing_bins)
    if missing:
        log.warning("curriculum %s wants bin(s) %s that the data lacks; their weight goes to the phase's other "
                    "bins (or to every bin when a phase has none): data bins are %s", spec.name, missing, counts)
    args = build_grpo_config(recipe, grpo_overrides(settings, out, max_steps), where=str(settings.recipe or "recipe"))
    dataset = to_dataset(rows, prompt_fn)
    if scorer is None:
        scorer = EnvScorer(settings.sandbox)
        scorer.start()  # fail now, in one line, if no sandbox isolation works here
    try:
        trainer = _train(settings, args, model, dataset, spec, scorer, callbacks, out, rows, counts, max_steps)
    finally:
        if hasattr(scorer, "close"):
            scorer.close()
    trainer.save_model(str(out))
    if trainer.accelerator.is_main_process:
        summary = {
            "model": model, "data": data_dirs(settings), "bins": counts, "curriculum": spec.name,
            "schedule": spec.schedule.render() if spec.schedule else "frontier (adaptive)",
            "missing_bins": missing, "max_steps": max_steps, "global_step": trainer.state.global_step,
            "resumed_from": trainer.checkpoint_used, "grpo": describe(args), "seconds": round(time.time() - started, 1),
            # Frontier rounds drawn before the stats they should use existed (0 unless the lag is short).
            "frontier_late_rounds": trainer.frontier.late_rounds if trainer.frontier else None,
        }
        (out / "train_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return out


def _train(settings, args, model, dataset, spec, scorer, callbacks, out, rows, counts, max_steps):
    from synthgen.train.recipe import describe
    from synthgen.train.rewards import SandboxReward
    from synthgen.train.trainer import CurriculumGRPOTrainer

    reward = SandboxReward(scorer, max_completion_length=args.max_completion_length)
    trainer = CurriculumGRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=dataset,
                                    curriculum=spec, callbacks=callbacks)
    reward.eos_token_id = getattr(trainer.processing_class, "eos_token_id", None)
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched != trainer.accelerator.num_processes:
        # Processes that did not join one job would each train alone into the same folder.
        raise UserError(f"{launched} processes were launched but the trainer sees "
                        f"{trainer.accelerator.num_processes}; on CPU set use_cpu: true in the recipe")
    checkpoint = resume_checkpoint(settings, out)
    if checkpoint:
        trainer.load_curriculum_state(checkpoint)
    if trainer.accelerator.is_main_process:
        log.info("train: %d problems %s, curriculum %s, %d steps; %s", len(rows), counts, spec.name, max_steps,
                 describe(args))
    trainer.train(resume_from_checkpoint=checkpoint)
    trainer.checkpoint_used = checkpoint
    return trainer
