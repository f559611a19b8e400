"""`synthgen plan [CONFIG]`: what a generate run will cost, before it starts.

From the run's config (its seeds and generate sections) and per-request figures it estimates
requests, tokens, sandbox jobs, GPU-hours and wall time, and the problems filter will keep. The
figures are measured on an earlier run (`--from-run RUN_DIR`, per environment where it has it) or
the defaults of synthgen.stages.plan.settings, which a `plan:` section or flags override. The
seeds counted are the seeds stage's rows when there are any, else the seeds section's `n`, capped
by `max_seeds`. The chain stage is not included.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from synthgen.errors import UserError
from synthgen.settings.base import ConfigFile, check_sections, load_config_file, resolve_settings
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.stages.plan import cost as costs
from synthgen.stages.plan.settings import PlanSettings, RequestFigures
from synthgen.stages.seeds.settings import SeedsSettings
from synthgen.store.layout import StageDir


def lineages_per_env(seeds: int, per_seed: int, envs: list[str]) -> dict[str, int]:
    """How generate spreads lineages over environments: seed i's lineage j gets env (i + j) mod E."""
    n, e = seeds, len(envs)
    counts = dict.fromkeys(envs, 0)
    for j in range(per_seed):
        for k, env in enumerate(envs):
            counts[env] += n // e + (1 if (k - j) % e < n % e else 0)
    return counts


def count_seeds(generate: GenerateSettings, seeds: SeedsSettings) -> tuple[int, str]:
    """(seeds the run will use, where that number comes from)."""
    stage = StageDir.input_of(generate.run_dir, "seeds", generate.input_dir)
    if stage.parts():
        found = stage.read(["seed_id"])["seed_id"].n_unique()
        where = f"{found} seeds in {stage.path}"
    else:
        found, where = seeds.n, f"seeds.n = {seeds.n} (no seeds stage yet)"
    if generate.max_seeds and generate.max_seeds < found:
        return generate.max_seeds, f"{where}, max_seeds {generate.max_seeds}"
    return found, where


def figures_from_run(run_dir: Path, validation_jobs: float) -> tuple[costs.PerTurn, dict[str, costs.PerTurn]]:
    """Per-request figures of an earlier run: overall and per environment."""
    stage = StageDir(run_dir, "generate")
    if not stage.parts():
        raise UserError(f"--from-run: no generate rows in {stage.path}")
    stage.check_schema()
    rows = stage.read(list(costs.COST_COLUMNS) + ["turn_id"])
    kept_dir = StageDir(run_dir, "filter")
    kept = kept_dir.read(["turn_id"]) if kept_dir.parts() else None
    if kept is not None:
        rows = rows.with_columns(pl.col("turn_id").is_in(kept["turn_id"].implode()).alias("kept"))

    def figures(frame: pl.DataFrame) -> costs.PerTurn:
        n_kept = int(frame["kept"].sum()) if kept is not None else None
        return costs.measured(frame, n_kept, validation_jobs)

    per_env = {env: figures(part) for (env,), part in rows.group_by("env")}
    return figures(rows), per_env


def plan(settings: PlanSettings, config: ConfigFile) -> dict:
    """The estimate and what it was made from, as a JSON-ready dict."""
    path = settings.config or config.path
    data = load_config_file(path) if path else {}
    check_sections(data, config.sections)
    generate = resolve_settings(GenerateSettings, data, {})
    seed_settings = resolve_settings(SeedsSettings, data, {})
    seeds, seeds_from = count_seeds(generate, seed_settings)
    if settings.from_run is not None:
        overall, per_env = figures_from_run(settings.from_run, settings.validation_jobs)
        source = f"measured on {settings.from_run}"
    else:
        overall, per_env = costs.PerTurn(**settings.model_dump(include=set(RequestFigures.model_fields))), {}
        source = "defaults (synthgen plan --help; set them in a plan: section or with flags)"
    envs = lineages_per_env(seeds, generate.lineages_per_seed, generate.envs)
    total = None
    for env, lineages in envs.items():
        part = costs.estimate(
            lineages, generate.turns, generate.attempts, generate.single_turn, per_env.get(env, overall)
        )
        total = part if total is None else total + part
    return {
        "config": str(path) if path else None,
        "seeds": seeds,
        "seeds_from": seeds_from,
        "lineages": dict(envs),
        "turns": generate.turns,
        "single_turn": generate.single_turn,
        "attempts": generate.attempts,
        "figures": source,
        "figures_missing_for": sorted(set(envs) - set(per_env)) if per_env else [],
        "estimate": total.as_dict(settings),
        "calibrate_per_problem": costs.calibration(generate.attempts, overall).as_dict(settings),
    }


