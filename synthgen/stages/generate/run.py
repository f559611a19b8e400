"""`synthgen generate`: the paper's multi-turn teacher/student loop over the seeds, sharded.

Each seed starts `lineages_per_seed` lineages, spread over the chosen environments. A lineage
runs `turns` teacher turns: turn 1 from the seed, each later one from the last valid problem and
the student's results on it (the paper's progression); after a malformed or invalid turn the next
prompt says what was wrong. With `single_turn` K > 0 a lineage is instead K independent
first-turn samples of one teacher prompt (the paper's single-turn baseline).

The turn loop (synthgen.turns.loop) runs the turns: resume, SIGTERM, infrastructure failures,
progress, stats. With `--keep-attempts solved|all` the student's attempts of every valid problem
are kept whole in RUN_DIR/generate-attempts/ (synthgen.store.attempts).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from rich.console import Console

from synthgen.envs import get_env
from synthgen.stages.generate.plan import SeedLineage, check_seed_files, plan_shard
from synthgen.stages.generate.settings import GenerateSettings
from synthgen.store.layout import StageDir
from synthgen.store.readiness import read_input
from synthgen.turns.loop import TurnLoop, TurnStage, UnitsLeft
from synthgen.turns.turn import Lineage, Mode

STAGE = "generate"


class GenerateStage(TurnStage):
    name, units = STAGE, "lineages"

    def __init__(self, settings: GenerateSettings):
        super().__init__(settings)
        self.seed_parts: list[Path] = []

    @property
    def turns_per_lineage(self) -> int:
        return self.settings.single_turn or self.settings.turns

    @property
    def teacher_samples(self) -> int:
        return self.settings.single_turn or 1

    def rows_dir(self) -> StageDir:
        return StageDir(self.settings.run_dir, STAGE)

    def prepare(self) -> None:
        seeds = StageDir.input_of(self.settings.run_dir, "seeds", self.settings.input_dir)
        found = read_input(seeds, self.settings.allow_partial, Console(stderr=True), STAGE)
        self.seed_parts, self.input_meta = found.parts, found.metadata()
        check_seed_files(self.seed_parts)

    def plan(self, parts: list[Path]) -> UnitsLeft:
        return plan_shard(self.seed_parts, parts, self.settings, self.turns_per_lineage)

    async def run_unit(self, item: SeedLineage, loop: TurnLoop) -> bool:
        mode = Mode.SINGLE if item.single else Mode.MULTI
        state = Lineage(item.lineage_id, item.seed_id, get_env(item.env), mode, seed_text=item.seed_text)
        return await (self._single(state, loop) if item.single else self._multi(state, loop))

    async def _multi(self, state: Lineage, loop: TurnLoop) -> bool:
        turns = self.settings.turns
        for turn in range(1, turns + 1):
            outcome = await loop.turn(state.request(turn, turns_left=turns - turn + 1))
            if outcome is None:  # later turns would build on a turn that never finished
                loop.expect_turns(-(turns - turn + 1))
                return False
            state.absorb(outcome)
        return True

    async def _single(self, state: Lineage, loop: TurnLoop) -> bool:
        """The paper's baseline: K independent first-turn samples of one teacher prompt."""
        first = state.request(1)
        messages = loop.runner.teacher_messages(first)
        answers = await loop.llm.complete(
            "teacher", messages, self.settings.single_turn, key=first.turn_id, priority=first.priority
        )

        async def sample(i: int, answer) -> bool:
            req = dataclasses.replace(first, lineage_id=f"{state.lineage_id}:s{i}")
            if await loop.turn(req, completion=answer) is None:
                loop.expect_turns(-1)
                return False
            return True

        return all(await asyncio.gather(*(sample(i, answer) for i, answer in enumerate(answers))))


def run(settings: GenerateSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    return TurnLoop(GenerateStage(settings), force=force, console=console).run()
