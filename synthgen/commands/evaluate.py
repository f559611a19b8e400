"""`synthgen eval` and `synthgen import` (settings-derived), and `synthgen serve` (plain flags).

    synthgen eval --model-url http://gpu01:8000/v1 --model-name my-model --benchmarks lcb,math500
    synthgen eval --checkpoints outputs/run1 --benchmarks humaneval --plot
    synthgen import data/lcb.jsonl --output data/real
    synthgen serve outputs/run1/checkpoint-100 --port 8011

The work is imported inside each command, so `synthgen --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

from synthgen.cli_flags import FORCE, SettingsCommand
from synthgen.config.eval import EvalSettings
from synthgen.config.importer import ImportSettings

EVAL = SettingsCommand(
    "eval",
    EvalSettings,
    "synthgen.evals.run:run",
    extras=[FORCE],
    # HumanEval comes from its package's file and held-out problems from folders: no hub data set to name.
    exclude=frozenset(f"{b}.{f}" for b in ("humaneval", "heldout") for f in ("dataset", "config", "split")),
    help="Evaluate a served model (or each training checkpoint) on LiveCodeBench, HumanEval, Math500, AIME2024 "
    "and held-out problems: pass@k per benchmark and split.",
)
IMPORT = SettingsCommand(
    "import",
    ImportSettings,
    "synthgen.stages.importer:run",
    help="Turn real code-contest sets (LiveCodeBench, APPS/TACO, CodeContests) into a problems folder that "
    "`train --data` reads; reference solutions are checked against their tests.",
)
COMMANDS = [EVAL, IMPORT]


def register(app: typer.Typer) -> None:
    @app.command("serve")
    def serve(
        checkpoint: Path = typer.Argument(..., help="A model folder (config.json, weights, tokenizer)."),
        port: int = typer.Option(8000, "--port", help="Port to listen on."),
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
        served_model_name: str | None = typer.Option(
            None, "--served-model-name", help="The model name clients ask for (default: the checkpoint path)."
        ),
        max_tokens_cap: int = typer.Option(
            4096, "--max-tokens-cap", help="Upper bound on max_tokens per request (CPU generation is slow)."
        ),
    ) -> None:
        """Serve a checkpoint over an OpenAI-compatible chat API on CPU: a small debug server (vLLM for real runs)."""
        from synthgen.train.preflight import require_train_extra

        require_train_extra()
        from synthgen.serve import serve as run_server

        run_server(checkpoint, host, port, served_model_name, max_tokens_cap)
