"""`synthgen train --async`: the train stage on TRL's asynchronous GRPO trainer (a GPU and a vLLM server).

    setup = prepare(settings)             # recipe, data, AsyncGRPOConfig, curriculum-ordered prompts
    print(describe_setup(setup))          # what `train --async --dry-run` prints; nothing loads or connects
    run_async(settings)                   # train: needs CUDA, vllm and the server at --vllm-server-url

The same pieces as the synchronous stage (synthgen.train.run): recipes, the data selection (sources,
held-out splits, per-env budget), the curriculum's `CurriculumDraw` (as the prompt order: see
below), the sandboxed reward (`SandboxReward` over `EnvScorer`, pickled into
TRL's rollout process, where it starts its own sandbox pool), periodic evaluation (sampled from
the vLLM server, which holds the weights of the last sync, instead of in-process). What this
stage does not write: the synchronous trainer's per-round, per-bin files (curriculum_metrics.jsonl,
the solve-rate CSVs) and completion logs, since rewards are computed in TRL's rollout process.

The server is started apart, as TRL's async trainer expects:
    VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend":"nccl"}' --port 8000

The curriculum is fed by *order*. TRL's rollout process walks its dataset in order, one prompt per
group (it repeats each row G times itself), cycling at the end, and a resumed run restarts at the
first group not yet trained (`rollout_state.json`). So the dataset handed to TRL is the training
set re-indexed so that rows r*K .. r*K+K-1 are the K groups the draw makes for round r, where a
round is one optimizer step's groups (K = per-device batch x accumulation x processes / G) and the
weights are the schedule's at step r: a pure function of the settings and the data, which a resume
replays. A group drawn for step r trains at about step r: the rollout process runs at most
`max_staleness` steps ahead. The order holds `rounds_needed` rounds, room for the rollouts TRL drops
as stale, so it never wraps back to step 0's weights in a run of `max_steps`.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.interop.curriculum import CurriculumDraw
from synthgen.train.async_config import (
    ADVANTAGE_NOTE,
    async_trl,
    build_async_config,
    chat_template_problem,
    check_async_settings,
    describe_async,
    runtime_missing,
)
from synthgen.train.run import RunInputs

log = logging.getLogger(__name__)


@dataclass
class AsyncSetup:
    """An --async run up to the trainer: its inputs, TRL's config and the curriculum-ordered prompts."""

    run: RunInputs
    args: Any  # AsyncGRPOConfig
    dropped: list[str]  # merged settings AsyncGRPOConfig has no field for
    dataset: Any  # the training set in curriculum order (what TRL's rollout process walks)
    draw: CurriculumDraw
    groups_per_step: int


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


def prepare(settings, *, prompt_fn=None, evaluators=None, dry_run: bool = False) -> AsyncSetup:
    """Everything up to the trainer: checks, config, data and order. Loads no model, contacts nothing.
    `dry_run`: for the dry run (GPU-only settings are set aside on a machine without one)."""
    from synthgen.train.data import to_dataset
    from synthgen.train.mix import SourceMix
    from synthgen.train.run import grpo_overrides, prepare_run, recipe_origin

    check_async_settings(settings)
    run_in = prepare_run(settings, evaluators)
    overrides = grpo_overrides(settings, run_in.out, run_in.max_steps, run_in.recipe)
    args, dropped = build_async_config(
        run_in.recipe,
        overrides,
        max_staleness=settings.max_staleness,
        where=recipe_origin(settings),
        dry_run=dry_run,
    )
    k = groups_per_step(args, int(os.environ.get("WORLD_SIZE", "1")))
    dataset = to_dataset(run_in.data.rows, prompt_fn)
    spec = run_in.spec
    mix = SourceMix.of_dataset(dataset, spec.source_weights, spec.curriculum_sources)
    draw = CurriculumDraw(
        mix.strata,
        batch_size=k,  # groups: TRL's rollout process repeats each prompt G times itself
        weights_fn=lambda _round, step: mix.weights(spec.schedule.weights_at(step)),
        seed=args.seed,
    )
    rounds = rounds_needed(run_in.max_steps, args.max_staleness)
    order = [i for r in range(rounds) for i in draw.chunk(r)]
    return AsyncSetup(run_in, args, dropped, dataset.select(order), draw, k)


