"""`synthgen chain`: from the kept problems in the start band (the chains scheme's hard band, whatever
scheme bin used), hard -> medium -> easy in reverse, with the chains scheme's bands, all three levels
written, infra failures retried, and the disjoint baseline."""

from __future__ import annotations

import json
import re
import shutil

import polars as pl
import pytest

from synthgen.envs.settings import ProgressionSettings
from synthgen.envs.summary import Summary
from synthgen.stages.chain.disjoint import histogram_distance, match_level
from synthgen.stages.chain.run import accepts, assemble, chain_bands, replay
from synthgen.store.bins import SCHEMES
from synthgen.store.layout import StageDir

# Columns that must match row for row between two runs of the same settings.
COMPARED = ["turn_id", "problem_id", "parent_id", "env", "turn", "valid", "reason", "pass_rate", "strategy", "summary"]


@pytest.fixture(scope="module")
def binned(tmp_path_factory, seeds_run):
    """generate -> filter -> bin (broad) on the scripted server: a run whose kept set holds chain starts."""
    from synthgen.cli.app import app, run_guarded
    from synthgen.demo.scripted.launch import start_scripted_server

    run_dir = tmp_path_factory.mktemp("chain-run")
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    with start_scripted_server(seed=3, mode="process") as server:
        rc = run_guarded(
            app,
            [
                "generate",
                "--run-dir",
                str(run_dir),
                "--base-url",
                server.url,
                "--no-progress",
                "--turns",
                "6",
                "--lineages-per-seed",
                "4",
                "--max-in-flight",
                "32",
            ],
        )
    assert rc == 0
    assert run_guarded(app, ["filter", "--run-dir", str(run_dir)]) == 0
    assert run_guarded(app, ["bin", "--run-dir", str(run_dir)]) == 0
    return run_dir


