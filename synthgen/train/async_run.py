"""`synthgen train --async`: the train stage on TRL's asynchronous GRPO trainer (a GPU and a vLLM server).

    prepared = prepare(settings)          # recipe, data plan, AsyncGRPOConfig, curriculum-ordered prompts
    print(describe_plan(prepared))        # what `train --async --dry-run` prints; nothing loads or connects
    run_async(settings)                   # train: needs CUDA, vllm and the server at --vllm-server-url

The same pieces as the synchronous stage (synthgen.train.run): recipes, the data plan (sources,
held-out splits, per-env budget), the curriculum's `CurriculumSampler` (as the prompt order,
synthgen.train.async_feed), the sandboxed reward (`SandboxReward` over `EnvScorer`, pickled into
TRL's rollout process, where it starts its own sandbox pool), periodic evaluation (sampled from
the vLLM server, which holds the weights of the last sync, instead of in-process). What this
stage does not write: the synchronous trainer's per-round, per-bin files (curriculum_metrics.jsonl,
the solve-rate CSVs) and completion logs, since rewards are computed in TRL's rollout process.

The server is started apart, as TRL's async trainer expects:
    VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend":"nccl"}' --port 8000
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from synthgen.errors import UserError

log = logging.getLogger(__name__)

LOG_FILE = "trainer_log.jsonl"  # as the synchronous trainer's


@dataclass
class Prepared:
    settings: Any
    model: str
    out: Path
    max_steps: int
    spec: Any
    plan: Any
    args: Any  # AsyncGRPOConfig
    dropped: list[str]
    dataset: Any  # the training set in curriculum order (what TRL's rollout process walks)
    sampler: Any
    groups_per_step: int
    num_processes: int
    missing_bins: list[str] = field(default_factory=list)


def prepare(settings, *, prompt_fn=None, evaluators=None, plan_only: bool = False) -> Prepared:
    """Everything up to the trainer: checks, config, data and order. Loads no model, contacts nothing.
    `plan_only`: for the dry run (GPU-only settings are set aside on a machine without one)."""
    from synthgen.train.async_config import build_async_config, check_async_settings
    from synthgen.train.async_feed import feed
    from synthgen.train.data import bin_counts, to_dataset
    from synthgen.train.run import (
        check_bins,
        grpo_overrides,
        recipe_origin,
        run_plan,
    )

    check_async_settings(settings)
    recipe, model, out, max_steps, spec, plan = run_plan(settings, evaluators)
    scoped = [r for r in plan.rows if plan.curriculum_sources is None or r["source"] in plan.curriculum_sources]
    missing = check_bins(spec.schedule, bin_counts(scoped), settings.missing_bins)
    overrides = grpo_overrides(settings, out, max_steps, recipe)
    args, dropped = build_async_config(
        recipe, overrides, max_staleness=settings.max_staleness, where=recipe_origin(settings), plan_only=plan_only
    )
    processes = int(os.environ.get("WORLD_SIZE", "1"))
    dataset, sampler, _, k = feed(
        to_dataset(plan.rows, prompt_fn), spec, args, num_processes=processes, max_steps=max_steps
    )
    return Prepared(settings, model, out, max_steps, spec, plan, args, dropped, dataset, sampler, k, processes, missing)


def describe_plan(p: Prepared) -> str:
    """The dry run's text: the trainer, the server, the config, the dropped keys and the first rounds."""
    import trl

    from synthgen.train.async_config import ADVANTAGE_NOTE, describe_async, runtime_missing

    k = p.groups_per_step
    head = [str(b) for b in p.dataset.select(range(min(len(p.dataset), 3 * k)))["difficulty"]]
    per_round = [head[r * k : (r + 1) * k] for r in range(len(head) // k)]  # the sampler keeps recent rounds only
    first = "; ".join(
        f"step {r}: " + ", ".join(f"{b} x{drawn.count(b)}" for b in sorted(set(drawn)))
        for r, drawn in enumerate(per_round)
    )
    from synthgen.train.async_config import chat_template_problem

    missing = runtime_missing()
    template = chat_template_problem(p.model)
    lines = [
        f"train --async: TRL {trl.__version__} AsyncGRPOTrainer, generation on the vLLM server at "
        f"{p.args.vllm_server_base_url} (model {p.model})",
        f"data: {len(p.plan.rows)} problems {p.plan.summary()['envs']}, curriculum {p.spec.name}, "
        f"{p.max_steps} steps x {p.groups_per_step} groups of G={p.args.num_generations}",
        f"prompt order: {len(p.dataset)} groups ({len(p.dataset) // p.groups_per_step} rounds); {first}",
        f"grpo: {describe_async(p.args)}",
        f"dropped (no AsyncGRPOConfig field): {', '.join(p.dropped) or 'none'}",
        f"differs from the paper: {ADVANTAGE_NOTE}",
        f"output: {p.out}",
        "this machine: " + ("ready to train" if not missing else f"cannot train here (no {', '.join(missing)})"),
        f"chat template: {'parsed by TRL' if template is None else template + ': a real run stops'}",
    ]
    if p.missing_bins:
        lines.insert(2, f"bins the schedule wants but the data lacks (weight shared out): {', '.join(p.missing_bins)}")
    return "\n".join(lines)


def require_runtime() -> None:
    from synthgen.train.async_config import runtime_missing

    missing = runtime_missing()
    if missing:
        raise UserError(
            f"--async trains on a GPU with a vLLM server; this machine has no {', '.join(missing)} "
            "(`train --async --dry-run` checks the rest here)"
        )


def build_trainer(p: Prepared, reward, *, callbacks=None, **trainer_kwargs):
    """TRL's AsyncGRPOTrainer over the curriculum-ordered prompts (`trainer_kwargs`: TRL's own seams)."""
    from synthgen.train.async_config import async_trl

    trainer = async_trl().AsyncGRPOTrainer(
        model=p.model,
        reward_funcs=[reward],
        args=p.args,
        train_dataset=p.dataset,
        callbacks=callbacks,
        **trainer_kwargs,
    )
    trainer.add_callback(_JsonlLog(trainer))
    return trainer


def run_async(settings, *, scorer=None, prompt_fn=None, callbacks=None, evaluators=None, trainer_kwargs=None) -> Path:
    """Train with --async; returns the output folder (as synthgen.train.run.run)."""
    from synthgen.train.data import env_prompt
    from synthgen.train.rewards import EnvScorer, SandboxReward
    from synthgen.train.run import resume_checkpoint

    started = time.time()
    from synthgen.train.async_config import chat_template_problem

    p = prepare(settings, prompt_fn=prompt_fn, evaluators=evaluators)
    require_runtime()
    problem = chat_template_problem(p.model)
    if problem:
        raise UserError(f"--async: {problem}")
    if scorer is None:
        probe = EnvScorer(settings.sandbox)
        probe.start()  # fail now, in one line, if no sandbox isolation works here
        probe.close()  # the rollout process starts its own pool: what is pickled holds none
        scorer = EnvScorer(settings.sandbox)
    reward = SandboxReward(scorer, max_completion_length=p.args.max_completion_length)
    from transformers import AutoTokenizer

    reward.eos_token_id = AutoTokenizer.from_pretrained(p.model).eos_token_id  # before TRL pickles the reward
    trainer = build_trainer(p, reward, callbacks=callbacks, **(trainer_kwargs or {}))
    from synthgen.train.quiet import install_progress

    install_progress(trainer)
    _add_server_eval(trainer, p, scorer, prompt_fn or env_prompt, list(evaluators or []))
    checkpoint = resume_checkpoint(settings, p.out)
    trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model(str(p.out))
    if trainer.accelerator.is_main_process:
        from synthgen.train.async_config import ADVANTAGE_NOTE, describe_async

        steps = trainer.state.global_step
        runtime = next((e["train_runtime"] for e in reversed(trainer.state.log_history) if "train_runtime" in e), None)
        summary = {
            "trainer": "async",
            "model": p.model,
            "data": p.plan.summary(),
            "curriculum": p.spec.name,
            "schedule": p.spec.schedule.render(),
            "missing_bins": p.missing_bins,
            "max_steps": p.max_steps,
            "global_step": steps,
            "resumed_from": checkpoint,
            "grpo": describe_async(p.args),
            "dropped_recipe_keys": p.dropped,
            "differs_from_paper": ADVANTAGE_NOTE,
            "seconds": round(time.time() - started, 1),
            "step_seconds": round(runtime / steps, 4) if runtime and steps else None,
        }
        (p.out / "train_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return p.out


def _add_server_eval(trainer, p: Prepared, scorer, prompt_fn, evaluators) -> None:
    ev = p.settings.eval
    if not ev.steps:
        return
    from synthgen.evals.train_hook import benchmark_evaluators, server_generate
    from synthgen.train.evaluation import HeldOutEvaluator, PeriodicEval

    acc = trainer.accelerator
    max_tokens = ev.max_completion_length or p.args.max_completion_length
    url = ev.benchmark_url or p.args.vllm_server_base_url.rstrip("/") + "/v1"
    model = ev.benchmark_model if ev.benchmark_url else p.model  # the name the training server serves
    generate = server_generate(url, model, ev.temperature, max_tokens)
    suites = list(evaluators)
    if ev.benchmarks:
        suites += benchmark_evaluators(
            ev, p.settings.sandbox, max_tokens=max_tokens, rank=acc.process_index, world=acc.num_processes
        )
    if p.plan.heldout:
        held = HeldOutEvaluator(
            p.plan.heldout, scorer, prompt_fn, ev.samples, rank=acc.process_index, world=acc.num_processes
        )
        suites.insert(0, held)
    trainer.add_callback(
        PeriodicEval(
            trainer,
            suites,
            every=ev.steps,
            ks=ev.k,
            temperature=ev.temperature,
            max_new_tokens=max_tokens,
            generate=generate,
        )
    )


class _JsonlLog(TrainerCallback):
    """TRL's log lines to OUTPUT/trainer_log.jsonl, as the synchronous trainer writes them."""

    def __init__(self, trainer):
        self.trainer = trainer

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and self.trainer.accelerator.is_main_process:
            out = Path(args.output_dir)
            out.mkdir(parents=True, exist_ok=True)
            clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in logs.items()}
            with open(out / LOG_FILE, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"step": state.global_step, **clean}, sort_keys=True) + "\n")
