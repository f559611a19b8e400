"""The tables of an exported dataset: one per (environment, bin), one for the chains.

Rows come only from finished stages (`--allow-partial` on purpose). A config is a folder of Parquet:

    data/<env>/<bin>/train-00000-of-00001.parquet   config "<env>-<bin>" (e.g. induction-hard)
    chains/train-00000-of-00001.parquet             config "chains": chain problems with chain_id, level, position
    kept/train-00000-of-00001.parquet               config "kept": every problem the filter kept ("all synthetic")
    all                                             config "all" (the default): data/*/*/*.parquet

Rows are sorted by problem id (chains by chain and position): an export of the same run is the same files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from synthgen.errors import UserError
from synthgen.settings.base import ENV_NAMES
from synthgen.store.bins import Bin
from synthgen.store.files import write_parquet_atomic
from synthgen.store.layout import StageDir, StageStatus

SPLIT = "train"
DEFAULT_CONFIG = "all"
CHAINS_CONFIG = "chains"
KEPT_CONFIG = "kept"
CHAIN_COLUMNS = ("chain_id", "level", "position")


@dataclass
class ConfigTable:
    """One dataset config: its name, where its files go, and its rows."""

    name: str
    folder: str  # relative to the dataset folder
    table: pa.Table
    env: str | None = None
    difficulty: str | None = None
    files: list[str] | None = None  # set when written

    @property
    def rows(self) -> int:
        return self.table.num_rows


def binned_configs(status: StageStatus, bins: list[Bin]) -> list[ConfigTable]:
    """One config per (environment, bin) that has rows: environments in registry order, bins hard first."""
    table = status.read_table()
    if table.num_rows == 0:
        raise UserError(f"{status.stage.path} holds no binned problems to export")
    frame = pl.from_arrow(table).with_row_index("_row")
    order = [b.name for b in bins] or sorted(frame["difficulty"].drop_nulls().unique().to_list())
    order += sorted(set(frame["difficulty"].drop_nulls().unique().to_list()) - set(order))
    envs = [e for e in ENV_NAMES if e in set(frame["env"].to_list())]
    out = []
    for env in envs:
        for difficulty in order:
            rows = frame.filter((pl.col("env") == env) & (pl.col("difficulty") == difficulty)).sort("problem_id")
            if rows.height:
                taken = _take(table, rows["_row"])
                out.append(ConfigTable(f"{env}-{difficulty}", f"data/{env}/{difficulty}", taken, env, difficulty))
    return out


def read_chains(run_dir: Path, allow_partial: bool) -> ConfigTable | None:
    """Every problem of every chain, with its chain, level and position; None without a chain stage
    (a finished one, or a partial one on purpose) or without chains."""
    stages = StageDir(run_dir, "chain/problems"), StageDir(run_dir, "chain/links")
    if not any(stage.parts() for stage in stages):
        return None
    problems, links = (stage.require_complete(allow_partial) for stage in stages)
    link_frame = pl.from_arrow(links.read_table(["problem_id", *CHAIN_COLUMNS]))
    if link_frame.height == 0:
        return None
    table = problems.read_table()
    frame = pl.from_arrow(table).with_row_index("_row").unique("problem_id", keep="first", maintain_order=True)
    joined = link_frame.join(frame.select("problem_id", "_row"), on="problem_id", how="left")
    lost = joined.filter(pl.col("_row").is_null())
    if lost.height:
        raise UserError(
            f"{links.stage.path}: {lost.height} chain link(s) name a problem missing from {problems.stage.path} "
            f"(e.g. {lost['problem_id'][0]}); re-run `synthgen chain`"
        )
    joined = joined.sort("chain_id", "position")
    rows = _take(table, joined["_row"])
    for i, (name, kind) in enumerate(zip(CHAIN_COLUMNS, (pa.string(), pa.string(), pa.int16()))):
        rows = rows.add_column(i, name, pa.array(joined[name].to_list(), kind))
    return ConfigTable(name=CHAINS_CONFIG, folder=CHAINS_CONFIG, table=rows)


def _take(table: pa.Table, rows: pl.Series) -> pa.Table:
    return table.take(pa.array(rows.to_list(), pa.int64())).replace_schema_metadata(None)


def write_config(folder: Path, config: ConfigTable, max_rows: int, metadata: dict[str, str]) -> list[str]:
    """Write a config's rows as `train-0000i-of-0000n.parquet` files; returns their relative paths."""
    count = max(1, -(-config.rows // max_rows))
    names = []
    for i in range(count):
        name = f"{config.folder}/{SPLIT}-{i:05d}-of-{count:05d}.parquet"
        write_parquet_atomic(folder / name, config.table.slice(i * max_rows, max_rows), metadata)
        names.append(name)
    config.files = names
    return names


def read_kept(run_dir: Path, allow_partial: bool) -> ConfigTable | None:
    """Every problem the filter kept, sorted by problem id, when the run has a filter stage."""
    stage = StageDir(run_dir, "filter")
    if not stage.parts():
        return None
    table = stage.require_complete(allow_partial).read_table()
    frame = pl.from_arrow(table).with_row_index("_row").sort("problem_id")
    return ConfigTable(name=KEPT_CONFIG, folder=KEPT_CONFIG, table=_take(table, frame["_row"]), difficulty=KEPT_CONFIG)
