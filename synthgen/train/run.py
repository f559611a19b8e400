"""The train stage: settings -> data selection, GRPO config, curriculum, trainer -> checkpoints + metrics.

    from synthgen.train.settings import TrainSettings
    from synthgen.train.run import run
    run(TrainSettings(data=["data/runs/demo/bin"], model="data/tiny-model", curriculum="reverse-medium",
                      max_steps=3, recipe="tiny-cpu"))

Launch on several processes with `accelerate launch --config_file recipes/accelerate/zero2.yaml
-m synthgen train ...` or `torchrun --nproc_per_node N -m synthgen train ...`: every process runs
this same function; TRL and accelerate split the work.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.train.curriculum import ADAPTIVE, EVERYTHING, PAPER_STEPS, CurriculumSpec, Schedule, get_schedule
from synthgen.train.selection import DataSelection

log = logging.getLogger(__name__)


def output_dir(settings) -> Path:
    return Path(settings.output) if settings.output else Path(settings.run_dir) / "train"


def check_bins(schedule: Schedule | None, counts: dict[str, int], policy: str) -> list[str]:
    """Bins the schedule draws from that the data lacks. Under policy 'error' (the default) that stops
    the run: sharing the weight out silently trains another curriculum than the one named (`hard` on
    data without a hard bin is 50/50 easy/medium). Under 'share' one short line says where it goes."""
    if schedule is None:
        return []
    missing = [b for b in schedule.bins_used() if b not in EVERYTHING and counts.get(b, 0) == 0]
    if not missing:
        return []
    present = ", ".join(f"{b} ({n})" for b, n in sorted(counts.items()) if n) or "none"
    lacking = ", ".join(missing)
    if policy == "error":
        raise UserError(
            f"curriculum {schedule.name!r} draws from bin(s) {lacking} that the data lacks (it has {present}); "
            f"--missing-bins share gives their weight to the bins present"
        )
    # Printed, not logged: one line a reader sees, without the logger's time and module prefix.
    print(
        f"synthgen: warning: no {lacking} bin in the data ({present}): curriculum {schedule.name!r} "
        f"gives its weight to each phase's other bins",
        file=sys.stderr,
    )
    return missing


def note_tiny_model(model: str) -> None:
    """One line before a run on a tiny model: its rewards are 0, which is no bug to chase."""
    from synthgen.train.tiny import is_tiny

    if is_tiny(model):
        print(
            f"synthgen: note: {model} is a tiny random model: it never solves a problem, so reward 0 is "
            "expected (the run checks the pipeline, not learning)",
            file=sys.stderr,
        )


def recipe_origin(settings) -> str:
    """Where the recipe came from, for error messages."""
    return f"recipe {settings.recipe}" if settings.recipe else "no --recipe"


def recipe_and_model(settings) -> tuple[dict[str, Any], str]:
    """The run's recipe with an explicit learning rate, and its model, checked before anything loads."""
    from synthgen.train.preflight import check_model
    from synthgen.train.recipe import load_recipe, require_learning_rate

    recipe = load_recipe(settings.recipe)
    where = recipe_origin(settings)
    # A number, never TRL's default (YAML 1.1 reads `6e-8` as a string: it is converted here).
    recipe["learning_rate"] = require_learning_rate(recipe, settings.learning_rate, where)
    model = settings.model or recipe.get("model_name_or_path")
    if not model:
        raise UserError("no model: pass --model PATH (or model_name_or_path in the recipe)")
    return recipe, check_model(str(model))


def resolve_max_steps(settings, recipe: dict[str, Any]) -> int:
    if settings.max_steps:
        return settings.max_steps
    if isinstance(recipe.get("max_steps"), int) and recipe["max_steps"] > 0:
        return recipe["max_steps"]
    if settings.curriculum not in ADAPTIVE:
        return get_schedule(settings.curriculum).length or PAPER_STEPS
    return PAPER_STEPS


# The settings GRPOConfig takes by their own names: the GRPO panel's flags (not --async, --max-staleness), the seed
GRPO_KEYS = (
    "num_generations", "per_device_train_batch_size", "learning_rate", "gradient_accumulation_steps",
    "steps_per_generation", "num_iterations", "max_completion_length", "save_steps", "logging_steps", "report_to",
    "use_vllm", "vllm_mode", "vllm_server_base_url", "seed",
)  # fmt: skip


def grpo_overrides(settings, out: Path, max_steps: int, recipe: dict[str, Any]) -> dict[str, Any]:
    """The GRPOConfig values the flags set (GRPO_KEYS), with the run's folder and length."""
    from synthgen.train.preflight import default_report_to

    values = settings.model_dump(include=set(GRPO_KEYS))
    report_to = settings.report_to or (None if "report_to" in recipe else default_report_to())
    return {**values, "output_dir": str(out), "max_steps": max_steps, "report_to": report_to}


