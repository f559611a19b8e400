"""Which lineages a generate shard still has to run, worked out lazily: a million seeds in bounded memory.

Seed i of the seeds sorted by id (deduplicated, the first `max_seeds`) belongs to shard i mod n,
and its lineage j gets environment (i + j) mod E, so every environment gets its share however the
seeds are sharded. Only the seed ids are read to decide that and the rows on disk are counted per
lineage with polars; the texts stream from the seed files one record batch at a time, as the turn
loop takes lineages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from synthgen.errors import UserError
from synthgen.store import record_checks as checks
from synthgen.turns.loop import UnitsLeft

BATCH_ROWS = 2048  # seed texts read at a time
SINGLE_SAMPLE = r":s\d+$"  # single-turn samples `<lineage>:s<i>` count for their lineage


@dataclass(frozen=True)
class SeedLineage:
    seed_id: str
    seed_text: str
    env: str
    index: int
    single: bool

    @property
    def lineage_id(self) -> str:
        return f"{self.seed_id}:{self.env}:{self.index}"


def check_seed_files(parts: list[Path]) -> None:
    """Every seed file's columns and types from its footer, and no null seed text where the footer
    has statistics (files without them are checked batch by batch as they are read)."""
    for part in parts:
        meta = pq.ParquetFile(part).metadata
        checks.check_schema(meta.schema.to_arrow_schema(), checks.SEEDS_SPEC, part, ["seed_id", "text"])
        column = meta.schema.to_arrow_schema().get_field_index("text")
        for group in range(meta.num_row_groups):
            stats = meta.row_group(group).column(column).statistics
            if stats is not None and stats.has_null_count and stats.null_count:
                raise UserError(f"{part}: column 'text' holds nulls, which it must not")


def shard_seeds(parts: list[Path], shard: int, num_shards: int, max_seeds: int | None) -> pl.DataFrame:
    """This shard's seeds as seed_id, file, row and index (the place in the sorted order of all seeds).
    A stable sort then a look at the neighbour drops repeated ids (the first in file order stays):
    half the memory of a hash-based `unique` on a million strings."""
    frames = []
    for i, part in enumerate(parts):
        ids = pl.from_arrow(checks.read_parts([part], checks.SEEDS_SPEC, ["seed_id"]))
        frames.append(ids.with_columns(file=pl.lit(i, pl.UInt32), row=pl.int_range(pl.len(), dtype=pl.UInt32)))
    seeds = pl.concat(frames).sort("seed_id", maintain_order=True)
    del frames
    seeds = seeds.filter(pl.col("seed_id").ne_missing(pl.col("seed_id").shift(1)))
    if max_seeds:
        seeds = seeds.head(max_seeds)
    return seeds.with_row_index("index").filter(pl.col("index") % num_shards == shard)


def rows_per_lineage(parts: list[Path]) -> pl.DataFrame:
    """lineage_id, rows: the rows on disk of each lineage of the shard (single-turn samples folded in)."""
    if not parts:
        return pl.DataFrame(schema={"lineage_id": pl.String, "rows": pl.UInt32})
    lineage = pl.col("lineage_id").str.replace(SINGLE_SAMPLE, "")
    counts = pl.scan_parquet(parts).select(lineage).group_by("lineage_id").agg(pl.len().cast(pl.UInt32).alias("rows"))
    return counts.collect(engine="streaming")


def plan_shard(parts: list[Path], rows_parts: list[Path], settings, turns_per_lineage: int) -> UnitsLeft:
    """The lineages of this shard left to run, from the seed files and the shard's rows on disk: kept
    as integers (file, row, j, env) sorted by file and row, so that their texts stream in file order."""
    envs = settings.envs
    seeds = shard_seeds(parts, settings.shard, settings.num_shards, settings.max_seeds)
    js = pl.DataFrame({"j": range(settings.lineages_per_seed)}, schema={"j": pl.UInt32})
    lineages = seeds.join(js, how="cross").with_columns(
        env=((pl.col("index") + pl.col("j")) % len(envs)).cast(pl.UInt32)
    )
    del seeds
    need, resumed = turns_per_lineage, set()
    if rows_parts:  # a resumed shard: which lineages are finished, which started
        env_name = pl.col("env").replace_strict(dict(enumerate(envs)), return_dtype=pl.String)
        lineage_id = pl.concat_str(pl.col("seed_id"), pl.lit(":"), env_name, pl.lit(":"), pl.col("j").cast(pl.String))
        lineages = lineages.with_columns(lineage_id=lineage_id).join(rows_per_lineage(rows_parts), "lineage_id", "left")
        lineages = lineages.drop("seed_id").with_columns(pl.col("rows").fill_null(0))
        partial = lineages.filter((pl.col("rows") > 0) & (pl.col("rows") < need))["lineage_id"]
        if partial.len():
            keys = pl.scan_parquet(rows_parts).select("turn_id", pl.col("lineage_id").str.replace(SINGLE_SAMPLE, ""))
            hits = keys.filter(pl.col("lineage_id").is_in(partial.implode())).select("turn_id").collect()
            resumed = set(hits["turn_id"].to_list())
    else:
        lineages = lineages.drop("seed_id").with_columns(rows=pl.lit(0, pl.UInt32))
    todo = lineages.filter(pl.col("rows") < need).select("file", "row", "j", "env").sort("file", "row", "j")
    return UnitsLeft(
        stream_lineages(parts, todo, envs, settings.single_turn > 0),
        lineages.height,
        lineages.height - todo.height,
        turns_todo=lineages.height * need - int(lineages["rows"].sum()),
        resumed_keys=resumed,
    )


def stream_lineages(parts: list[Path], todo: pl.DataFrame, envs: list[str], single: bool) -> Iterator[SeedLineage]:
    """The lineages of `todo`, their seed texts read from `parts` batch by batch, in file order."""
    for (file_index,), rows in todo.group_by("file", maintain_order=True):
        part = parts[file_index]
        wanted = rows["row"].to_numpy()
        js, env_ids = rows["j"].to_list(), rows["env"].to_list()
        reader = pq.ParquetFile(part)
        start, k = 0, 0
        for batch in reader.iter_batches(batch_size=BATCH_ROWS, columns=["seed_id", "text"]):
            end = start + batch.num_rows
            stop = int(np.searchsorted(wanted, end, side="left"))
            if stop > k:
                ids, texts = batch.column(0), batch.column(1)
                for at in range(k, stop):
                    r = int(wanted[at]) - start
                    text = texts[r].as_py()
                    if text is None:
                        raise UserError(f"{part}: column 'text' is null in row {int(wanted[at])}, which it must not be")
                    yield SeedLineage(ids[r].as_py(), text, envs[env_ids[at]], js[at], single)
                k = stop
            start = end
            if k >= len(wanted):
                break
