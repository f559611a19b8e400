"""`train --async`: synthgen's train settings and recipe -> TRL's `AsyncGRPOConfig`, and what refuses.

TRL's asynchronous GRPO (`trl.experimental.async_grpo`, TRL >= 1.16) generates on a vLLM server
in a child process while the trainer updates; rollouts reach the trainer up to `max_staleness`
weight updates late, so the policy ratio moves off 1 and the epsilon clip acts, as in the
paper's asynchronous setup. Its config is not `GRPOConfig`: the recipe (GRPOConfig keys, checked
as for the synchronous trainer) goes through the same precedence (paper defaults < recipe <
flags, synthgen.train.recipe.merged_settings) and then

  * every key `AsyncGRPOConfig` also has is carried over unchanged (`ASYNC_CARRIED` names the ones
    that define the paper's GRPO; a test checks each); a recipe used with --async may also set the
    async trainer's own keys (`dtype`, `weight_sync_steps`, `token_budget`, ...);
  * the rest are dropped and listed (`dropped`): the synchronous trainer's generation batching
    (`steps_per_generation`, the approximation --async replaces), its vLLM placement
    (`use_vllm`, `vllm_mode`, `vllm_gpu_memory_utilization`: the server is started apart), ...;
  * a setting the async trainer cannot honour and that would change the algorithm stops the run
    (exit 2): a KL term (`beta` != 0), batch reuse (`num_iterations` > 1), the synchronous
    trainer's own flags on the command line, the adaptive frontier curriculum (it needs each
    round's rewards before the next draw; rollouts here run ahead in another process).

What still differs from the paper, said in the dry run and the summary (`ADVANTAGE_NOTE`): TRL's
async trainer divides each group's advantage by its reward std, whatever `scale_rewards` says.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Mapping
from typing import Any

from synthgen.errors import UserError
from synthgen.train.settings import TrainSettings

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


def check_async_settings(settings: TrainSettings) -> None:
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
    recipe: Mapping[str, Any],
    overrides: Mapping[str, Any],
    *,
    max_staleness: int | None,
    where: str = "recipe",
    dry_run: bool = False,
):
    """(AsyncGRPOConfig, the merged keys it has no field for); TRL's own checks become UserErrors.

    `dry_run` (the dry run): on a machine without CUDA a recipe's bf16 is set aside so the rest
    can be checked; transformers refuses bf16 there, and the real run checks it on its GPU."""
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
    """The async run's GRPO in one line, for the log, the dry run and train_summary.json."""
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
    some chat templates only (Qwen2.5/3, Llama 3.1/3.2, gpt-oss, GLM-4, ...), and stops at start-up
    otherwise; checked here, on the tokenizer alone, so that a run stops before a GPU is taken."""
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
