"""`synthgen demo`: seeds -> generate -> filter -> bin -> chain on built-in defaults, end to end.

With no `--base-url` it starts the scripted server (a bank of problems we wrote, not a model) on
a free local port, so the whole pipeline runs on a laptop with no GPU; with `--base-url` the
same run goes to a real OpenAI-compatible server such as vLLM serving gpt-oss. The stages'
demo settings live here, so that no stage module carries glue for the demo.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from rich.console import Console

from synthgen.demo.settings import DemoSettings
from synthgen.settings.base import resolve_settings
from synthgen.stages.bin.settings import BinSettings
from synthgen.stages.chain.settings import ChainSettings
from synthgen.stages.filter.settings import FilterSettings
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.stages.seeds.settings import SeedsSettings


def _roles(settings: DemoSettings, base_url: str | None) -> dict:
    """The demo's roles, each keeping its own defaults (teacher high effort, student low), on the
    demo's server unless the role names its own URL; the client settings (llm) go with them."""
    roles = {}
    for name, role in (("teacher", settings.teacher), ("student", settings.student)):
        own = "base_url" in role.model_fields_set
        roles[name] = role.model_dump() | ({} if own or base_url is None else {"base_url": base_url})
    return {**roles, "llm": settings.llm.model_dump()}


def needs_server(settings: DemoSettings) -> bool:
    """True when some role has neither the demo's --base-url nor a URL of its own."""
    return settings.base_url is None and not all(
        "base_url" in role.model_fields_set for role in (settings.teacher, settings.student)
    )


def _stage_settings(kind, settings: DemoSettings, base_url: str | None, **fields):
    shared = settings.model_dump(include={"run_dir", "seed", "attempts", "progress"})
    return resolve_settings(kind, {}, {**shared, **fields, **_roles(settings, base_url)})


def generate_settings(settings: DemoSettings, base_url: str) -> GenerateSettings:
    return _stage_settings(
        GenerateSettings, settings, base_url, envs=settings.envs, turns=settings.turns, lineages_per_seed=1
    )


def chain_settings(settings: DemoSettings, base_url: str) -> ChainSettings:
    """Chains from the kept problems in the chains scheme's hard band (the default start band), with the
    disjoint baseline beside them."""
    return _stage_settings(ChainSettings, settings, base_url, disjoint=True)


def curate(settings: DemoSettings, base_url: str, console: Console) -> None:
    """filter (default band, dedup) -> bin (the broad scheme) -> chain, on the demo's run directory."""
    from synthgen.stages.bin import run as bin_stage
    from synthgen.stages.chain import run as chain
    from synthgen.stages.filter import run as filter_stage

    run_dir = Path(settings.run_dir)
    filter_stage.run(FilterSettings(run_dir=run_dir), force=True, console=console)
    bin_stage.run(BinSettings(run_dir=run_dir), force=True, console=console, out_console=console)
    chain.run(chain_settings(settings, base_url), console=console)


def fit_to_servers(settings: DemoSettings, base_url: str) -> DemoSettings:
    """Check the servers (a wrong URL or model stops here) and fit the roles' max_tokens that the
    user left at their defaults to half of a context the server states (the defaults are sized
    for gpt-oss's 128k; a small model's server states 8k): said once, in the probe's line, and
    passed to every stage, so that generate and chain measure with the same settings. A
    max_tokens the user set is kept, and stops the demo (exit 2) if it does not fit."""
    import asyncio

    from synthgen.llm.client import LLMClient

    probe_settings = generate_settings(settings, base_url)
    teacher = settings.teacher.model_copy(update={"base_url": probe_settings.teacher.base_url})
    student = settings.student.model_copy(update={"base_url": probe_settings.student.base_url})

    async def check() -> None:
        async with LLMClient(teacher, student, probe_settings.llm, max_in_flight=4) as llm:
            await llm.preflight(probe_settings.llm.wait_ready_s, fit_max_tokens=True)

    asyncio.run(check())
    update = {}
    for name, fitted, given in (("teacher", teacher, settings.teacher), ("student", student, settings.student)):
        if fitted.max_tokens != given.max_tokens:
            update[name] = given.model_copy(update={"max_tokens": fitted.max_tokens})
    return settings.model_copy(update=update) if update else settings


def run(settings: DemoSettings, console: Console | None = None) -> Path:
    from synthgen.stages.generate import run as generate
    from synthgen.stages.seeds import run as seeds

    console = console or Console(stderr=True)
    run_dir = Path(settings.run_dir)
    with contextlib.ExitStack() as stack:
        base_url = settings.base_url
        if needs_server(settings):
            from synthgen.demo.scripted.launch import start_scripted_server

            server = stack.enter_context(start_scripted_server(seed=settings.seed, mode="process"))
            base_url = server.url
            console.print(f"demo: scripted server (not a model) at {base_url}")
        settings = fit_to_servers(settings, base_url)  # a wrong URL or model stops here
        seeds.run(SeedsSettings(run_dir=run_dir, n=settings.seeds, seed=settings.seed), console=console)
        generate.run(generate_settings(settings, base_url), console=console)
        curate(settings, base_url, console)
    console.print(f"demo: outputs in {run_dir}/ (open with polars: pl.read_parquet('{run_dir}/generate/*.parquet'))")
    return run_dir
