"""`synthgen eval`, `synthgen import` and `synthgen serve`, each derived from its settings model.

    synthgen eval --base-url http://gpu01:8000/v1 --model my-model --benchmarks lcb,math500
    synthgen eval --checkpoints outputs/run1 --benchmarks humaneval --plot
    synthgen import data/lcb.jsonl --output data/real
    synthgen serve outputs/run1/checkpoint-100 --port 8011

The work is imported inside each command, so `synthgen --help` stays fast.
"""

from __future__ import annotations

from synthgen.cli.flags import FORCE, Alias, SettingsCommand
from synthgen.envs.tool_settings import ServeSettings
from synthgen.evals.settings import EvalSettings
from synthgen.stages.importer.settings import ImportSettings

# The names every command that talks to a server shares (--model-url / --model-name say the same).
EVAL_BASE_URL = Alias("--base-url", ("model.base_url",), "The OpenAI-compatible server (the same as --model-url).")
EVAL_MODEL = Alias("--model", ("model.model",), "The model name the server serves (the same as --model-name).")
EVAL = SettingsCommand(
    "eval",
    EvalSettings,
    "synthgen.evals.run:run",
    aliases=[EVAL_BASE_URL, EVAL_MODEL],
    extras=[FORCE],
    # HumanEval comes from its package's file and held-out problems from folders: no hub data set to name.
    exclude=frozenset(f"{b}.{f}" for b in ("humaneval", "heldout") for f in ("dataset", "config", "split")),
    help="Evaluate a served model (or each training checkpoint) on LiveCodeBench, HumanEval, Math500, AIME2024 "
    "and held-out problems: pass@k per benchmark and split.",
)
IMPORT = SettingsCommand(
    "import",
    ImportSettings,
    "synthgen.stages.importer.run:run",
    help="Turn real code-contest sets (LiveCodeBench, APPS/TACO, CodeContests) into a problems folder that "
    "`train --data` reads; reference solutions are checked against their tests.",
)
SERVE = SettingsCommand(
    "serve",
    ServeSettings,
    "synthgen.evals.serve:run",
    help="Serve a checkpoint over an OpenAI-compatible chat API on CPU: a small debug server (vLLM for real runs).",
)
COMMANDS = [EVAL, IMPORT, SERVE]
