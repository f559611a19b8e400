"""`synthgen calibrate`: re-measure a problem set's pass rates with another student.

    synthgen calibrate --run-dir data/runs/exp1 --input-dir data/runs/exp1/bin \\
        --student-url http://node7:8000/v1 --student-model Qwen/Qwen3-8B-Base --attempts 32
    synthgen bin --run-dir data/runs/exp1-qwen --input-dir data/runs/exp1/calibrate --scheme broad

Any set of synthgen problems will do: a bin folder or one bin, `chain/problems`, a filter output
(its rejects are skipped), an export (its `data/` configs), any folder of problem Parquet files.
Each distinct problem (by `problem_id`) is attempted M times by the student named on the command
line, through the same LLM client, sandbox and environment scoring as `generate`, and written to
`RUN_DIR/calibrate/` as its input row with the new measurement in `pass_rate`, `correct`,
`scored`, the interval and the provenance columns (synthgen.store.measurement), and the measurement it
replaces in `prior_pass_rate`, `prior_pass_rate_low`/`_high`, `prior_student_model`,
`prior_measured_by` and `prior_difficulty` (its bin in the input, when it had one). The mutation
score and the chance level (synthgen.envs.chance: `chance_rate`, `chance_strategies`) are measured
anew in the same sandbox job as generate measures them, so any set, an imported one or one made
before synthgen measured chance, gets them; `bin` and `stats` then read the new pass rates against
chance, and `filter --input-dir RUN_DIR/calibrate` drops the guessable ones. `bin
--input-dir RUN_DIR/calibrate` bins by the new pass rates (and refuses to mix them with other
measurements); `train --data` reads the result of that bin like any other.

The teacher is never asked. Sharding, resume and failures are the turn loop's (synthgen.turns.
loop): `--shard i --num-shards n` (or SLURM_ARRAY_TASK_ID) takes every n-th problem; a run
killed at any moment (kill -9 included) resumes from the rows on disk, the request cache replaying
every answer already paid for, and ends with the rows of an uninterrupted run.

With `--keep-attempts solved|all` the new measurement's attempts are kept whole in
RUN_DIR/calibrate-attempts/ (synthgen.store.attempts), beside generate's when both run in one
run directory; their `stage` column tells the two apart (calibrate keeps its input's turn_id).
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
PRIOR = {
    "prior_pass_rate": "pass_rate",
    "prior_pass_rate_low": "pass_rate_low",
    "prior_pass_rate_high": "pass_rate_high",
    "prior_student_model": "student_model",
    "prior_measured_by": "measured_by",
    "prior_difficulty": "difficulty",
}


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
