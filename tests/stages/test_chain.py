"""`synthgen chain`: reverse construction hard -> medium -> easy, band checks, the disjoint baseline."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from synthgen.config.chain import CHAIN_BANDS
from synthgen.shards import StageDir
from synthgen.stages.chain_disjoint import histogram_distance, match_level


@pytest.fixture(scope="module")
def generated(tmp_path_factory, seeds_run):
    """A generate stage with enough hard problems to start chains from (scripted server)."""
    from synthgen.scripted.launch import start_scripted_server
    from synthgen.commands._common import run_guarded
    from synthgen.cli import app

    run_dir = tmp_path_factory.mktemp("chain-run")
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    with start_scripted_server(seed=3) as server:
        rc = run_guarded(app, ["generate", "--run-dir", str(run_dir), "--base-url", server.url, "--no-progress",
                               "--turns", "6", "--lineages-per-seed", "4", "--max-in-flight", "32"])
    assert rc == 0
    return run_dir


def _chain(cli, run_dir, url, *extra):
    return cli("chain", "--run-dir", run_dir, "--input-dir", run_dir / "generate", "--base-url", url,
               "--no-progress", *extra)


def test_chains_step_down_through_the_bands(cli, generated, tmp_path, scripted_server):
    run_dir = tmp_path / "run"
    shutil.copytree(generated, run_dir)
    server = scripted_server(seed=3)
    rc, _, err = _chain(cli, run_dir, server.url, "--disjoint")
    assert rc == 0, err
    links = StageDir(run_dir / "chain", "links").read()
    tried = StageDir(run_dir / "chain", "problems").read()
    starts = StageDir(run_dir, "generate").read().filter(
        pl.col("valid") & pl.col("pass_rate").is_between(*CHAIN_BANDS["hard"]))
    assert starts.height > 0 and links.height > 0
    assert set(tried["mode"]) == {"chain"} and set(tried["strategy"]) == {"chain-easier"}
    # The same problem text can come up in several evaluations (with their own pass rates).
    known = set(zip(tried["problem_id"], tried["pass_rate"])) | set(zip(starts["problem_id"], starts["pass_rate"]))
    for chain in links.partition_by("chain_id"):
        chain = chain.sort("position")
        assert chain["level"].to_list() == ["hard", "medium", "easy"]
        assert len(set(chain["env"])) == 1
        for level, problem_id, rate in chain.select("level", "problem_id", "pass_rate").iter_rows():
            lo, hi = CHAIN_BANDS[level]
            assert lo <= rate <= hi and (problem_id, rate) in known
    # A try whose pass rate misses its band is refused and the teacher tries again (at most 3 times);
    # the first try inside the band is taken, so only the last try of a step can be in its band.
    steps = tried.with_columns(
        step=pl.col("turn_id").str.replace(r":try\d+:t\d+$", ""),
        attempt=pl.col("turn_id").str.extract(r":try(\d+):t\d+$").cast(pl.Int32),
    )
    for step in steps.partition_by("step"):
        step = step.sort("attempt")
        level = step["step"][0].rsplit(":", 1)[1]
        lo, hi = CHAIN_BANDS[level]
        assert step.height <= 3 and step["attempt"].to_list() == list(range(1, step.height + 1))
        in_band = [r["valid"] and lo <= r["pass_rate"] <= hi for r in step.iter_rows(named=True)]
        assert not any(in_band[:-1])
        if in_band[-1] and level == "medium":
            assert step["problem_id"][-1] in set(steps["parent_id"])  # the easy step starts from it
    # The disjoint baseline: independent lineages, histogram distance reported.
    disjoint = StageDir(run_dir / "chain", "disjoint").read()
    linked = set(links["problem_id"])
    chain_lineages = set(starts.filter(pl.col("problem_id").is_in(list(linked)))["lineage_id"])
    assert not chain_lineages & set(disjoint["lineage_id"])
    assert disjoint["lineage_id"].n_unique() == disjoint.height
    # Re-running a finished chain shard sends nothing.
    before = server.stats()["requests"]
    assert _chain(cli, run_dir, server.url, "--disjoint")[0] == 0
    assert server.stats()["requests"] == before


def test_impossible_bands_accept_no_chain(cli, generated, tmp_path, scripted_server):
    run_dir = tmp_path / "run"
    shutil.copytree(generated, run_dir)
    (tmp_path / "cfg.yaml").write_text("chain:\n  bands: {hard: [0.05, 0.16], medium: [0.999, 1.0], easy: [0.81, 0.91]}\n")
    server = scripted_server(seed=3)
    rc, _, err = cli("--config", tmp_path / "cfg.yaml", "chain", "--run-dir", run_dir, "--input-dir",
                     run_dir / "generate", "--base-url", server.url, "--no-progress", "--tries", "2",
                     "--max-chains", "2")
    assert rc == 0, err
    tried = StageDir(run_dir / "chain", "problems").read()
    assert tried.height == 2 * 2  # two starts, two refused medium tries each, no easy step
    assert set(tried["turn"]) == {1}
    assert StageDir(run_dir / "chain", "links").read().height == 0


def test_bad_bands_are_one_line_errors(cli, tmp_path):
    (tmp_path / "cfg.yaml").write_text("chain:\n  bands: {hard: [0.3, 0.1], medium: [0.4, 0.6], easy: [0.8, 0.9]}\n")
    rc, _, err = cli("--config", tmp_path / "cfg.yaml", "chain", "--run-dir", tmp_path)
    assert rc == 2 and "band 'hard'" in err and err.count("\n") == 1
    rc, _, err = cli("chain", "--run-dir", tmp_path / "empty")
    assert rc == 2 and "no problems found" in err


def test_disjoint_matching_uses_each_lineage_once_and_matches_histograms():
    candidates = pl.DataFrame({
        "problem_id": [f"p{i}" for i in range(8)],
        "lineage_id": ["a", "a", "b", "c", "d", "e", "f", "g"],
        "pass_rate": [0.10, 0.11, 0.12, 0.50, 0.52, 0.85, 0.86, 0.90],
    })
    used = {"g"}
    picks = match_level([0.10, 0.12, 0.5], candidates, used)
    assert [p["problem_id"] for p in picks] == ["p0", "p2", "p3"]  # p1 shares lineage a with p0
    assert {"a", "b", "c", "g"} <= used
    assert histogram_distance([0.10, 0.12, 0.5], [p["pass_rate"] for p in picks], 10) == 0.0
    assert histogram_distance([0.1], [0.9], 10) == 1.0
    assert histogram_distance([0.1], [], 10) == 1.0
