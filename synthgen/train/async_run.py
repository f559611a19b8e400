"""`synthgen train --async`: the train stage on TRL's asynchronous GRPO trainer (a GPU and a vLLM server).

    setup = prepare(settings)             # recipe, data, AsyncGRPOConfig, curriculum-ordered prompts
    print(describe_setup(setup))          # what `train --async --dry-run` prints; nothing loads or connects
    run_async(settings)                   # train: needs CUDA, vllm and the server at --vllm-server-url

TRL's asynchronous GRPO (TRL >= 1.16) generates on a vLLM server started apart
(`VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend":"nccl"}'`) while the
trainer updates: rollouts arrive up to `max_staleness` updates late, so the epsilon clip acts, as in
the paper's asynchronous setup. Unlike the synchronous stage (synthgen.train.run): no per-bin files or
completion logs (rewards run in TRL's rollout process, which starts its own sandbox pool), and
periodic evaluation samples the vLLM server, which holds the weights of the last sync.

The recipe goes through the synchronous precedence (synthgen.train.recipe); its keys `AsyncGRPOConfig`
also has are carried over (`ASYNC_CARRIED`, and the async trainer's own: `dtype`, `weight_sync_steps`,
...), the rest dropped and listed. What would change the algorithm stops the run (exit 2): a KL term,
batch reuse, the synchronous trainer's own flags, the frontier curriculum (it needs each round's
rewards before the next draw). Still unlike the paper (`ADVANTAGE_NOTE`): TRL divides each advantage
by the group's reward std.

The curriculum is fed by *order*: TRL's rollout process walks its dataset one row per group of G,
cycling at the end, and a resumed run restarts at the first group not yet trained. So rows r*K ..
r*K+K-1 are the K groups the draw makes for round r (one optimizer step: K = per-device batch x
accumulation x processes / G), at the schedule's weights of step r, which a resume replays. The order
holds `rounds_needed` rounds, room for the stale rollouts TRL drops, so it never wraps to step 0.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.interop.curriculum import CurriculumDraw
from synthgen.train.run import RunInputs

ASYNC_MODULE = "trl.experimental.async_grpo"
# Settings of the paper's GRPO that AsyncGRPOConfig shares with GRPOConfig: carried as they are.
ASYNC_CARRIED = [
    "output_dir",
    "max_steps",
    "seed",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "num_generations",
    "temperature",
    "epsilon",
    "epsilon_high",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "max_completion_length",
    "save_steps",
    "logging_steps",
    "report_to",
    "vllm_server_base_url",
]
ADVANTAGE_NOTE = (
    "advantage = (reward - group mean) / group std in TRL's async trainer (the paper's: reward - group mean; "
    "scale_rewards is not read there)"
)


def async_trl():
    """The installed TRL's async GRPO module; where TRL has none, a one-line UserError (exit 2)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # the experimental-API warning, once per run
    try:
        module = importlib.import_module(ASYNC_MODULE)
        module.AsyncGRPOConfig, module.AsyncGRPOTrainer  # noqa: B018 (both must exist)
    except (ImportError, AttributeError) as exc:
        import trl

        raise UserError(
            f"--async needs TRL's asynchronous GRPO ({ASYNC_MODULE}.AsyncGRPOTrainer), which the installed "
            f"TRL {trl.__version__} lacks ({exc}); install trl>=1.16 or train without --async"
        ) from None
    return module


def check_async_settings(settings) -> None:
    """The flags that mean nothing (or something else) with --async: one line and exit 2 each."""
    from synthgen.train.curriculum import ADAPTIVE

    if settings.online.enabled:
        raise UserError("--async and --online do not combine: the online loop runs on the synchronous trainer")
    if settings.curriculum in ADAPTIVE:
        raise UserError(
            f"--curriculum {settings.curriculum} needs each round's rewards before it draws the next; with "
            "--async the rollouts run ahead in another process: use a schedule (reverse-medium, classic, ...)"
        )
    if settings.steps_per_generation is not None or settings.num_iterations is not None:
        flag = "--steps-per-generation" if settings.steps_per_generation is not None else "--num-iterations"
        raise UserError(
            f"{flag} shapes the synchronous trainer's generation batches; --async has none (rollouts "
            "stream from the vLLM server): their age is bounded by --max-staleness instead"
        )
    if settings.use_vllm is False or settings.vllm_mode == "colocate":
        raise UserError("--async generates on a separate vLLM server (--vllm-server-url); drop --no-use-vllm/colocate")
    if settings.save_completions != "none":
        raise UserError(
            "--save-completions is not written under --async yet (the rewards run in TRL's rollout process)"
        )


