"""GRPO settings: the paper's defaults, named YAML recipes passed through to TRL's `GRPOConfig`.

Precedence, lowest first: TRL's defaults < `PAPER_DEFAULTS` (the paper's Section 3.4 and Appendix
E) < the recipe (`--recipe qwen3-8b-base` or a YAML file) < synthgen's own flags. A recipe is a flat
YAML mapping of `GRPOConfig` field names, as open-r1's are; an unknown key is an error, so a typo
never silently trains with a default. Also understood: `model_name_or_path` (open-r1's name for
the model) and `extends: NAME|PATH` (start from another recipe; this file's keys win). Named
recipes are the `*.yaml` files of `recipes/` (`<prefix>/share/synthgen/recipes` in a wheel). The
learning rate is never defaulted: TRL's 1e-6 is 7x the paper's Qwen3-8B rate and 17x its Llama one.

    from synthgen.train.recipe import load_recipe, build_grpo_config
    args = build_grpo_config(load_recipe("tiny-cpu"), {"output_dir": "out", "max_steps": 3})
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synthgen.errors import UserError

# The paper's GRPO (Section 3.4, Appendix E). The learning rate and the warm-up length are
# model-specific (the family recipes set them); `warmup_steps` below 1 is a ratio in
# transformers: 2% of the run, which is the paper's 800 of 40,000 steps, for a recipe that sets none.
PAPER_DEFAULTS: dict[str, Any] = {
    "num_generations": 8,  # G
    "beta": 0.0,  # no KL term, so TRL builds no reference model
    "scale_rewards": "none",  # advantage = reward - group mean, no std division
    "epsilon": 0.2,
    "epsilon_high": 0.25,
    "temperature": 1.0,
    "lr_scheduler_type": "constant_with_warmup",
    "warmup_steps": 0.02,
}

# Keys a recipe may hold besides GRPOConfig's fields.
EXTRA_KEYS = frozenset({"model_name_or_path"})
EXTENDS = "extends"


def recipe_dirs() -> list[Path]:
    """Where named recipes live: the source checkout's recipes/, then an installed wheel's share/."""
    return [Path(__file__).resolve().parents[2] / "recipes", Path(sys.prefix) / "share" / "synthgen" / "recipes"]


def recipe_names() -> list[str]:
    return sorted({p.stem for d in recipe_dirs() if d.is_dir() for p in d.glob("*.yaml")})


def recipe_path(name_or_path: str | Path, relative_to: Path | None = None) -> Path:
    """The file of a recipe given by name (`qwen3-8b-base`) or path; a one-line UserError if none."""
    text = str(name_or_path)
    candidates = [Path(text)]
    if relative_to is not None:
        candidates.insert(0, relative_to / text)
    if not text.lower().endswith((".yaml", ".yml")) and "/" not in text and os.sep not in text:
        candidates += [d / f"{text}.yaml" for d in ([relative_to] if relative_to else []) + recipe_dirs()]
    for path in candidates:
        if path.is_file():
            return path
    raise UserError(f"recipe not found: {text} (named recipes: {', '.join(recipe_names()) or 'none'})")


def load_recipe(name_or_path: str | Path | None, *, _chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The recipe's mapping with `extends` resolved (empty for None); bad files are one-line UserErrors."""
    if name_or_path is None:
        return {}
    from synthgen.train.curriculum import read_yaml

    path = recipe_path(name_or_path, _chain[-1].parent if _chain else None).resolve()
    if path in _chain:
        raise UserError(f"recipe {path} extends itself (through {', '.join(p.name for p in _chain)})")
    data = read_yaml(path, "recipe")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"recipe {path} must be a mapping of GRPOConfig settings")
    base_name = data.pop(EXTENDS, None)
    if base_name is None:
        return data
    if not isinstance(base_name, str):
        raise UserError(f"recipe {path}: '{EXTENDS}' must name one recipe, not {base_name!r}")
    return {**load_recipe(base_name, _chain=(*_chain, path)), **data}


def require_learning_rate(recipe: Mapping[str, Any], flag_value: float | None, where: str) -> float:
    """The run's learning rate, from --learning-rate or the recipe; never a library default."""
    value = flag_value if flag_value is not None else recipe.get("learning_rate")
    if value is None:
        raise UserError(
            f"no learning rate: pass --learning-rate or a recipe that sets one ({where} does not); "
            f"named recipes: {', '.join(recipe_names())}"
        )
    try:
        rate = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{where}: learning_rate must be a number, not {value!r}") from None
    if not rate > 0:
        raise UserError(f"{where}: learning_rate must be above 0, not {value!r}")
    return rate


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
    from trl import GRPOConfig

    check_recipe_keys(recipe, where)
    check_recipe_keys(overrides, "settings")
    return config_from(GRPOConfig, merged_settings(recipe, overrides), "GRPO")


def config_from(config_class, values: Mapping[str, Any], what: str):
    """`config_class(**values)`, TRL's own checks (batch divisibility, ...) as one-line UserErrors."""
    try:
        return config_class(**values)
    except (ValueError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"{what} settings rejected by TRL: {first}") from None


def is_on_policy(args) -> bool:
    """True when every completion trains the policy that generated it: the ratio is 1, eps never clips."""
    generate_every = args.steps_per_generation * args.num_iterations
    return args.gradient_accumulation_steps % generate_every == 0


# The settings that define the paper's GRPO, for the run log.
DESCRIBED = (
    "num_generations",
    "beta",
    "scale_rewards",
    "epsilon",
    "epsilon_high",
    "temperature",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "generation_batch_size",
    "steps_per_generation",
    "num_iterations",
    "max_completion_length",
    "loss_type",
    "use_vllm",
    "report_to",
)


def describe(args, keys=DESCRIBED) -> str:
    """`keys` of a GRPO config in one line, for the run log, the dry run and train_summary.json."""
    values = {k: getattr(args, k, None) for k in keys}
    return ", ".join(f"{k}={getattr(v, 'value', v)!r}" for k, v in values.items())
