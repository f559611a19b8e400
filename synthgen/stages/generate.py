"""`synthgen generate`: the multi-turn teacher/student loop of SPEC §3-4, resumable and sharded.

Each seed starts `lineages_per_seed` lineages, spread over the chosen environments. A lineage
runs `turns` teacher turns: turn 1 from the seed, each later one from the last valid problem and
the student summary of it (SPEC §4: easier at p = 0, harder above 0.65, else a similar variant).
Many lineages run at once, so the LLM client's in-flight bound and the sandbox pool stay busy,
while memory stays bounded by the lineages in flight (`max_active`), not by the seed count.

Resume: every row is keyed by its `turn_id`. A re-run replays each unfinished lineage from its
first turn; the request cache answers every request that was already paid for and the sandbox
is deterministic, so the replay reproduces the same rows, and rows already on disk are not
written twice. Finished shards are skipped. SIGTERM/SIGINT stop new work, flush, and exit.
"""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import polars as pl
from rich.console import Console

from synthgen.config.generate import GenerateSettings
from synthgen.envs import get_env
from synthgen import errors
from synthgen.records import PROBLEMS
from synthgen.shards import StageDir
from synthgen.stages.common import check_finished, read_input, shard_name
from synthgen.stages.generate_report import LiveProgress, TurnStats, summary_table, write_stats
from synthgen.stages.turns import TurnRequest, TurnRunner
from synthgen.stages.writer import ShardWriter

STAGE = "generate"


class Interrupted(errors.Interrupted):
    """The run was asked to stop (SIGTERM/SIGINT); finished rows are on disk."""

    def __init__(self, signum: int):
        super().__init__(signum, "generate")


@dataclass(frozen=True)
class Lineage:
    seed_id: str
    seed_text: str
    env: str
    index: int
    single: bool

    @property
    def lineage_id(self) -> str:
        return f"{self.seed_id}:{self.env}:{self.index}"


def load_seeds(settings: GenerateSettings, console: Console | None = None) -> pl.DataFrame:
    """The finished seeds (`input_dir`, else RUN_DIR/seeds), checked, one row per seed, sorted by id."""
    console = console or Console(stderr=True)
    found = read_input(settings, "seeds", console, STAGE, hint=", or pass --input-dir")
    frame = found.read(["seed_id", "text"])
    frame = frame.unique("seed_id", keep="first").sort("seed_id")
    if settings.max_seeds:
        frame = frame.head(settings.max_seeds)
    return frame


def plan(seeds: pl.DataFrame, settings: GenerateSettings) -> Iterator[Lineage]:
    """This shard's lineages: seeds i, i+n, ... of the sorted seed list, each over its envs.

    Environments go round-robin over the global seed order (seed k's lineage j gets environment
    k + j), so every environment gets its share however the seeds are sharded.
    """
    envs = settings.envs
    for index in range(settings.shard, seeds.height, settings.num_shards):
        seed_id, text = seeds["seed_id"][index], seeds["text"][index]
        for j in range(settings.lineages_per_seed):
            yield Lineage(seed_id, text, envs[(index + j) % len(envs)], j, settings.single_turn > 0)


def expected_rows(settings: GenerateSettings) -> int:
    return settings.single_turn if settings.single_turn else settings.turns


class Generator:
    def __init__(self, settings: GenerateSettings, runner: TurnRunner, writer: ShardWriter, stats: TurnStats):
        self.settings, self.runner, self.writer, self.stats = settings, runner, writer, stats

    def record(self, row: dict) -> None:
        self.writer.add(row)
        self.stats.record(row)

    async def lineage(self, item: Lineage) -> None:
        env = get_env(item.env)
        if item.single:
            await self._single(item, env)
        else:
            await self._multi(item, env)
        self.stats.lineages_done += 1

    async def _multi(self, item: Lineage, env) -> None:
        previous = summary = None
        for turn in range(1, self.settings.turns + 1):
            kind, strategy = ("mutate", summary.strategy) if previous is not None else ("first", "first")
            req = TurnRequest(item.lineage_id, item.seed_id, env, "multi", turn, kind, strategy,
                              seed_text=item.seed_text, previous=previous, summary=summary)
            outcome = await self.runner.run(req)
            self.record(outcome.row)
            if outcome.problem is not None and outcome.summary is not None:
                previous, summary = outcome.problem, outcome.summary

    async def _single(self, item: Lineage, env) -> None:
        """The paper's baseline: K independent first-turn samples of one teacher prompt."""
        k = self.settings.single_turn
        first = TurnRequest(item.lineage_id, item.seed_id, env, "single", 1, "first", "first", seed_text=item.seed_text)
        answers = await self.runner.llm.complete("teacher", self.runner.teacher_messages(first), k, key=first.turn_id)
        outcomes = await asyncio.gather(*(
            self.runner.run(
                TurnRequest(f"{item.lineage_id}:s{i}", item.seed_id, env, "single", 1, "first", "first",
                            seed_text=item.seed_text, sample=i),
                completion=answer,
            )
            for i, answer in enumerate(answers)
        ))
        for outcome in outcomes:
            self.record(outcome.row)