def _copy(binned, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(binned, run_dir, ignore=shutil.ignore_patterns("chain", "cache"))
    return run_dir


def _chain(cli, run_dir, url, *extra):
    return cli("chain", "--run-dir", run_dir, "--base-url", url, "--no-progress", *extra)


def test_chains_start_from_the_chains_hard_band_and_step_down_through_the_bands(cli, binned, tmp_path, scripted_server):
    run_dir = _copy(binned, tmp_path)
    server = scripted_server(seed=3)
    rc, _, err = _chain(cli, run_dir, server.url, "--disjoint")
    assert rc == 0, err
    chain = run_dir / "chain"
    links, problems, tries = (StageDir(chain, name).read() for name in ("links", "problems", "tries"))
    kept = StageDir(run_dir, "filter").read().filter(pl.col("valid"))
    low, high = SCHEMES["chains"]["hard"]
    hard = kept.filter(pl.col("pass_rate").is_between(low, high))
    assert links.height > 0 and links.height % 3 == 0
    # bin ran with the broad scheme (hard 0.10-0.26); the starts are still the chains' 0.05-0.16.
    assert SCHEMES["broad"]["hard"] != (low, high)
    starts = links.filter(pl.col("level") == "hard")
    assert all(low <= rate <= high for rate in starts["pass_rate"]), starts["pass_rate"].to_list()
    # The summary names the band and what lay outside it; the marker keeps the figures.
    outside = kept.height - hard.height
    assert f"start band {low:g}-{high:g}; {outside} of {kept.height} kept problems outside it" in err
    marker = StageDir(chain, "links").done_info("shard-00000-of-00001")
    assert marker["start_band"] == [low, high] and marker["outside_band"] == outside
    # All three levels of every chain are in problems/, each problem once, the hard start included.
    assert problems.height == links.height and problems["problem_id"].n_unique() == problems.height
    assert set(problems["problem_id"]) == set(links["problem_id"]) and set(problems["mode"]) == {"chain"}
    assert set(starts["problem_id"]) <= set(hard["problem_id"])
    bands = SCHEMES["chains"]
    by_id = {row["problem_id"]: row for row in problems.iter_rows(named=True)}
    for group in links.partition_by("chain_id"):
        group = group.sort("position")
        assert group["level"].to_list() == ["hard", "medium", "easy"] and group["env"].n_unique() == 1
        ids = group["problem_id"].to_list()
        assert len(set(ids)) == 3  # no step equals its parent (nor any level of its chain)
        for level, problem_id, rate in group.select("level", "problem_id", "pass_rate").iter_rows():
            assert by_id[problem_id]["pass_rate"] == rate
            if level != "hard":
                assert bands[level][0] <= rate <= bands[level][1]
        assert [by_id[i]["parent_id"] for i in ids[1:]] == ids[:2]
    # Every try is kept, with what the teacher was shown: the eased problem's results and the band.
    assert set(tries["strategy"]) <= {"chain-medium", "chain-easy"} and tries["summary"].null_count() == 0
    progression = ProgressionSettings()
    for row in tries.filter(pl.col("turn") == 1).iter_rows(named=True):
        start = hard.filter(pl.col("problem_id") == row["parent_id"]).row(0, named=True)
        assert row["summary"] == Summary.from_row(start, progression).render()
    # A try is refused unless it lands in its band as a new problem; the first accepted try ends the step.
    steps = tries.with_columns(
        step=pl.col("turn_id").str.replace(r":try\d+:t\d+$", ""),
        attempt=pl.col("turn_id").str.extract(r":try(\d+):t\d+$").cast(pl.Int32),
    )
    for step in steps.partition_by("step"):
        step = step.sort("attempt")
        level = step["step"][0].rsplit(":", 1)[1]
        assert step.height <= 3 and step["attempt"].to_list() == list(range(1, step.height + 1))
        lo, hi = bands[level]
        landed = [
            r["valid"] and lo <= r["pass_rate"] <= hi and r["problem_id"] != r["parent_id"]
            for r in step.iter_rows(named=True)
        ]
        assert not any(landed[:-1])
    # The disjoint baseline: explained, from lineages no chain uses.
    assert "no relation between levels" in err and "of" in err and "0 = the same mix" in err
    disjoint = StageDir(chain, "disjoint").read()
    chain_lineages = set(hard.filter(pl.col("problem_id").is_in(starts["problem_id"].to_list()))["lineage_id"])
    assert not chain_lineages & set(disjoint["lineage_id"])
    assert disjoint["lineage_id"].n_unique() == disjoint.height
    report = json.loads((chain / "disjoint.json").read_text())
    assert set(report) == {"hard", "medium", "easy"} and report["easy"]["chained"] == links.height // 3
    # Re-running a finished chain shard sends nothing.
    before = server.stats()["requests"]
    rc, _, err = _chain(cli, run_dir, server.url, "--disjoint")
    assert rc == 0 and "already finished" in err and server.stats()["requests"] == before


def test_infra_failures_leave_chains_unfinished_and_reruns_end_equal(cli, binned, tmp_path, scripted_server):
    reference_dir = _copy(binned, tmp_path / "reference")
    assert _chain(cli, reference_dir, scripted_server(seed=3).url)[0] == 0
    reference = StageDir(reference_dir / "chain", "tries").read().sort("turn_id")
    run_dir = _copy(binned, tmp_path / "flaky")
    cfg = tmp_path / "no-retry.yaml"
    cfg.write_text("chain:\n  llm: {max_attempts: 1}\n")
    rc, _, err = cli(
        "--config",
        cfg,
        "chain",
        "--run-dir",
        run_dir,
        "--base-url",
        scripted_server(seed=3, error_rate=1.0).url,
        "--no-progress",
    )
    assert rc == 3 and re.search(
        r"\d+ turns? failed on infrastructure \(http_500 x\d+: scripted internal error\)", err
    ), err
    for name in ("tries", "problems", "links"):
        assert not StageDir(run_dir / "chain", name).done_shards(), name
    flaky = scripted_server(seed=3, error_rate=0.3)  # a retried request draws a fresh fault
    for _ in range(15):
        rc, _, err = cli("--config", cfg, "chain", "--run-dir", run_dir, "--base-url", flaky.url, "--no-progress")
        if rc == 0:
            break
        assert rc == 3 and not StageDir(run_dir / "chain", "links").done_shards(), err
    assert rc == 0, err
    for name in ("tries", "problems", "links"):
        got = StageDir(run_dir / "chain", name).read()
        want = StageDir(reference_dir / "chain", name).read()
        key = "link_id" if name == "links" else "turn_id"
        columns = [c for c in COMPARED if c in got.columns] if name != "links" else got.columns
        assert got.sort(key).select(columns).equals(want.sort(key).select(columns)), name
    assert StageDir(run_dir / "chain", "tries").read().height == reference.height


def test_missing_filter_stage_is_a_one_line_error_and_an_empty_start_band_makes_no_chains(
    cli, binned, tmp_path, scripted_server
):
    rc, _, err = cli("chain", "--run-dir", tmp_path / "empty")
    assert rc == 2 and "no problems found" in err and "synthgen filter" in err and err.count("\n") == 1
    run_dir = _copy(binned, tmp_path)
    shutil.rmtree(run_dir / "bin")  # chain reads the kept set, not bin's folders
    rc, _, err = _chain(cli, run_dir, scripted_server(seed=3).url, "--start-band", "0.98:1")
    assert rc == 0, err
    links = StageDir(run_dir / "chain", "links")
    assert links.done_shards() and links.read().height == 0
    kept = StageDir(run_dir, "filter").read().filter(pl.col("valid")).height
    assert f"start band 0.98-1; {kept} of {kept} kept problems outside it: {kept} below, 0 above" in err
    for bad in ("0.2:0.1", "0.05", "a:b"):
        rc, _, err = _chain(cli, run_dir, scripted_server(seed=3).url, "--start-band", bad)
        assert rc == 2 and "start" in err and err.count("\n") == 1, err


def _row(problem_id, level=None, pass_rate=0.5, valid=True):
    return {
        "problem_id": problem_id,
        "pass_rate": pass_rate,
        "valid": valid,
        "env": "deduction",
        "turn_id": f"t-{problem_id}-{level}",
        "mode": "chain",
    }


def test_acceptance_refuses_a_step_equal_to_its_chain_and_chains_never_share_a_problem():
    bands = chain_bands()
    assert (bands["medium"].low, bands["medium"].high) == SCHEMES["chains"]["medium"]
    assert not accepts(_row("p0"), {"p0"}, bands["medium"])  # the parent returned unchanged
    assert not accepts(_row("p1", pass_rate=0.3), {"p0"}, bands["medium"])
    assert not accepts(_row("p1", valid=False), {"p0"}, bands["medium"])
    assert accepts(_row("p1"), {"p0"}, bands["medium"])
    # A step is given up after `tries` refused tries; fewer means it is not finished (a failure stopped it).
    assert replay("h", {"medium": [_row("h"), _row("x", pass_rate=0.9)]}, 3, bands)[0] is False
    assert replay("h", {"medium": [_row("h"), _row("x", pass_rate=0.9), _row("h")]}, 3, bands)[0] is True
    finished, levels = replay(
        "h", {"medium": [_row("m")], "easy": [_row("m", pass_rate=0.85), _row("e", pass_rate=0.85)]}, 3, bands
    )
    assert finished and [r["problem_id"] for r in levels] == ["m", "e"]
    starts = [
        {**_row("a", "hard", 0.1), "seed_id": "s", "lineage_id": "la"},
        {**_row("b", "hard", 0.1), "seed_id": "s", "lineage_id": "lb"},
    ]
    tried = {
        "chain:a": {"medium": [_row("m")], "easy": [_row("e", pass_rate=0.85)]},
        "chain:b": {"medium": [_row("m")], "easy": [_row("f", pass_rate=0.85)]},
    }
    problems, links, dropped = assemble(starts, tried, 3, bands)
    assert [p["problem_id"] for p in problems] == ["a", "m", "e"] and dropped == 1  # b shares m with a
    assert [link["level"] for link in links] == ["hard", "medium", "easy"]


def test_a_stored_problem_summary_shows_its_examples():
    row = {
        "pass_rate": 0.125,
        "attempts": 32,
        "scored": 32,
        "correct": 4,
        "format_failures": 1,
        "infra_failures": 0,
        "solved_examples": ["f(1)"],
        "failed_examples": ["f(2)", "f(3)"],
    }
    summary = Summary.from_row(row, ProgressionSettings())
    assert isinstance(summary, Summary) and summary.pass_rate == 0.125
    assert (summary.solved, summary.failed) == (["f(1)"], ["f(2)", "f(3)"])
    assert "f(1)" in summary.render() and "f(3)" in summary.render()


def test_disjoint_matching_uses_each_lineage_once_and_matches_histograms():
    candidates = pl.DataFrame(
        {
            "problem_id": [f"p{i}" for i in range(8)],
            "lineage_id": ["a", "a", "b", "c", "d", "e", "f", "g"],
            "pass_rate": [0.10, 0.11, 0.12, 0.50, 0.52, 0.85, 0.86, 0.90],
        }
    )
    used = {"g"}
    picks = match_level([0.10, 0.12, 0.5], candidates, used)
    assert [p["problem_id"] for p in picks] == ["p0", "p2", "p3"]  # p1 shares lineage a with p0
    assert {"a", "b", "c", "g"} <= used
    assert histogram_distance([0.10, 0.12, 0.5], [p["pass_rate"] for p in picks], 10) == 0.0
    assert histogram_distance([0.1], [0.9], 10) == 1.0
    assert histogram_distance([0.1], [], 10) == 1.0
