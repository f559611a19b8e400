"""The pipeline's stage commands: seeds, generate, filter, bin, chain, stats, demo.

Each is a settings model (synthgen/config/) plus the function that runs it; every flag, its help
and its default come from the model (synthgen.commands.derive). Stages are imported inside the
functions so that `synthgen --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.commands.derive import BASE_URL, FORCE, SettingsCommand
from synthgen.config.bin import BinSettings
from synthgen.config.chain import ChainSettings
from synthgen.config.demo import DemoSettings
from synthgen.config.filter import FilterSettings
from synthgen.config.generate import GenerateSettings
from synthgen.config.seeds import SeedsSettings
from synthgen.config.stats import StatsSettings


def seeds(settings: SeedsSettings, force: bool) -> None:
    """Sample code snippets (seeds) from source trees, starcoderdata-style Parquet or whole solutions."""
    from synthgen.stages import seeds as stage

    stage.run(settings, force=force)


def generate(settings: GenerateSettings, force: bool) -> None:
    """Run the multi-turn teacher/student loop on the seeds; resumable and shardable."""
    from synthgen.stages import generate as stage

    stage.run(settings, force=force)


def filter_(settings: FilterSettings, force: bool) -> None:
    """Drop invalid, out-of-band, contaminated and near-duplicate problems; every drop has a reason."""
    from synthgen.stages import filter as stage

    stage.run(settings, force=force)


def bin_(settings: BinSettings, force: bool) -> None:
    """Split kept problems into difficulty bins by pass rate."""
    from synthgen.stages import bin as stage

    stage.run(settings, force=force, plot_path=Path(settings.plot) if settings.plot else None)


def chain(settings: ChainSettings, force: bool) -> None:
    """Build hard -> medium -> easy chains from the hard problems, each step checked by the student."""
    from synthgen.stages import chain as stage

    stage.run(settings, force=force)


def stats(settings: StatsSettings) -> None:
    """Summarise a run from whatever stages it has: counts, yield per turn, reasons, pass rates, tokens."""
    import json

    import typer
    from rich.console import Console

    from synthgen.stages import stats as stage

    data = stage.collect(settings)
    if settings.as_json:
        typer.echo(json.dumps(data, indent=1, sort_keys=True))
    else:
        stage.show(data, Console(soft_wrap=True))


def demo(settings: DemoSettings) -> None:
    """Run seeds -> generate -> filter -> bin -> chain end to end (the scripted server unless --base-url)."""
    from synthgen.stages import demo as stage

    stage.run(settings)


COMMANDS = [
    SettingsCommand("seeds", SeedsSettings, seeds, extras=[FORCE]),
    SettingsCommand("generate", GenerateSettings, generate, aliases=[BASE_URL], extras=[FORCE]),
    SettingsCommand("filter", FilterSettings, filter_, extras=[FORCE]),
    SettingsCommand("bin", BinSettings, bin_, extras=[FORCE]),
    SettingsCommand("chain", ChainSettings, chain, aliases=[BASE_URL], extras=[FORCE]),
    SettingsCommand("stats", StatsSettings, stats),
    # The demo's --base-url is its own setting: without it the scripted server serves both roles.
    SettingsCommand("demo", DemoSettings, demo, exclude=frozenset({"teacher.base_url", "student.base_url"})),
]
