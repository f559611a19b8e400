"""`synthgen demo`: the README's main job runs every stage end to end on the scripted server."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq

from synthgen.shards import StageDir


def test_demo_runs_every_stage_and_a_rerun_skips_them(cli, tmp_path):
    args = ("demo", "--run-dir", tmp_path, "--seeds", "8", "--turns", "3", "--attempts", "8", "--no-progress")
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
    rc, _, err = cli(*args)
    assert rc == 0 and "already finished" in err
