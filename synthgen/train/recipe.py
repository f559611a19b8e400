"""GRPO settings: the paper's defaults, YAML recipes passed through to TRL's `GRPOConfig`.

Precedence, lowest first: TRL's own defaults < `PAPER_DEFAULTS` (SPEC §9) < the recipe file
(`--recipe recipes/grpo-paper.yaml`) < what synthgen's own flags set (output dir, max steps,
seed, vLLM). A recipe is a flat YAML mapping of `GRPOConfig` field names, as open-r1's recipes
are; any TRL setting can go there. A key that `GRPOConfig` does not know is an error, so a typo
never silently trains with a default. `model_name_or_path` is also accepted (open-r1's name for
the model) and returned separately.

    from synthgen.train.recipe import load_recipe, build_grpo_config
    args = build_grpo_config(load_recipe("recipes/tiny-cpu.yaml"), {"output_dir": "out", "max_steps": 3})
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from synthgen.errors import UserError

# SPEC §9 (paper 000 §3.4, App. E). The learning rate is model-specific in the paper (6e-8 for
# Llama3.1-8B Instruct and Qwen2.5-32B Base, 1.4e-7 for Qwen3-8B Base), so it stays TRL's unless
# a recipe sets it. Warm-up: 800 of 40,000 steps in the paper, i.e. 2% of the run (a value below
# 1 is a ratio in transformers), so a shorter run still warms up before the constant rate.
PAPER_DEFAULTS: dict[str, Any] = {
    "num_generations": 8,  # G
    "beta": 0.0,  # no KL term, so TRL builds no reference model
    "scale_rewards": "none",  # advantage = reward - group mean, no std division
    "epsilon": 0.2,
    "epsilon_high": 0.25,
    "temperature": 1.0,
    "lr_scheduler_type": "constant_with_warmup",
    "warmup_steps": 0.02,
    "report_to": "none",  # opt in to wandb/tensorboard/... with --report-to or the recipe
}

# Keys a recipe may hold besides GRPOConfig's fields.
EXTRA_KEYS = frozenset({"model_name_or_path"})


def load_recipe(path: str | Path | None) -> dict[str, Any]:
    """The recipe's mapping (empty for None); bad files are one-line UserErrors."""
    if path is None:
        return {}
    import yaml

    path = Path(path)
    if not path.is_file():
        raise UserError(f"recipe not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except Exception as exc:
        raise UserError(f"recipe {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"recipe {path} must be a mapping of GRPOConfig settings")
    return data


def grpo_fields() -> set[str]:
    import dataclasses

    from trl import GRPOConfig

    return {f.name for f in dataclasses.fields(GRPOConfig) if f.init}


def check_recipe_keys(recipe: Mapping[str, Any], where: str = "recipe") -> None:
    known = grpo_fields() | EXTRA_KEYS
    unknown = sorted(k for k in recipe if k not in known)
    if unknown:
        import difflib

        near = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise UserError(f"{where}: {unknown[0]!r} is not a GRPOConfig setting{hint}")


def merged_settings(recipe: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Paper defaults < recipe < overrides (None values in overrides mean 'not given')."""
    out = dict(PAPER_DEFAULTS)
    out.update({k: v for k, v in recipe.items() if k not in EXTRA_KEYS})
    out.update({k: v for k, v in overrides.items() if v is not None})
    import torch

    if "bf16" not in out and "fp16" not in out:
        # TRL turns bf16 on by default; a CPU-only machine trains in float32 instead.
        out["bf16"] = bool(torch.cuda.is_available())
    if "use_cpu" not in out and not torch.cuda.is_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        # Without use_cpu, processes started by torchrun on a machine without GPUs do not join one
        # distributed job: each would train alone (seen with transformers 5.24 / accelerate 1.15).
        out["use_cpu"] = True
    return out


def build_grpo_config(recipe: Mapping[str, Any], overrides: Mapping[str, Any], where: str = "recipe"):
    """A validated `GRPOConfig`; TRL's own checks (batch divisibility, ...) become UserErrors."""
    from trl import GRPOConfig

    check_recipe_keys(recipe, where)
    check_recipe_keys(overrides, "settings")
    values = merged_settings(recipe, overrides)
    try:
        return GRPOConfig(**values)
    except (ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"GRPO settings rejected by TRL: {first}") from None


def describe(args) -> str:
    """The settings that define the paper's GRPO, one line, for the run log."""
    keys = ("num_generations", "beta", "scale_rewards", "epsilon", "epsilon_high", "temperature",
            "learning_rate", "lr_scheduler_type", "warmup_steps", "per_device_train_batch_size",
            "gradient_accumulation_steps", "generation_batch_size", "steps_per_generation",
            "num_iterations", "max_completion_length", "loss_type", "use_vllm")
    return ", ".join(f"{k}={getattr(args, k, None)!r}" for k in keys)
