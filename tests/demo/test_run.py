"""`synthgen demo`: the README's main job runs every stage end to end on the scripted server, and its
chains train under a chain curriculum with all three levels."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq

from synthgen.store.layout import StageDir
from synthgen.train.curriculum import get_schedule
from synthgen.train.data import bin_counts, load_problem_rows
from synthgen.train.run import check_bins


def test_demo_runs_every_stage_its_chains_train_on_three_levels_and_a_rerun_skips(cli, tmp_path):
    # Six turns, as the demo_run fixture (tests/conftest.py says why).
    args = ("demo", "--run-dir", tmp_path, "--seeds", "24", "--turns", "6", "--attempts", "8", "--no-progress")
    rc, _, err = cli(*args)
    assert rc == 0, err
    problems = StageDir(tmp_path, "generate")
    rows = pl.read_parquet(problems.parts())
    assert set(rows["env"]) == {"induction", "abduction", "deduction", "fuzzing"}
    assert pq.read_table(problems.parts()[0]).num_rows > 0
    for stage in ("seeds", "filter"):
        assert StageDir(tmp_path, stage).parts(), stage
    assert (tmp_path / "bin").is_dir() and (tmp_path / "chain" / "links").is_dir()
    assert "outputs in" in err
    # `train --curriculum hard` on the chains: the data loading sees every level, in equal numbers.
    chained = load_problem_rows([tmp_path / "chain"])
    counts = bin_counts(chained)
    assert set(counts) == {"easy", "medium", "hard"} and len(set(counts.values())) == 1, counts
    kept = StageDir(tmp_path, "filter").read()
    hard_starts = set(kept.filter(pl.col("pass_rate").is_between(0.05, 0.16))["problem_id"])
    assert {r["problem_id"] for r in chained if r["difficulty"] == "hard"} <= hard_starts
    assert check_bins(get_schedule("hard"), counts, "error") == []
    rc, _, err = cli(*args)
    assert rc == 0 and "already finished" in err
