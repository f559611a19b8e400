"""Training data: binned folders and chain folders -> scorable rows -> student prompts (fast)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.errors import UserError
from synthgen.store import records
from synthgen.train.data import bin_counts, load_problem_rows
from tests.helpers.train import deduction_rows, write_binned


def test_binned_folders_give_rows_with_their_bin(tmp_path):
    bins = write_binned(tmp_path / "a", bins=("easy", "medium"), n=3)
    rows = load_problem_rows([bins, bins])  # the same folder twice: each problem once
    assert bin_counts(rows) == {"easy": 3, "medium": 3}
    assert {"code", "inputs", "outputs", "env", "problem_id"} <= set(rows[0])


def test_folder_name_is_the_bin_when_the_column_is_missing_and_bad_rows_are_skipped(tmp_path):
    rows = deduction_rows("hard", 3)
    rows[1]["valid"] = False
    rows[2]["outputs"] = None
    for r in rows:
        del r["difficulty"]
    (tmp_path / "hard").mkdir()
    pq.write_table(records.table_from_rows(rows, records.PROBLEMS), tmp_path / "hard" / "p.parquet")
    pq.write_table(pa.table({"other": [1]}), tmp_path / "stats.parquet")  # not a problems table: skipped
    assert bin_counts(load_problem_rows([tmp_path])) == {"hard": 1}


def test_chain_folder_uses_link_levels(tmp_path):
    problems = deduction_rows("easy", 3)
    for r in problems:
        del r["difficulty"]
    (tmp_path / "problems").mkdir()
    (tmp_path / "links").mkdir()
    pq.write_table(records.table_from_rows(problems, records.PROBLEMS), tmp_path / "problems" / "p.parquet")
    links = [
        {
            "link_id": f"c/{i}",
            "chain_id": "c",
            "level": lvl,
            "position": i,
            "problem_id": p["problem_id"],
            "pass_rate": 0.5,
            "env": "deduction",
        }
        for i, (lvl, p) in enumerate(zip(("hard", "medium"), problems))
    ]
    pq.write_table(records.table_from_rows(links, records.CHAIN_LINKS), tmp_path / "links" / "l.parquet")
    assert bin_counts(load_problem_rows([tmp_path])) == {"hard": 1, "medium": 1}  # the unlinked try is left out


def test_a_chain_level_missing_from_problems_is_an_error_not_a_lost_bin(tmp_path):
    problems = deduction_rows("easy", 3)
    for r in problems:
        del r["difficulty"]
    (tmp_path / "problems").mkdir()
    (tmp_path / "links").mkdir()
    # Chains written before the hard starts went into problems/: their hard level would vanish.
    pq.write_table(records.table_from_rows(problems[1:], records.PROBLEMS), tmp_path / "problems" / "p.parquet")
    levels = zip(("hard", "medium", "easy"), problems)
    links = [
        {
            "link_id": f"c:{i}",
            "chain_id": "c",
            "level": lvl,
            "position": i,
            "problem_id": p["problem_id"],
            "pass_rate": 0.5,
            "env": "deduction",
        }
        for i, (lvl, p) in enumerate(levels)
    ]
    pq.write_table(records.table_from_rows(links, records.CHAIN_LINKS), tmp_path / "links" / "l.parquet")
    with pytest.raises(UserError, match=r"missing from problems/ \(1 hard\)"):
        load_problem_rows([tmp_path])


def test_missing_or_empty_data_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_problem_rows([tmp_path / "nope"])
    with pytest.raises(UserError, match="no scorable problems"):
        load_problem_rows([tmp_path])


def test_prompts_come_from_the_environment_template(binned_dir):
    pytest.importorskip("datasets")
    from synthgen.train.data import to_dataset

    ds = to_dataset(load_problem_rows([binned_dir])[:2])
    prompt = ds[0]["prompt"]
    assert prompt[-1]["role"] == "user" and "def f(x)" in prompt[-1]["content"]
    assert ds[0]["outputs"] and ds[0]["difficulty"] in ("easy", "easy_medium", "medium", "hard")