def describe_setup(p: AsyncSetup) -> str:
    """The dry run's text: the trainer, the server, the config, the dropped keys and the first rounds."""
    import trl

    k, run_in = p.groups_per_step, p.run
    head = [str(b) for b in p.dataset.select(range(min(len(p.dataset), 3 * k)))["difficulty"]]
    per_round = [head[r * k : (r + 1) * k] for r in range(len(head) // k)]  # the draw keeps recent rounds only
    first = "; ".join(
        f"step {r}: " + ", ".join(f"{b} x{drawn.count(b)}" for b in sorted(set(drawn)))
        for r, drawn in enumerate(per_round)
    )
    missing = runtime_missing()
    template = chat_template_problem(run_in.model)
    lines = [
        f"train --async: TRL {trl.__version__} AsyncGRPOTrainer, generation on the vLLM server at "
        f"{p.args.vllm_server_base_url} (model {run_in.model})",
        f"data: {len(run_in.data.rows)} problems {run_in.data.summary()['envs']}, curriculum {run_in.spec.name}, "
        f"{run_in.max_steps} steps x {k} groups of G={p.args.num_generations}",
        f"prompt order: {len(p.dataset)} groups ({len(p.dataset) // k} rounds); {first}",
        f"grpo: {describe_async(p.args)}",
        f"dropped (no AsyncGRPOConfig field): {', '.join(p.dropped) or 'none'}",
        f"differs from the paper: {ADVANTAGE_NOTE}",
        f"output: {run_in.out}",
        "this machine: " + ("ready to train" if not missing else f"cannot train here (no {', '.join(missing)})"),
        f"chat template: {'parsed by TRL' if template is None else template + ': a real run stops'}",
    ]
    if run_in.missing_bins:
        lines.insert(
            2, f"bins the schedule wants but the data lacks (weight shared out): {', '.join(run_in.missing_bins)}"
        )
    return "\n".join(lines)


def build_trainer(p: AsyncSetup, reward, *, callbacks=None, **trainer_kwargs):
    """TRL's AsyncGRPOTrainer over the curriculum-ordered prompts (`trainer_kwargs`: TRL's own seams)."""
    from synthgen.train.trainer import TrainerLog

    trainer = async_trl().AsyncGRPOTrainer(
        model=p.run.model,
        reward_funcs=[reward],
        args=p.args,
        train_dataset=p.dataset,
        callbacks=callbacks,
        **trainer_kwargs,
    )
    trainer.add_callback(TrainerLog())
    return trainer


def run_async(settings, *, scorer=None, prompt_fn=None, callbacks=None, evaluators=None, trainer_kwargs=None) -> Path:
    """Train with --async; returns the output folder (as synthgen.train.run.run)."""
    from transformers import AutoTokenizer

    from synthgen.evals.train_hook import server_generate
    from synthgen.interop.records import student_prompt
    from synthgen.train.evaluation import add_periodic_eval
    from synthgen.train.quiet import install_progress
    from synthgen.train.rewards import EnvScorer, SandboxReward
    from synthgen.train.run import resume_checkpoint, step_seconds
    from synthgen.train.trainer import save_final

    started = time.time()
    p = prepare(settings, prompt_fn=prompt_fn, evaluators=evaluators)
    run_in = p.run
    missing = runtime_missing()
    if missing:
        raise UserError(
            f"--async trains on a GPU with a vLLM server; this machine has no {', '.join(missing)} "
            "(`train --async --dry-run` checks the rest here)"
        )
    problem = chat_template_problem(run_in.model)
    if problem:
        raise UserError(f"--async: {problem}")
    if scorer is None:
        scorer = EnvScorer(settings.sandbox)
        scorer.start()  # fail now, in one line, if no sandbox isolation works here
        scorer.close()  # the rollout process starts its own pool (a scorer pickles without one)
    reward = SandboxReward(scorer, max_completion_length=p.args.max_completion_length)
    reward.eos_token_id = AutoTokenizer.from_pretrained(run_in.model).eos_token_id  # before TRL pickles the reward
    trainer = build_trainer(p, reward, callbacks=callbacks, **(trainer_kwargs or {}))
    install_progress(trainer)
    ev = settings.eval
    if ev.steps:  # sampled from the vLLM server, which holds the weights of the last sync
        url = ev.benchmark_url or p.args.vllm_server_base_url.rstrip("/") + "/v1"
        model = ev.benchmark_model if ev.benchmark_url else run_in.model  # the name the training server serves
        max_tokens = ev.max_completion_length or p.args.max_completion_length
        generate = server_generate(url, model, ev.temperature, max_tokens)
        suites = (prompt_fn or student_prompt, list(evaluators or []), run_in.data.heldout)
        add_periodic_eval(trainer, settings, p.args, scorer, *suites, generate=generate)
    checkpoint = resume_checkpoint(settings, run_in.out)
    trainer.train(resume_from_checkpoint=checkpoint)
    save_final(trainer, run_in.out)
    if trainer.accelerator.is_main_process:
        summary = {
            "trainer": "async",
            "model": run_in.model,
            "data": run_in.data.summary(),
            "curriculum": run_in.spec.name,
            "schedule": run_in.spec.schedule.render(),
            "missing_bins": run_in.missing_bins,
            "max_steps": run_in.max_steps,
            "global_step": trainer.state.global_step,
            "resumed_from": checkpoint,
            "grpo": describe_async(p.args),
            "dropped_recipe_keys": p.dropped,
            "differs_from_paper": ADVANTAGE_NOTE,
            "seconds": round(time.time() - started, 1),
            "step_seconds": step_seconds(trainer),
        }
        (run_in.out / "train_summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return run_in.out
