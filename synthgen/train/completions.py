"""The training completions a run keeps, with their rewards: `train --save-completions solved|all`.

One Parquet file per generation round, `<output>/completions/round-000042.parquet` (the COMPLETIONS
schema; a null reward is an infrastructure failure), written by the main process from every
process's completions. `solved` keeps those with reward 1 (what `synthgen seeds completions OUTPUT`
turns into seeds: the paper's "real solution" seeds), `all` every one. A resumed run rewrites the
rounds after its checkpoint, so a file is always one round as trained.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

FOLDER = "completions"


class CompletionLog:
    """Writes the rounds' completions (see the module docstring)."""

    def __init__(self, output_dir: Path | str, mode: Literal["solved", "all"]):
        self.folder = Path(output_dir) / FOLDER
        self.mode = mode

    def write(self, round_: int, step: int, rows: list[dict], texts: list[str], rewards: list[float | None]) -> None:
        """One round: `rows` (problem_id, env, difficulty per completion), their texts and rewards."""
        from synthgen.store.files import file_metadata, write_parquet_atomic
        from synthgen.store.records import COMPLETIONS, table_from_rows

        keep = [i for i, r in enumerate(rewards) if self.mode == "all" or (r is not None and float(r) >= 1.0)]
        records = [
            {
                "round": round_,
                "step": step,
                **{k: rows[i].get(k) for k in ("problem_id", "env", "difficulty")},
                "completion": texts[i],
                "reward": rewards[i],
            }
            for i in keep
        ]
        table = table_from_rows(records, COMPLETIONS)
        write_parquet_atomic(self.folder / f"round-{round_:06d}.parquet", table, file_metadata("train", ""))

    def drop_after(self, round_: int) -> None:
        """Remove the files of rounds after `round_` (a resumed run redoes them)."""
        for path in self.folder.glob("round-*.parquet") if self.folder.is_dir() else []:
            if int(path.stem.split("-")[1]) > round_:
                path.unlink()
