"""The pipeline's stage commands: seeds, generate, filter, bin, chain, stats, match, plan, demo.

Each is a settings model (the stage's settings.py) plus the stage's `run(settings, ...)`, imported only
when the command runs so that `synthgen --help` stays fast; every flag, its help and its default
come from the model (synthgen.cli.flags).
"""

from __future__ import annotations

import typer

from synthgen.cli.flags import BASE_URL, FORCE, MODEL, AppState, SettingsCommand
from synthgen.demo.settings import DemoSettings
from synthgen.stages.bin.settings import BinSettings
from synthgen.stages.calibrate.settings import CalibrateSettings
from synthgen.stages.chain.settings import ChainSettings
from synthgen.stages.filter.settings import FilterSettings
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.stages.match.settings import MatchSettings
from synthgen.stages.plan.settings import PlanSettings
from synthgen.stages.seeds.settings import SeedsSettings
from synthgen.stages.stats.settings import StatsSettings


def plan(settings: PlanSettings, ctx: typer.Context) -> None:
    """`synthgen plan [CONFIG]`: the run's config comes as the argument or as --config."""
    from synthgen.stages.plan.run import run

    run(settings, (ctx.find_object(AppState) or AppState()).config_path)


COMMANDS = [
    SettingsCommand(
        "seeds",
        SeedsSettings,
        "synthgen.stages.seeds.run:run",
        extras=[FORCE],
        help="Sample code snippets (seeds) from source trees, starcoderdata-style Parquet or whole solutions.",
    ),
    SettingsCommand(
        "generate",
        GenerateSettings,
        "synthgen.stages.generate.run:run",
        aliases=[BASE_URL, MODEL],
        extras=[FORCE],
        help="Run the multi-turn teacher/student loop on the seeds; resumable and shardable.",
    ),
    SettingsCommand(
        "filter",
        FilterSettings,
        "synthgen.stages.filter.run:run",
        extras=[FORCE],
        help="Drop invalid, out-of-band, contaminated and near-duplicate problems; every drop has a reason.",
    ),
    SettingsCommand(
        "bin",
        BinSettings,
        "synthgen.stages.bin.run:run",
        extras=[FORCE],
        help="Split kept problems into difficulty bins by pass rate.",
    ),
    SettingsCommand(
        "chain",
        ChainSettings,
        "synthgen.stages.chain.run:run",
        aliases=[BASE_URL, MODEL],
        extras=[FORCE],
        help="Build hard -> medium -> easy chains from kept problems in --start-band (default 0.05-0.16), "
        "each step checked by the student.",
    ),
    SettingsCommand(
        "calibrate",
        CalibrateSettings,
        "synthgen.stages.calibrate.run:run",
        exclude=frozenset({"teacher", "mutation", "progression", "keep_reasoning"}),
        extras=[FORCE],
        help="Re-measure the pass rates of a problem set (a bin, chains, a filter output, an export) with "
        "another student; resumable and shardable.",
    ),
    SettingsCommand(
        "stats",
        StatsSettings,
        "synthgen.stages.stats.run:print_stats",
        help="Summarise a run from whatever stages it has: counts, yield per turn, reasons, pass rates, tokens.",
    ),
    SettingsCommand(
        "match",
        MatchSettings,
        "synthgen.stages.match.run:run",
        help="Subsample a problem set to another's pass-rate histogram, per environment (matched difficulty).",
    ),
    SettingsCommand(
        "plan",
        PlanSettings,
        plan,
        help="Estimate a generate run before it starts: requests, tokens, sandbox jobs, GPU-hours, wall time "
        "and cost per kept problem, from an earlier run (--from-run) or default per-request figures.",
    ),
    # The demo's --base-url is its own setting: without it (and without --teacher-url/--student-url)
    # the scripted server serves the roles.
    SettingsCommand(
        "demo",
        DemoSettings,
        "synthgen.demo.run:run",
        aliases=[MODEL],
        help="Run seeds -> generate -> filter -> bin -> chain end to end, small (the scripted server "
        "unless --base-url).",
    ),
]
