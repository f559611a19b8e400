"""The four RL environments (induction, abduction, deduction, fuzzing) behind one contract.

    from synthgen.envs import get_env, summarize, Problem, Reward, FormatError
    env = get_env("deduction")            # an Environment (see synthgen.envs.base for the contract)

A new environment is one module with an `Environment` subclass, an entry in `ENVIRONMENTS`, and
its templates in `prompts/<name>/`. Importing this package is cheap: the modules load on first use.
"""

from __future__ import annotations

import importlib

from synthgen.config.base import ENV_NAMES

# name -> "module:Class"; the keys are exactly synthgen.config.base.ENV_NAMES.
ENVIRONMENTS: dict[str, str] = {
    "induction": "synthgen.envs.induction:Induction",
    "abduction": "synthgen.envs.abduction:Abduction",
    "deduction": "synthgen.envs.deduction:Deduction",
    "fuzzing": "synthgen.envs.fuzzing:Fuzzing",
}
if tuple(ENVIRONMENTS) != ENV_NAMES:  # a cheap guard: the settings and the registry must agree
    raise RuntimeError("synthgen.envs.ENVIRONMENTS must offer exactly synthgen.config.base.ENV_NAMES")


def get_env(name: str, settings=None):
    """The environment called `name`; an unknown name is a ValueError that lists the known ones."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; choose from {', '.join(ENVIRONMENTS)}")
    module, cls = ENVIRONMENTS[name].split(":")
    return getattr(importlib.import_module(module), cls)(settings)


def __getattr__(name: str):
    # Lazy re-exports of the contract, so `from synthgen.envs import Problem` works without
    # importing every environment module up front.
    if name in ("Environment", "FormatError", "Problem", "Reward", "Summary", "Verdict", "summarize", "choose_strategy"):
        from synthgen.envs import base

        return getattr(base, name)
    raise AttributeError(name)


__all__ = ["ENVIRONMENTS", "get_env", "Environment", "FormatError", "Problem", "Reward", "Summary", "Verdict", "summarize"]