async def _run_lineages(gen: Generator, todo: Iterator[Lineage], max_active: int, stop: asyncio.Event, progress) -> None:
    """Keep up to `max_active` lineages running; stop starting new ones once `stop` is set."""
    active: set[asyncio.Task] = set()
    pending = iter(todo)
    exhausted = False
    while True:
        while not exhausted and not stop.is_set() and len(active) < max_active:
            item = next(pending, None)
            if item is None:
                exhausted = True
                break
            active.add(asyncio.create_task(gen.lineage(item)))
        if not active:
            return
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait(active | {stopper}, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        for task in done - {stopper}:
            active.discard(task)
            task.result()  # a bug in one lineage should fail the run loudly, not vanish
        progress.refresh()
        if stop.is_set():
            for task in active:
                task.cancel()
            await asyncio.gather(*active, return_exceptions=True)
            return


async def run_async(settings: GenerateSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    from synthgen.llm import LLMClient
    from synthgen.sandbox import SandboxPool

    console = console or Console(stderr=True)
    stage = StageDir(settings.run_dir, STAGE)
    shard = shard_name(settings.shard, settings.num_shards)
    digest = settings.settings_hash()
    if check_finished(stage, shard, digest, force):
        console.print(f"generate: {shard} already finished in {stage.path}; skipping")
        return stage
    seeds = load_seeds(settings)
    writer = ShardWriter(stage, shard, PROBLEMS, digest, max_rows=settings.max_buffer_rows,
                         extra_meta={"settings": settings.hashed_view()})
    existing = writer.resume(force=force, columns=("lineage_id",))
    done_counts: Counter = Counter()
    if existing is not None:
        done_counts = Counter(existing["lineage_id"].str.replace(r":s\d+$", "").to_list())
        del existing
    need = expected_rows(settings)
    finished = sum(1 for count in done_counts.values() if count >= need)
    total = len(range(settings.shard, seeds.height, settings.num_shards)) * settings.lineages_per_seed
    # Lazy: a lineage (and its seed text as a Python string) exists only while it is scheduled.
    todo = (item for item in plan(seeds, settings) if done_counts.get(item.lineage_id, 0) < need)
    stats = TurnStats(lineages_total=total, lineages_done=finished)
    if writer.written:
        console.print(f"generate: resuming {shard}: {writer.written} rows on disk, {total - finished} lineages to go")

    stop = asyncio.Event()
    caught: list[int] = []
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        caught.append(signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)
    cache = Path(settings.run_dir) / "cache" / f"{STAGE}-{shard}.sqlite"
    try:
        async with LLMClient.from_settings(settings, cache_path=cache) as llm:
            await llm.preflight(settings.llm.wait_ready_s)
            with SandboxPool(workers=settings.sandbox.workers, allow_unsafe=settings.sandbox.allow_unsafe) as pool:
                runner = TurnRunner(llm, pool, settings, digest)
                gen = Generator(settings, runner, writer, stats)
                with LiveProgress(stats, llm, console, enabled=settings.progress) as progress:
                    await _run_lineages(gen, todo, max(1, settings.max_in_flight), stop, progress)
                usage, usage_line = llm.usage.as_dict(), llm.usage.summary()
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        writer.flush()
    info = {"shard": shard, "num_shards": settings.num_shards, "settings_hash": digest, "isolation": pool.isolation}
    # The stats file describes the whole shard, also after a resume; `llm` is this session's usage.
    write_stats(stage.path / f"stats-{shard}.json", shard_stats(stage, shard, stats), usage, info)
    if caught:
        raise Interrupted(caught[0])
    writer.finish({"lineages": total})
    console.print(summary_table(stats, usage_line, f"generate {shard}: {writer.written} rows in {stage.path}"))
    return stage


def shard_stats(stage: StageDir, shard: str, live: TurnStats) -> TurnStats:
    """Turn statistics recounted from every row of `shard` on disk."""
    whole = TurnStats(lineages_total=live.lineages_total, lineages_done=live.lineages_done, started=live.started)
    columns = ["turn", "valid", "reason", "pass_rate"]
    for part in stage.shard_parts(shard):
        for row in pl.read_parquet(part, columns=columns).iter_rows(named=True):
            whole.record(row)
    return whole


def run(settings: GenerateSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    return asyncio.run(run_async(settings, force=force, console=console))
