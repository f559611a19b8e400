"""`synthgen chain`: build hard -> medium -> easy chains in reverse, as SPEC §7 describes.

From each hard problem the teacher is asked for an easier variant of the same core task; the
student attempts it M times and the variant is accepted as the medium step only if its pass rate
falls in the medium band, then the same from medium to easy. Each step gets a bounded number of
tries. Every tried variant is kept as a PROBLEMS row (mode `chain`) in `chain/problems/`; accepted
chains are written as links (chain id, level, position, problem id) in `chain/links/`.

Resume works as in generate: each try has a stable `turn_id`, the request cache replays paid
requests, and rows and links already on disk are not written twice.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl
from rich.console import Console

from synthgen.config.chain import ChainSettings
from synthgen.envs import get_env
from synthgen.envs.base import Problem
from synthgen.records import CHAIN_LINKS, PROBLEMS
from synthgen.shards import StageDir
from synthgen.stages.common import check_finished, read_input, shard_name
from synthgen.stages.generate_report import LiveProgress, TurnStats, summary_table, write_stats
from synthgen.stages.turns import TurnRequest, TurnRunner
from synthgen.stages.writer import ShardWriter

STAGE = "chain"
STEPS = (("hard", "medium"), ("medium", "easy"))


def in_band(pass_rate: float | None, band: tuple[float, float]) -> bool:
    return pass_rate is not None and band[0] <= pass_rate <= band[1]


def load_start_problems(settings: ChainSettings, console: Console | None = None) -> pl.DataFrame:
    """This shard's hard problems to start chains from, out of the finished filter (or `input_dir`) output."""
    console = console or Console(stderr=True)
    found = read_input(settings, "filter", console, STAGE, hint=", or pass --input-dir")
    frame = found.read().filter(pl.col("valid"))
    lo, hi = settings.bands["hard"]
    hard = frame.filter(pl.col("pass_rate").is_between(lo, hi)).unique("problem_id", keep="first").sort("problem_id")
    if settings.max_chains:
        hard = hard.head(settings.max_chains)
    return hard[settings.shard :: settings.num_shards]


class ChainBuilder:
    def __init__(self, settings: ChainSettings, runner: TurnRunner, rows: ShardWriter, links: ShardWriter,
                 stats: TurnStats):
        self.settings, self.runner, self.rows, self.links, self.stats = settings, runner, rows, links, stats
        self.accepted = 0

    async def build(self, start: dict) -> None:
        env = get_env(start["env"])
        chain_id = f"chain:{start['problem_id']}"
        steps = [("hard", start["problem_id"], start["pass_rate"])]
        current = Problem.from_fields(start)
        for position, (_, target) in enumerate(STEPS, 1):
            found = await self._step(chain_id, env, start, current, target, position)
            if found is None:
                break
            current, pass_rate = found
            steps.append((target, current.problem_id, pass_rate))
        else:
            for position, (level, problem_id, pass_rate) in enumerate(steps):
                self.links.add({"link_id": f"{chain_id}:{position}", "chain_id": chain_id, "level": level,
                                "position": position, "problem_id": problem_id, "pass_rate": pass_rate,
                                "env": env.name})
            self.accepted += 1
        self.stats.lineages_done += 1

    async def _step(self, chain_id, env, start, previous: Problem, target: str, position: int):
        band = self.settings.bands[target]
        for attempt in range(1, self.settings.tries + 1):
            req = TurnRequest(f"{chain_id}:{target}:try{attempt}", start["seed_id"], env, "chain", position,
                              "chain", "chain-easier", previous=previous)
            outcome = await self.runner.run(req)
            outcome.row["lineage_id"] = start["lineage_id"]
            self.rows.add(outcome.row)
            self.stats.record(outcome.row)
            if outcome.problem is not None and in_band(outcome.row["pass_rate"], band):
                return outcome.problem, outcome.row["pass_rate"]
        return None


async def run_async(settings: ChainSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    from synthgen.llm import LLMClient
    from synthgen.sandbox import SandboxPool

    console = console or Console(stderr=True)
    shard = shard_name(settings.shard, settings.num_shards)
    digest = settings.settings_hash()
    problems_dir = StageDir(Path(settings.run_dir) / STAGE, "problems")
    links_dir = StageDir(Path(settings.run_dir) / STAGE, "links")
    if check_finished(links_dir, shard, digest, force):
        console.print(f"chain: {shard} already finished; skipping")
        return links_dir
    starts = load_start_problems(settings)
    meta = {"settings": settings.hashed_view()}
    rows = ShardWriter(problems_dir, shard, PROBLEMS, digest, max_rows=settings.max_buffer_rows, extra_meta=meta)
    links = ShardWriter(links_dir, shard, CHAIN_LINKS, digest, key="link_id", max_rows=settings.max_buffer_rows,
                        extra_meta=meta)
    rows.resume(force=force)
    links.resume(force=force)
    stats = TurnStats(lineages_total=starts.height)
    cache = Path(settings.run_dir) / "cache" / f"{STAGE}-{shard}.sqlite"
    try:
        async with LLMClient.from_settings(settings, cache_path=cache) as llm:
            await llm.preflight(settings.llm.wait_ready_s)
            with SandboxPool(workers=settings.sandbox.workers, allow_unsafe=settings.sandbox.allow_unsafe) as pool:
                builder = ChainBuilder(settings, TurnRunner(llm, pool, settings, digest), rows, links, stats)
                limit = asyncio.Semaphore(max(1, settings.max_in_flight))

                async def one(start: dict) -> None:
                    async with limit:
                        await builder.build(start)
                        progress.refresh()

                with LiveProgress(stats, llm, console, enabled=settings.progress, label="chain") as progress:
                    await asyncio.gather(*(one(s) for s in starts.iter_rows(named=True)))
            usage, usage_line = llm.usage.as_dict(), llm.usage.summary()
    finally:
        # Finished tries and chains reach disk even when the run is interrupted or fails.
        rows.flush()
        links.flush()
    rows.finish({"starts": starts.height})
    links.finish({"chains": builder.accepted, "starts": starts.height})
    write_stats(Path(settings.run_dir) / STAGE / f"stats-{shard}.json", stats, usage,
                {"shard": shard, "chains": builder.accepted, "starts": starts.height})
    console.print(summary_table(stats, usage_line, f"chain {shard}: {builder.accepted} chains from {starts.height} hard problems"))
    if settings.disjoint and settings.num_shards == 1:
        from synthgen.stages.chain_disjoint import write_disjoint

        write_disjoint(settings, console)
    return links_dir


def run(settings: ChainSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    return asyncio.run(run_async(settings, force=force, console=console))



def demo_step(run_dir: Path, *, console: Console, llm_roles: dict, seed: int, attempts: int) -> None:
    """The chain step of `synthgen demo`, with the disjoint baseline."""
    from synthgen.config.base import resolve_settings

    settings = resolve_settings(
        ChainSettings, {}, {"run_dir": run_dir, "seed": seed, "attempts": attempts, "disjoint": True, **llm_roles}
    )
    run(settings, console=console)
