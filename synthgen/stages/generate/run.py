"""`synthgen generate`: the paper's multi-turn teacher/student loop over the seeds, sharded.

Each seed starts `lineages_per_seed` lineages, spread over the chosen environments. A lineage
runs `turns` teacher turns: turn 1 from the seed, each later one from the last valid problem and
the student's results on it (the paper's progression: easier at p = 0, harder above 0.65, else a
variant near the same level). After a malformed or invalid turn the next prompt says what was
wrong with it. With `single_turn` K > 0, each lineage is instead K independent first-turn samples
of one teacher prompt (the paper's single-turn baseline).

How the turns run (resume, SIGTERM, infrastructure failures, progress, the stats file) is the
turn loop's business: see synthgen.turns.loop. A lineage whose turn failed on
infrastructure stops there and is redone by the next run.

With `--keep-attempts solved|all` the student's attempts of every valid problem are also kept
whole (text, reasoning, verdict, tokens) in RUN_DIR/generate-attempts/, sharded like the rows
(synthgen.store.attempts; `read_attempts` reads them back, `export --format sft` writes them).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from synthgen.envs import get_env
from synthgen.stages.generate.plan import Lineage, check_seed_files, plan_shard, stream_lineages
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.store.attempts import attempts_dir
from synthgen.store.layout import StageDir
from synthgen.store.readiness import read_input
from synthgen.turns.loop import Interrupted, Plan, TurnLoop, TurnStage
from synthgen.turns.turn import TurnRequest

__all__ = ["GenerateStage", "Interrupted", "Lineage", "run"]

STAGE = "generate"


def feedback_of(row: dict) -> str:
    """What the next teacher prompt is told about an invalid turn: "<reason>: <detail>"."""
    detail = (row.get("reason_detail") or "").strip()
    return f"{row['reason']}: {detail}" if detail else str(row["reason"])


class GenerateStage(TurnStage):
    name, units = STAGE, "lineages"

    def __init__(self, settings: GenerateSettings):
        super().__init__(settings)
        self.seed_parts: list[Path] = []

    @property
    def turns_per_lineage(self) -> int:
        return self.settings.single_turn or self.settings.turns

    def rows_dir(self) -> StageDir:
        return StageDir(self.settings.run_dir, STAGE)

    def attempts_dir(self) -> StageDir:
        return attempts_dir(self.settings.run_dir, STAGE)

    def prepare(self) -> None:
        seeds = StageDir.input_of(self.settings.run_dir, "seeds", self.settings.input_dir)
        found = read_input(seeds, self.settings.allow_partial, Console(stderr=True), STAGE)
        self.seed_parts, self.input_meta = found.parts, found.metadata()
        check_seed_files(self.seed_parts)

    def plan(self, parts: list[Path]) -> Plan:
        s, need = self.settings, self.turns_per_lineage
        shard = plan_shard(self.seed_parts, parts, s, need)
        todo = stream_lineages(self.seed_parts, shard.todo, s.envs, s.single_turn > 0)
        turns_todo = shard.lineages_total * need - shard.rows_on_disk
        return Plan(todo, shard.lineages_total, shard.lineages_done, turns_todo, shard.resumed_keys)

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
                turns_left=turns - turn + 1,
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
        messages = loop.runner.teacher_messages(first)
        answers = await loop.llm.complete("teacher", messages, k, key=first.turn_id, priority=first.priority)

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