def run(settings: PlanSettings, config: ConfigFile | None = None) -> dict:
    """`synthgen plan [CONFIG]`: CONFIG (else the global --config) describes the run, and its own
    plan: section applies as --config's would; flags still win over the file."""
    config = config or ConfigFile()
    if settings.config is not None and config.path is None:
        given = settings.model_dump(include=settings.model_fields_set)
        own = ConfigFile(settings.config, config.sections)
        settings = resolve_settings(PlanSettings, own.data(), given)
    out = plan(settings, config)
    if settings.as_json:
        print(json.dumps(out, indent=1, sort_keys=True))
    else:
        show(out, Console(soft_wrap=True))
    return out


def cost_table(title: str, cost: dict) -> Table:
    """The cost keys as a table: the same for `plan` (an estimate) and `stats` (a count)."""
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("", justify="left", no_wrap=True)
    for column in ("teacher", "student", "total"):
        table.add_column(column, justify="right")
    tokens, gpu = cost["tokens"], cost["gpu_hours"]
    table.add_row("requests", *(f"{cost['requests'][k]:,}" for k in ("teacher", "student", "total")))
    table.add_row("prompt tokens", f"{tokens['teacher']['prompt']:,}", f"{tokens['student']['prompt']:,}", "")
    table.add_row(
        "completion tokens", f"{tokens['teacher']['completion']:,}", f"{tokens['student']['completion']:,}", ""
    )
    table.add_row("all tokens", "", "", f"{tokens['total']:,}")
    table.add_row("GPU-hours", f"{gpu['teacher']:,.2f}", f"{gpu['student']:,.2f}", f"{gpu['total']:,.2f}")
    tp = cost["throughput"]
    table.add_row(f"wall hours on {tp['gpus']} GPUs", "", "", f"{cost['wall_hours']:,.2f}")
    table.add_row("sandbox jobs (about)", "", "", f"{cost['sandbox_jobs']:,}")
    table.add_row("teacher turns", "", "", f"{cost['turns']:,}")
    if cost["kept"] is not None:
        table.add_row("kept problems", "", "", f"{cost['kept']:,}")
    per = cost.get("per_kept")
    if per:
        table.add_row("per kept problem", "", "", f"{per['tokens']:,.0f} tokens, {per['gpu_hours'] * 60:,.3f} GPU-min")
    return table


def show(out: dict, console: Console) -> None:
    envs = ", ".join(f"{env} {n}" for env, n in out["lineages"].items())
    console.print(f"[bold]plan[/bold] {out['config'] or '(no config: the defaults)'}: {out['seeds_from']}")
    mode = f"{out['single_turn']} single-turn samples" if out["single_turn"] else f"{out['turns']} turns"
    console.print(f"lineages per environment: {envs}; {mode}; M = {out['attempts']}")
    console.print(f"per-request figures: {out['figures']}")
    if out["figures_missing_for"]:
        console.print(f"(the earlier run has no {', '.join(out['figures_missing_for'])}: its overall figures are used)")
    tp = out["estimate"]["throughput"]
    console.print(
        f"GPU throughput: teacher {tp['teacher_tokens_per_s']:g}, student {tp['student_tokens_per_s']:g} "
        f"completion tokens/s, prompt {tp['prompt_tokens_per_s']:g} tokens/s per GPU"
    )
    console.print(cost_table("estimate", out["estimate"]))
    per = out["calibrate_per_problem"]
    console.print(
        f"synthgen calibrate, per problem (M = {out['attempts']}): 1 student request, "
        f"{per['tokens']['total']:,.0f} tokens, {per['gpu_hours']['total'] * 3600:,.1f} GPU-seconds, "
        f"{per['sandbox_jobs']:,} sandbox jobs"
    )
