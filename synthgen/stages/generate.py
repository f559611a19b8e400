"""`synthgen generate`: the paper's multi-turn teacher/student loop over the seeds, sharded.

Each seed starts `lineages_per_seed` lineages, spread over the chosen environments. A lineage
runs `turns` teacher turns: turn 1 from the seed, each later one from the last valid problem and
the student's results on it (the paper's progression: easier at p = 0, harder above 0.65, else a
variant near the same level). After a malformed or invalid turn the next prompt says what was
wrong with it. With `single_turn` K > 0, each lineage is instead K independent first-turn samples
of one teacher prompt (the paper's single-turn baseline).

How the turns run (resume, SIGTERM, infrastructure failures, progress, the stats file) is the
turn loop's business: see synthgen.stages.turn_loop. A lineage whose turn failed on
infrastructure stops there and is redone by the next run.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl
from rich.console import Console

from synthgen.config.generate import GenerateSettings
from synthgen.envs import get_env
from synthgen.shards import StageDir
from synthgen.stages.readiness import read_input
from synthgen.stages.turn_loop import Interrupted, Plan, TurnLoop, TurnStage
from synthgen.stages.turns import TurnRequest

__all__ = ["GenerateStage", "Interrupted", "Lineage", "load_seeds", "plan", "run"]

STAGE = "generate"


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
    return read_seeds(settings, console)[0]


def read_seeds(settings: GenerateSettings, console: Console | None = None) -> tuple[pl.DataFrame, dict]:
    """The seeds, and the metadata that records a partial input (empty when it was complete)."""
    console = console or Console(stderr=True)
    found = read_input(settings, "seeds", console, STAGE, hint=", or pass --input-dir")
    frame = found.read(["seed_id", "text"])
    frame = frame.unique("seed_id", keep="first").sort("seed_id")
    if settings.max_seeds:
        frame = frame.head(settings.max_seeds)
    return frame, found.metadata()


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


def feedback_of(row: dict) -> str:
    """What the next teacher prompt is told about an invalid turn: "<reason>: <detail>"."""
    detail = (row.get("reason_detail") or "").strip()
    return f"{row['reason']}: {detail}" if detail else str(row["reason"])


class GenerateStage(TurnStage):
    name, units = STAGE, "lineages"
    resume_columns = ("lineage_id",)

    def __init__(self, settings: GenerateSettings):
        super().__init__(settings)
        self.seeds: pl.DataFrame | None = None

    @property
    def turns_per_lineage(self) -> int:
        return self.settings.single_turn or self.settings.turns

    def rows_dir(self) -> StageDir:
        return StageDir(self.settings.run_dir, STAGE)

    def prepare(self) -> None:
        self.seeds, self.input_meta = read_seeds(self.settings)

    def plan(self, on_disk: pl.DataFrame | None) -> Plan:
        s, need = self.settings, self.turns_per_lineage
        rows: Counter = Counter()
        if on_disk is not None:  # single-turn samples `<lineage>:s<i>` count for their lineage
            rows = Counter(on_disk["lineage_id"].str.replace(r":s\d+$", "").to_list())
        total = len(range(s.shard, self.seeds.height, s.num_shards)) * s.lineages_per_seed
        finished = sum(1 for count in rows.values() if count >= need)
        # Lazy: a lineage (and its seed text as a Python string) exists only while it is scheduled.
        todo = (item for item in plan(self.seeds, s) if rows.get(item.lineage_id, 0) < need)
        return Plan(todo, total, finished, turns_todo=total * need - sum(rows.values()))

    async def run_unit(self, item: Lineage, loop: TurnLoop) -> None:
        env = get_env(item.env)
        if item.single:
            await self._single(item, env, loop)
        else:
            await self._multi(item, env, loop)

    async def _multi(self, item: Lineage, env, loop: TurnLoop) -> None:
        previous = summary = feedback = None
        turns = self.settings.turns
        for turn in range(1, turns + 1):
            kind, strategy = ("mutate", summary.strategy) if previous is not None else ("first", "first")
            req = TurnRequest(
                item.lineage_id,
                item.seed_id,
                env,
                "multi",
                turn,
                kind,
                strategy,
                seed_text=item.seed_text,
                previous=previous,
                summary=summary,
                feedback=feedback,
            )
            outcome = await loop.turn(req)
            if outcome is None:  # later turns would build on a turn that never finished
                loop.expect_turns(-(turns - turn + 1))
                return
            if outcome.problem is not None and outcome.summary is not None:
                previous, summary, feedback = outcome.problem, outcome.summary, None
            else:
                feedback = feedback_of(outcome.row)

    async def _single(self, item: Lineage, env, loop: TurnLoop) -> None:
        """The paper's baseline: K independent first-turn samples of one teacher prompt."""
        k = self.settings.single_turn
        first = TurnRequest(item.lineage_id, item.seed_id, env, "single", 1, "first", "first", seed_text=item.seed_text)
        answers = await loop.llm.complete("teacher", loop.runner.teacher_messages(first), k, key=first.turn_id)

        async def sample(i: int, answer) -> None:
            req = TurnRequest(
                f"{item.lineage_id}:s{i}",
                item.seed_id,
                env,
                "single",
                1,
                "first",
                "first",
                seed_text=item.seed_text,
                sample=i,
            )
            if await loop.turn(req, completion=answer) is None:
                loop.expect_turns(-1)

        await asyncio.gather(*(sample(i, answer) for i, answer in enumerate(answers)))


def run(settings: GenerateSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    return TurnLoop(GenerateStage(settings), force=force, console=console).run()
