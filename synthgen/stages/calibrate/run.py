"""`synthgen calibrate`: re-measure a problem set's pass rates with another student.

    synthgen calibrate --run-dir data/runs/exp1 --input-dir data/runs/exp1/bin \\
        --student-url http://node7:8000/v1 --student-model Qwen/Qwen3-8B-Base --attempts 32
    synthgen bin --run-dir data/runs/exp1-qwen --input-dir data/runs/exp1/calibrate --scheme broad

Any set of synthgen problems will do: a bin, `chain/problems`, a filter output (its rejects are
skipped), an export (its `data/` configs), any folder of problem Parquet files. Each distinct
problem is attempted M times by the student named on the command line, scored as `generate`
scores, and written to `RUN_DIR/calibrate/` as its input row with the new measurement (pass rate,
interval, provenance: synthgen.store.measurement; the mutation score and chance level measured
anew in the same sandbox job) and the one it replaces in the `prior_*` columns (`PRIOR`). `bin`,
`stats` and `filter` read it with `--input-dir RUN_DIR/calibrate` (bin refuses to mix it with
other measurements; filter drops the guessable problems).

The teacher is never asked. Sharding, resume and failures are the turn loop's
(synthgen.turns.loop). With `--keep-attempts solved|all` the attempts are kept in
RUN_DIR/calibrate-attempts/ (synthgen.store.attempts), told from generate's by their `stage` column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from synthgen.envs import get_env
from synthgen.envs.problem import Problem
from synthgen.errors import UserError
from synthgen.stages.calibrate.settings import CalibrateSettings
from synthgen.store.layout import StageDir
from synthgen.store.record_checks import BINNED_SPEC, read_checked
from synthgen.store.records import PROBLEMS
from synthgen.turns.loop import TurnLoop, TurnStage, UnitsLeft, read_rows
from synthgen.turns.turn import Kind, Strategy, TurnRequest

STAGE = "calibrate"
# prior_<column>: the input's measurement, kept beside the new one
PRIOR = {f"prior_{c}": c for c in ("pass_rate", "pass_rate_low", "pass_rate_high", "student_model", "measured_by")}
PRIOR["prior_difficulty"] = "difficulty"


def input_files(folder: Path) -> list[Path]:
    """The problem Parquet files of a set: an export's data/ configs, else every file below, rejects skipped."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"--input-dir {folder} is not a folder")
    root = folder / "data" if (folder / "data").is_dir() and (folder / "README.md").is_file() else folder
    files = sorted(p for p in root.rglob("*.parquet") if "rejects" not in p.relative_to(root).parts)
    if not files:
        raise UserError(f"{folder} holds no Parquet files of problems")
    return files


def read_problems(folder: Path, limit: int | None) -> pl.DataFrame:
    """Distinct valid problems of the set, sorted by problem_id (a stable order for the shards)."""
    frame = pl.from_arrow(read_checked(input_files(folder), BINNED_SPEC))
    frame = frame.filter(pl.col("problem_id").is_not_null() & pl.col("valid"))
    frame = frame.unique("problem_id", keep="first", maintain_order=True).sort("problem_id")
    if frame.height == 0:
        raise UserError(f"{folder} holds no valid problems to calibrate")
    return frame.head(limit) if limit else frame


class CalibrateStage(TurnStage):
    name, units = STAGE, "problems"

    def __init__(self, settings: CalibrateSettings):
        super().__init__(settings)
        self.problems: pl.DataFrame | None = None

    def rows_dir(self) -> StageDir:
        return StageDir(self.settings.run_dir, STAGE)

    def prepare(self) -> None:
        self.problems = read_problems(Path(self.settings.input_dir), self.settings.max_problems)
        self.input_meta = {"input": str(self.settings.input_dir)}

    def plan(self, parts: list[Path]) -> UnitsLeft:
        s = self.settings
        mine = self.problems.with_row_index("_i").filter(pl.col("_i") % s.num_shards == s.shard).drop("_i")
        on_disk = read_rows(parts, ["turn_id"])
        done = set(on_disk["turn_id"].to_list()) if on_disk is not None else set()
        todo = mine.filter(~pl.col("turn_id").is_in(list(done)))
        return UnitsLeft(todo.iter_rows(named=True), mine.height, mine.height - todo.height, todo.height)

    async def run_unit(self, row: dict[str, Any], loop: TurnLoop) -> bool:
        """`row`: the problem's row in the input, PROBLEMS columns plus difficulty."""
        req = TurnRequest(
            lineage_id=row["lineage_id"],
            seed_id=row["seed_id"],
            env=get_env(row["env"], self.settings.env),
            mode=row["mode"],
            turn=int(row["turn"]),
            kind=Kind.CALIBRATE,
            strategy=row.get("strategy") or Strategy.FIRST,
            key=f"calibrate:{row['problem_id']}",
        )
        kept = {name: row.get(name) for name in PROBLEMS.names}
        kept.update({prior: row.get(column) for prior, column in PRIOR.items()})
        return await loop.measure(req, kept, Problem.from_fields(row)) is not None


def run(settings: CalibrateSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    return TurnLoop(CalibrateStage(settings), force=force, console=console).run()
