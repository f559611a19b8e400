"""The problems every non-hf format holds, one row per problem, with its prompt, ground truth and measurement.

    problems = portable_problems(bin_status, chains)       # polars: PROBLEMS columns + difficulty + chain columns
    rows = render(problems, splits)                         # [PortableRow(...)] in problem-id order

What is exported: every binned problem (the bin stage), plus, when the run has chains, every
problem of every chain. A problem that is both binned and in a chain is one row: its binned row
(its bin in `difficulty`, the measurement that put it there, its `turn_id`) with `chain_id`, `level`
and `position` filled in. A chain problem that no bin holds (the chain's medium and easy steps,
measured by the chain stage) keeps the chain stage's row and its level as `difficulty`, as
`synthgen train` does with a chain folder. The filter's `kept` set (the hf format's `kept` config)
is not part of these formats: train on its bins.

Rows are sorted by problem id, so an export of the same run is the same files. The prompt, the
ground truth and the measurement come from synthgen.interop.records, the one definition that the
trainers' entry points read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from synthgen.export.tables import CHAIN_COLUMNS, ConfigTable
from synthgen.store.layout import StageStatus


@dataclass
class PortableRow:
    """One exported problem: where it goes and what every format says of it."""

    problem: dict[str, Any]  # the PROBLEMS row, with difficulty and the chain columns
    split: str  # train | test
    prompt: list[dict[str, str]]  # records.student_prompt
    truth: str  # records.ground_truth
    measurement: dict[str, Any]  # records.measurement


def portable_problems(bin_status: StageStatus, chains: ConfigTable | None) -> pl.DataFrame:
    """The binned problems and the chains' problems, one row per problem id, sorted by problem id."""
    binned = pl.from_arrow(bin_status.read_table())
    # A problem id appears once in a bin (the filter deduplicates); sorting first keeps the choice
    # deterministic should a hand-made bin folder repeat one.
    binned = binned.sort("problem_id", "turn_id").unique("problem_id", keep="first", maintain_order=True)
    binned = binned.with_columns(
        pl.lit(None, pl.String).alias("chain_id"),
        pl.lit(None, pl.String).alias("level"),
        pl.lit(None, pl.Int16).alias("position"),
    )
    if chains is None or chains.rows == 0:
        return binned.sort("problem_id")
    chained = pl.from_arrow(chains.table).sort("chain_id", "position")
    # Chains of different shards may share a problem: the chain that sorts first keeps it.
    chained = chained.unique("problem_id", keep="first", maintain_order=True)
    links = chained.select("problem_id", *CHAIN_COLUMNS)
    in_bins = binned.drop(*CHAIN_COLUMNS).join(links, on="problem_id", how="left")
    only_chained = chained.filter(~pl.col("problem_id").is_in(binned["problem_id"].implode()))
    only_chained = only_chained.with_columns(pl.col("level").alias("difficulty")).select(in_bins.columns)
    return pl.concat([in_bins, only_chained], how="vertical_relaxed").sort("problem_id")


def render(problems: pl.DataFrame, splits: list[str]) -> list[PortableRow]:
    """Each problem's prompt, ground truth and measurement, beside its split."""
    from synthgen.interop.records import ground_truth, measurement, student_prompt

    out = []
    for row, split in zip(problems.to_dicts(), splits):
        out.append(PortableRow(row, split, student_prompt(row), ground_truth(row), measurement(row)))
    return out
