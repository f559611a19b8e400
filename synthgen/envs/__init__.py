"""The RL environments (induction, abduction, deduction, fuzzing, contest): one contract, a registry.

    from synthgen.envs import get_env
    env = get_env("deduction")            # an Environment (see synthgen.envs.base for the contract)

Adding an environment touches three places and nothing else:

1. `synthgen/envs/<name>.py`: a subclass of `synthgen.envs.base.Environment` that sets `name` and
   implements its abstract methods (base.py shows which hooks it may override, e.g. for `verify`).
2. `ENVIRONMENTS` below: `"<name>": "synthgen.envs.<name>:<Class>"` (the settings read their list
   of environment names from here: `synthgen.settings.base.ENV_NAMES`).
3. `prompts/<name>/`: `task.j2` (what the puzzle is), `format.j2` (the teacher's answer format),
   `previous_pairs.j2` (how the previous problem's inputs are shown to the teacher) and
   `student.j2` (what the student reads), included by the shared teacher prompt (`prompts/_shared/`).

A wheel ships the templates as data files listed per folder in pyproject.toml (a test checks the
list covers every registered environment). The scripted server (synthgen.demo.scripted) only knows
the four built-in environments; a new one gets its "unrecognised prompt" reply there.

Importing this package is cheap and imports nothing: the modules load on first use.
"""

from __future__ import annotations

import importlib

# name -> "module:Class", in the order runs go through them.
ENVIRONMENTS: dict[str, str] = {
    "induction": "synthgen.envs.induction:Induction",
    "abduction": "synthgen.envs.abduction:Abduction",
    "deduction": "synthgen.envs.deduction:Deduction",
    "fuzzing": "synthgen.envs.fuzzing:Fuzzing",
    "contest": "synthgen.envs.contest:Contest",
}
# What `generate` makes when no --envs is given: the paper's four (its Table 1). Contest problems
# mostly come from real sets (`synthgen import`); `--envs contest` has the teacher write them too.
DEFAULT_ENVIRONMENTS: tuple[str, ...] = ("induction", "abduction", "deduction", "fuzzing")


def get_env(name: str, settings=None):
    """The environment called `name`; an unknown name is a ValueError that lists the known ones."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; choose from {', '.join(ENVIRONMENTS)}")
    module, cls = ENVIRONMENTS[name].split(":")
    return getattr(importlib.import_module(module), cls)(settings)


__all__ = ["DEFAULT_ENVIRONMENTS", "ENVIRONMENTS", "get_env"]
