"""`synthgen generate` end to end over real HTTP against the scripted server and the real sandbox."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import polars as pl
import pytest

from synthgen.envs import reasons
from synthgen.shards import StageDir

# Columns that must match row for row between two runs of the same settings.
COMPARED = ["turn_id", "problem_id", "parent_id", "env", "turn", "code", "inputs", "outputs", "message", "valid",
            "reason", "pass_rate", "scored", "correct", "strategy", "summary"]


def _generate(cli, run_dir, url, *extra):
    rc, out, err = cli("generate", "--run-dir", run_dir, "--base-url", url, "--no-progress", "--attempts", "8",
                       "--turns", "3", "--lineages-per-seed", "4", "--max-in-flight", "16", *extra)
    assert rc == 0, err
    return StageDir(run_dir, "generate").read().sort("turn_id")


def _copy_seeds(seeds_run, tmp_path, name="run"):
    run_dir = tmp_path / name
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    return run_dir


def _last_valid_before(lineage: pl.DataFrame, turn: int):
    earlier = lineage.filter((pl.col("turn") < turn) & pl.col("valid")).sort("turn")
    return earlier.row(-1, named=True) if earlier.height else None


def test_all_environments_progression_and_reasons(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    rows = _generate(cli, _copy_seeds(seeds_run, tmp_path), server.url)
    assert set(rows["env"]) == {"induction", "abduction", "deduction", "fuzzing"}
    assert rows.height == 8 * 4 * 3 and rows["turn_id"].n_unique() == rows.height
    assert rows.group_by("lineage_id").len()["len"].to_list() == [3] * 32
    valid = rows.filter(pl.col("valid"))
    assert valid.height > 0 and (valid["reason"] == reasons.OK).all()
    assert valid["outputs"].list.len().min() >= 1 and valid["problem_id"].null_count() == 0
    assert ((valid["pass_rate"] - valid["correct"] / valid["scored"]).abs() < 1e-9).all()
    invalid = rows.filter(~pl.col("valid"))
    assert set(invalid["reason"]) <= set(reasons.GENERATION)
    assert invalid["reason_detail"].null_count() == 0
    # p = 0 -> easier; 0 < p < 0.35 -> somewhat easier; p > 0.65 -> harder; else similar. The next turn
    # starts from the last valid problem.
    checked = 0
    for lineage in rows.partition_by("lineage_id"):
        for row in lineage.filter(pl.col("turn") > 1).iter_rows(named=True):
            last = _last_valid_before(lineage, row["turn"])
            if last is None:
                assert row["strategy"] == "first" and row["parent_id"] is None
                continue
            assert row["parent_id"] == last["problem_id"]
            if last["pass_rate"] == 0:
                assert row["strategy"] == "easier"
                checked += 1
            elif last["pass_rate"] is not None and last["pass_rate"] > 0.65:
                assert row["strategy"] == "harder"
                checked += 1
            elif last["pass_rate"] is not None and last["pass_rate"] < 0.35:
                assert row["strategy"] == "somewhat-easier"
            else:
                assert row["strategy"] == "similar"
    assert checked > 0
    assert (rows["settings_hash"].n_unique(), rows["teacher_model"][0]) == (1, "openai/gpt-oss-120b")
    stats = list(StageDir(tmp_path / "run", "generate").path.glob("stats-*.json"))
    assert stats, "a stats JSON is written beside the rows"


def test_single_turn_baseline(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    rows = _generate(cli, _copy_seeds(seeds_run, tmp_path), server.url, "--single-turn", "3", "--max-seeds", "4")
    assert rows.height == 4 * 4 * 3
    assert set(rows["mode"]) == {"single"} and set(rows["turn"]) == {1}
    assert set(rows["strategy"]) == {"first"}


def test_shards_partition_the_work(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    whole = _generate(cli, _copy_seeds(seeds_run, tmp_path, "whole"), server.url, "--max-seeds", "6")
    split_dir = _copy_seeds(seeds_run, tmp_path, "split")
    for i in range(3):
        _generate(cli, split_dir, server.url, "--max-seeds", "6", "--shard", str(i), "--num-shards", "3")
    split = StageDir(split_dir, "generate").read().sort("turn_id")
    assert len(StageDir(split_dir, "generate").done_shards()) == 3
    assert split.select(COMPARED).equals(whole.select(COMPARED))


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_matches_uninterrupted(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server(latency="fixed", latency_s=0.01)
    args = ["--base-url", server.url, "--no-progress", "--attempts", "8", "--turns", "3", "--lineages-per-seed", "4",
            "--max-in-flight", "8"]
    reference = _generate(cli, _copy_seeds(seeds_run, tmp_path, "ref"), server.url)
    full_requests = server.stats()["requests"]
    run_dir = _copy_seeds(seeds_run, tmp_path, "killed")
    cmd = [sys.executable, "-m", "synthgen", "generate", "--run-dir", str(run_dir), *args]
    rng = random.Random(1234)
    before = server.stats()["requests"]
    for _ in range(3):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(1.0, 4.0))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    final = subprocess.run(cmd, capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    resumed = StageDir(run_dir, "generate").read().sort("turn_id")
    assert resumed["turn_id"].n_unique() == resumed.height  # no duplicates
    assert resumed.select(COMPARED).equals(reference.select(COMPARED))
    spent = server.stats()["requests"] - before
    # Only requests in flight at a kill can be paid twice; everything finished is replayed from the cache.
    assert spent <= full_requests + 3 * 8
    again = server.stats()["requests"]
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    assert server.stats()["requests"] == again  # a finished shard is skipped


@pytest.mark.slow
def test_injected_faults_leave_every_turn_accounted_for(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server(error_rate=0.15, rate_limit_rate=0.05, truncation_rate=0.05, garbage_rate=0.05,
                             hang_rate=0.02, hang_s=30)
    run_dir = _copy_seeds(seeds_run, tmp_path)
    rc, _, err = cli("--config", _fast_retry_config(tmp_path), "generate", "--run-dir", run_dir, "--base-url",
                     server.url, "--no-progress", "--attempts", "8", "--turns", "3", "--lineages-per-seed", "2",
                     "--max-seeds", "6")
    assert rc == 0, err
    rows = StageDir(run_dir, "generate").read()
    assert rows.height == 6 * 2 * 3  # every seed-turn accounted for
    assert set(rows["reason"]) <= set(reasons.ALL)
    valid = rows.filter(pl.col("valid") & (pl.col("scored") > 0))
    # infra failures are never scored: the pass rate counts scored attempts only.
    assert ((valid["scored"] + valid["infra_failures"]) <= valid["attempts"]).all()
    assert ((valid["pass_rate"] - valid["correct"] / valid["scored"]).abs() < 1e-9).all()
    # The faults really happened and were carried as infra, never as wrong answers.
    infra_turns = rows.filter(pl.col("reason") == reasons.INFRA)
    assert rows["infra_failures"].sum() + infra_turns.height > 0
    assert infra_turns["pass_rate"].null_count() == infra_turns.height
    assert rows["format_failures"].sum() > 0  # truncated and garbage answers are formatting failures


def _fast_retry_config(tmp_path):
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(
        "generate:\n  teacher: {timeout_s: 3}\n  student: {timeout_s: 3}\n  llm: {max_attempts: 2, backoff_initial_s: 0.05, backoff_max_s: 0.2}\n"
    )
    return cfg


@pytest.mark.slow
def test_sigterm_flushes_finished_rows_and_a_rerun_completes(seeds_run, tmp_path, scripted_server):
    server = scripted_server(latency="fixed", latency_s=0.05)
    run_dir = _copy_seeds(seeds_run, tmp_path)
    cmd = [sys.executable, "-m", "synthgen", "generate", "--run-dir", str(run_dir), "--base-url", server.url,
           "--no-progress", "--attempts", "8", "--turns", "3", "--lineages-per-seed", "4", "--max-in-flight", "4"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stage = StageDir(run_dir, "generate")
    deadline = time.monotonic() + 60
    while server.stats()["requests"] < 20 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "re-run to continue" in err and "Traceback" not in err
    flushed = stage.read()
    assert 0 < flushed.height < 8 * 4 * 3 and not stage.done_shards()
    final = subprocess.run(cmd, capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    rows = stage.read()
    assert rows.height == 8 * 4 * 3 and rows["turn_id"].n_unique() == rows.height
    assert set(flushed["turn_id"]) <= set(rows["turn_id"])
    stats = json.loads(next(stage.path.glob("stats-*.json")).read_text())
    assert stats["turns"] == rows.height and stats["valid"] == rows["valid"].sum()  # the whole shard