def build_async_config(
    recipe: Mapping[str, Any], overrides: Mapping[str, Any], *, max_staleness: int | None, where: str, dry_run: bool
):
    """(AsyncGRPOConfig, the merged keys it has no field for); TRL's own checks become UserErrors.

    `dry_run`: on a machine without CUDA a recipe's bf16 is set aside so the rest can be checked;
    transformers refuses bf16 there, and the real run checks it on its GPU."""
    from synthgen.train.recipe import EXTRA_KEYS, check_recipe_keys, config_from, grpo_fields, merged_settings

    fields = {f.name for f in dataclasses.fields(async_trl().AsyncGRPOConfig) if f.init}
    # The synchronous trainer's recipes (GRPOConfig keys), plus the async trainer's own (dtype, weight_sync_steps, ...).
    unknown = sorted(k for k in recipe if k not in grpo_fields() | fields | EXTRA_KEYS)
    if unknown:
        raise UserError(f"{where}: {unknown[0]!r} is neither a GRPOConfig nor an AsyncGRPOConfig setting")
    check_recipe_keys(overrides, "settings")
    values = merged_settings(recipe, overrides)
    if float(values.get("beta") or 0.0) != 0.0:
        raise UserError(f"{where}: beta={values['beta']} (a KL term); TRL's async trainer has no reference model")
    if int(values.get("num_iterations") or 1) > 1:
        raise UserError(f"{where}: num_iterations={values['num_iterations']} reuses batches; --async cannot")
    carried = {k: v for k, v in values.items() if k in fields}
    if max_staleness is not None:
        carried["max_staleness"] = max_staleness
    dropped = sorted(k for k in values if k not in fields)
    if dry_run and carried.get("bf16"):
        import torch

        if not torch.cuda.is_available():
            carried["bf16"] = False
            dropped.append("bf16 (a GPU setting: set aside on this machine for the dry run)")
    return config_from(async_trl().AsyncGRPOConfig, carried, "async GRPO"), dropped


def describe_async(args) -> str:
    """The async run's GRPO in one line, for the dry run and train_summary.json."""
    from synthgen.train.recipe import describe

    return describe(args, (*ASYNC_CARRIED[3:], "max_staleness", "weight_sync_steps", "max_inflight_tasks", "dtype"))


def runtime_missing() -> list[str]:
    """What a real --async run needs and this machine lacks (CUDA, vLLM, the HTTP clients TRL uses)."""
    import importlib.util

    import torch

    missing = [] if torch.cuda.is_available() else ["CUDA GPU"]
    missing += [f"{m} package" for m in ("vllm", "requests", "aiohttp") if importlib.util.find_spec(m) is None]
    return missing


def chat_template_problem(model: str) -> str | None:
    """Why TRL's async rollouts could not parse this model's completions, or None.

    The rollout process reads each completion back through a response schema that TRL knows for
    some chat templates only, and stops at start-up otherwise; checked here, on the tokenizer
    alone, so that a run stops before a GPU is taken."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import add_response_schema

    tokenizer = AutoTokenizer.from_pretrained(model)
    if getattr(tokenizer, "response_template", None) is not None or getattr(tokenizer, "response_schema", None):
        return None
    try:
        add_response_schema(tokenizer)
    except ValueError:
        return (
            f"{model}'s chat template is not one TRL's async trainer can parse completions of "
            "(Qwen2.5/3, Llama 3.1/3.2, gpt-oss, GLM-4, ...; or set response_schema on its tokenizer)"
        )
    return None


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
    from synthgen.train.curriculum import SourceMix
    from synthgen.train.data import to_dataset
    from synthgen.train.run import grpo_overrides, prepare_run, recipe_origin

    check_async_settings(settings)
    run_in = prepare_run(settings, evaluators)
    overrides = grpo_overrides(settings, run_in.out, run_in.max_steps, run_in.recipe)
    where = recipe_origin(settings)
    args, dropped = build_async_config(
        run_in.recipe, overrides, max_staleness=settings.max_staleness, where=where, dry_run=dry_run
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
    from synthgen.train.rewards import EnvScorer, SandboxReward
    from synthgen.train.run import step_seconds, train_and_save, write_summary

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
    ev, generate = settings.eval, None
    if ev.steps:  # sampled from the vLLM server, which holds the weights of the last sync
        url = ev.benchmark_url or p.args.vllm_server_base_url.rstrip("/") + "/v1"
        model = ev.benchmark_model if ev.benchmark_url else run_in.model  # the name the training server serves
        generate = server_generate(url, model, ev.temperature, ev.max_completion_length or p.args.max_completion_length)
    checkpoint = train_and_save(trainer, settings, run_in, scorer, prompt_fn, evaluators, generate)
    write_summary(
        trainer,
        run_in,
        started,
        trainer="async",
        resumed_from=checkpoint,
        grpo=describe_async(p.args),
        dropped_recipe_keys=p.dropped,
        differs_from_paper=ADVANTAGE_NOTE,
        step_seconds=step_seconds(trainer),
    )
    return run_in.out