def check_resume_from(settings) -> None:
    """`--resume-from` must name a checkpoint: said in one line before anything loads or logs."""
    if settings.resume_from and not (Path(settings.resume_from) / "trainer_state.json").is_file():
        what = "does not exist" if not Path(settings.resume_from).exists() else "has no trainer_state.json"
        raise UserError(f"--resume-from {settings.resume_from} is not a checkpoint folder (it {what})")


def resume_checkpoint(settings, out: Path) -> str | None:
    if settings.resume_from:
        check_resume_from(settings)
        return str(settings.resume_from)
    if settings.resume:
        from transformers.trainer_utils import get_last_checkpoint

        last = get_last_checkpoint(str(out)) if out.is_dir() else None
        if last is None:
            log.warning("--resume: no checkpoint in %s yet; starting from step 0", out)
        return last
    return None


@dataclass
class RunInputs:
    """What a trainer (synchronous or --async) settles before it starts."""

    recipe: dict[str, Any]
    model: str
    out: Path
    max_steps: int
    spec: CurriculumSpec  # with the data's source weights
    data: DataSelection
    missing_bins: list[str]  # bins the schedule wants and the data lacks (their weight shared out)


def prepare_run(settings, evaluators=None) -> RunInputs:
    from synthgen.train.data import bin_counts
    from synthgen.train.selection import select_data

    recipe, model = recipe_and_model(settings)
    max_steps = resolve_max_steps(settings, recipe)
    if settings.curriculum in ADAPTIVE:
        bins = list(settings.frontier.bins) if settings.frontier.bins else None
        spec = CurriculumSpec(settings.curriculum, None, settings.frontier, bins)
    else:
        schedule = get_schedule(settings.curriculum).scaled(max_steps)
        spec = CurriculumSpec(schedule.name, schedule)
    ev = settings.eval
    if ev.steps and not (ev.heldout_fraction or ev.heldout or evaluators or ev.benchmarks):
        raise UserError(
            "--eval-every needs held-out problems (--eval-heldout-fraction F or --eval-heldout DIR) "
            "or benchmarks (--eval-benchmarks lcb)"
        )
    data = select_data(settings)
    spec.source_weights, spec.curriculum_sources = data.weights, data.curriculum_sources
    scope = data.curriculum_sources
    scoped = bin_counts([r for r in data.rows if scope is None or r["source"] in scope])
    missing = check_bins(spec.schedule, scoped, settings.missing_bins)
    return RunInputs(recipe, model, output_dir(settings), max_steps, spec, data, missing)


def run(settings, *, scorer=None, prompt_fn=None, callbacks=None, evaluators=None) -> Path:
    """Train; returns the output folder. `scorer` / `prompt_fn` replace the env-based ones (tests);
    `evaluators` add evaluation suites (synthgen.train.evaluation.Evaluator) to the held-out one.
    An `--online` run has its own entry point, synthgen.online.run.run_online (same arguments)."""
    if settings.online.enabled:
        raise UserError("this is the offline trainer; an --online run goes through synthgen.online.run.run_online")
    from synthgen.train.data import bin_counts, to_dataset
    from synthgen.train.recipe import build_grpo_config, describe
    from synthgen.train.rewards import EnvScorer

    started = time.time()
    run_in = prepare_run(settings, evaluators)
    overrides = grpo_overrides(settings, run_in.out, run_in.max_steps, run_in.recipe)
    args = build_grpo_config(run_in.recipe, overrides, where=recipe_origin(settings))
    _warn_about_schedule(args, run_in.max_steps)
    dataset = to_dataset(run_in.data.rows, prompt_fn)
    if scorer is None:
        scorer = EnvScorer(settings.sandbox)
        scorer.start()  # fail now, in one line, if no sandbox isolation works here
    note_tiny_model(run_in.model)  # after the checks: an error stays the one line on stderr
    try:
        trainer = _trainer(settings, args, run_in, dataset, scorer, callbacks)
        train_and_save(trainer, settings, run_in, scorer, prompt_fn, evaluators, restore_curriculum=True)
    finally:
        if hasattr(scorer, "close"):
            scorer.close()
    write_summary(
        trainer,
        run_in,
        started,
        bins=bin_counts(run_in.data.rows),
        resumed_from=trainer.checkpoint_used,
        grpo=describe(args),
        clip_fraction=_mean_logged(trainer, "clip_ratio/region_mean"),
        step_seconds=step_seconds(trainer, trainer.checkpoint_step),
        # Frontier rounds drawn before the stats they should use existed (0 unless the lag is short).
        frontier_late_rounds=trainer.frontier.late_rounds if trainer.frontier else None,
        # What shaped the run, so that `synthgen compare` groups runs that differ only in seed.
        settings=settings.hashed_view(),
        settings_hash=settings.settings_hash(),
    )
    return run_in.out


