"""`synthgen demo`: seeds -> generate -> filter -> bin -> chain on built-in defaults, end to end.

With no `--base-url` it starts the scripted server (a bank of problems we wrote, not a model) on
a free local port, so the whole pipeline runs on a laptop with no GPU; with `--base-url` the
same run goes to a real OpenAI-compatible server such as vLLM serving gpt-oss.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from rich.console import Console

from synthgen.config.base import resolve_settings
from synthgen.config.demo import DemoSettings
from synthgen.config.generate import GenerateSettings
from synthgen.config.seeds import SeedsSettings


def _curation_steps():
    """filter -> bin -> chain, each a `demo_step(run_dir, console=..., llm_roles=..., seed=..., attempts=...)`."""
    from synthgen.stages import bin as bin_stage
    from synthgen.stages import chain, filter as filter_stage

    return [filter_stage.demo_step, bin_stage.demo_step, chain.demo_step]


def run(settings: DemoSettings, console: Console | None = None) -> Path:
    from synthgen.llm import check_servers
    from synthgen.stages import generate, seeds

    console = console or Console(stderr=True)
    run_dir = Path(settings.run_dir)
    with contextlib.ExitStack() as stack:
        base_url = settings.base_url
        if base_url is None:
            from synthgen.scripted.launch import start_scripted_server

            server = stack.enter_context(start_scripted_server(seed=settings.seed, mode="process"))
            base_url = server.url
            console.print(f"demo: scripted server (not a model) at {base_url}")
        roles = {
            "teacher": settings.teacher.model_dump() | {"base_url": base_url},
            "student": settings.student.model_dump() | {"base_url": base_url},
        }
        check_servers(resolve_settings(GenerateSettings, {}, roles))  # a wrong URL or model stops here
        seeds.run(
            SeedsSettings(run_dir=run_dir, n=settings.seeds, seed=settings.seed), console=console
        )
        gen = resolve_settings(
            GenerateSettings,
            {},
            {
                "run_dir": run_dir, "envs": settings.envs, "turns": settings.turns,
                "attempts": settings.attempts, "seed": settings.seed, "progress": settings.progress,
                "lineages_per_seed": 1, **roles,
            },
        )
        generate.run(gen, console=console)
        for step in _curation_steps():
            step(run_dir, console=console, llm_roles=roles, seed=settings.seed, attempts=settings.attempts)
    console.print(f"demo: outputs in {run_dir}/ (open with polars: pl.read_parquet('{run_dir}/generate/*.parquet'))")
    return run_dir
