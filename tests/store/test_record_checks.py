"""Schema checks accept lossless relatives of the declared types (what other writers produce) and
keep optional columns optional; the refusals are covered through the CLI in test_bad_inputs.py."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.errors import UserError
from synthgen.store import record_checks as checks
from synthgen.store.records import PROBLEMS
from tests.helpers.problem_rows import problem_row


def _row(**kw) -> dict:
    row = problem_row(
        turn_id="t",
        problem_id="p",
        seed_id="s",
        lineage_id="l",
        env="deduction",
        turn=2,
        code="def f(x):\n    return x\n",
        attempts=8,
        scored=8,
        correct=4,
        settings_hash="h",
    )
    return row | kw


def test_a_polars_written_table_with_other_widths_reads_as_problems(tmp_path):
    # polars writes large strings, int64 for every integer, categoricals as dictionaries
    frame = pl.DataFrame([_row(), _row(turn_id="u", env="fuzzing", pass_rate=1)])
    frame = frame.with_columns(pl.col("env").cast(pl.Categorical), pl.lit(["1"]).alias("inputs"))
    frame.write_parquet(tmp_path / "mine.parquet")
    table = checks.read_checked([tmp_path / "mine.parquet"], checks.PROBLEMS_SPEC)
    assert table.schema == PROBLEMS.remove_metadata()
    assert table.column("turn").to_pylist() == [2, 2] and table.column("inputs").to_pylist() == [["1"], ["1"]]
    assert table.column("message").null_count == 2  # optional and absent: nulls


def test_null_pass_rates_are_fine_and_only_the_asked_columns_are_read(tmp_path):
    pq.write_table(pa.Table.from_pylist([_row(pass_rate=None)]), tmp_path / "a.parquet")
    table = checks.read_checked([tmp_path / "a.parquet"], checks.PROBLEMS_SPEC, ["turn_id", "pass_rate"])
    assert table.column_names == ["turn_id", "pass_rate"] and table.column("pass_rate").to_pylist() == [None]
    assert checks.read_checked([], checks.PROBLEMS_SPEC, ["turn_id"]).num_rows == 0


def test_training_reads_real_problems_that_lack_generation_columns(tmp_path):
    pq.write_table(
        pa.table({"env": ["deduction"], "code": ["def f(x):\n    return x\n"], "outputs": [["1"]]}),
        tmp_path / "real.parquet",
    )
    assert checks.read_file(tmp_path / "real.parquet", checks.TRAINING_SPEC).num_rows == 1
    with pytest.raises(UserError, match="has no column 'turn_id'"):
        checks.read_file(tmp_path / "real.parquet", checks.PROBLEMS_SPEC)