def train_and_save(
    trainer, settings, run_in: RunInputs, scorer, prompt_fn, evaluators, generate=None, restore_curriculum=False
) -> str | None:
    """What both trainers do around `train()`: the progress line, periodic evaluation (`generate`: see
    add_periodic_eval), resume (and the curriculum's state if `restore_curriculum`), the final weights; returns the
    checkpoint resumed from."""
    from synthgen.interop.records import student_prompt
    from synthgen.train.evaluation import add_periodic_eval
    from synthgen.train.quiet import install_progress
    from synthgen.train.trainer import save_final

    install_progress(trainer)
    suites = (prompt_fn or student_prompt, list(evaluators or []), run_in.data.heldout)
    add_periodic_eval(trainer, settings, trainer.args, scorer, *suites, generate=generate)
    checkpoint = resume_checkpoint(settings, run_in.out)
    if checkpoint and restore_curriculum:
        trainer.restore(checkpoint)
    trainer.train(resume_from_checkpoint=checkpoint)
    save_final(trainer, run_in.out)
    return checkpoint


def write_summary(trainer, run_in: RunInputs, started: float, **fields) -> None:
    """OUTPUT/train_summary.json (the main process): what every run reports, then the trainer's `fields`."""
    if not trainer.accelerator.is_main_process:
        return
    spec = run_in.spec
    summary = {
        "model": run_in.model,
        "data": run_in.data.summary(),
        "curriculum": spec.name,
        "schedule": spec.schedule.render() if spec.schedule else "frontier (adaptive)",
        "missing_bins": run_in.missing_bins,
        "max_steps": run_in.max_steps,
        "global_step": trainer.state.global_step,
        "seconds": round(time.time() - started, 1),
        **fields,
    }
    (run_in.out / "train_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def _warn_about_schedule(args, max_steps: int) -> None:
    from synthgen.train.recipe import is_on_policy

    if is_on_policy(args):
        log.info(
            "on-policy updates (num_iterations=1, steps_per_generation=gradient_accumulation_steps): the policy "
            "ratio is 1 and the epsilon clip never acts; --steps-per-generation or --num-iterations change that"
        )
    warmup = args.warmup_steps if args.warmup_steps >= 1 else args.warmup_steps * max_steps
    if warmup > max_steps / 2:
        log.warning("warm-up (%d steps) takes more than half of this %d-step run", warmup, max_steps)


def _mean_logged(trainer, key: str) -> float | None:
    values = [e[key] for e in trainer.state.log_history if isinstance(e.get(key), (int, float))]
    return round(sum(values) / len(values), 6) if values else None


def step_seconds(trainer, first_step: int = 0) -> float | None:
    """Seconds per optimizer step of this session (from `first_step`, where a resumed run started)."""
    final = next((e for e in reversed(trainer.state.log_history) if "train_runtime" in e), None)
    steps = trainer.state.global_step - first_step
    return round(final["train_runtime"] / steps, 4) if final and steps > 0 else None


def _trainer(settings, args, run_in: RunInputs, dataset, scorer, callbacks):
    from synthgen.train.completions import CompletionLog
    from synthgen.train.recipe import describe
    from synthgen.train.rewards import SandboxReward
    from synthgen.train.trainer import CurriculumGRPOTrainer

    reward = SandboxReward(scorer, max_completion_length=args.max_completion_length)
    mode = settings.save_completions
    trainer = CurriculumGRPOTrainer(
        model=run_in.model,
        reward_funcs=[reward],
        args=args,
        train_dataset=dataset,
        curriculum=run_in.spec,
        callbacks=callbacks,
        completion_log=None if mode == "none" else CompletionLog(run_in.out, mode),
    )
    reward.eos_token_id = getattr(trainer.processing_class, "eos_token_id", None)
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched != trainer.accelerator.num_processes:
        # Processes that did not join one job would each train alone into the same folder.
        raise UserError(
            f"{launched} processes were launched but the trainer sees "
            f"{trainer.accelerator.num_processes}; on CPU set use_cpu: true in the recipe"
        )
    if trainer.accelerator.is_main_process:
        log.info(
            "train: %d problems %s, curriculum %s, %d steps; %s",
            len(dataset),
            trainer.solve_rates.sizes,
            run_in.spec.name,
            args.max_steps,
            describe(args),
        )
    return trainer
