"""`synthgen generate --keep-attempts`: every attempt of a valid problem kept whole beside the rows,
through the CLI against the scripted server and the real sandbox: the counts, the verdicts (each
kept attempt re-scores the same through synthgen.interop.scorer), resume after kill -9 or a kill
between an attempts part and its rows part, infrastructure failures, and the refusals."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import polars as pl
import pytest

from synthgen.errors import UserError
from synthgen.store.attempts import attempts_dir, read_attempts
from synthgen.store.layout import StageDir

ARGS = ["--attempts", "8", "--turns", "3", "--lineages-per-seed", "2", "--max-in-flight", "8", "--no-progress"]
# Row columns that must not change whatever --keep-attempts says.
COMPARED = ["turn_id", "problem_id", "valid", "reason", "pass_rate", "scored", "correct", "summary", "settings_hash"]
KEY = ["stage", "turn_id", "attempt"]


def _copy_seeds(seeds_run, tmp_path, name="run"):
    run_dir = tmp_path / name
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    return run_dir


def _generate(cli, run_dir, url, *extra, rc=0):
    got, _, err = cli("generate", "--run-dir", run_dir, "--base-url", url, *ARGS, *extra)
    assert got == rc, err
    return err


def _rows(run_dir) -> pl.DataFrame:
    return StageDir(run_dir, "generate").read().sort("turn_id")


def _attempts(run_dir) -> pl.DataFrame:
    table = read_attempts(run_dir)
    assert table is not None
    return pl.from_arrow(table).sort(KEY)


def _on_disk(run_dir) -> pl.DataFrame:
    """The attempt parts on disk, finished or not (no completeness check)."""
    folder = attempts_dir(run_dir, "generate")
    return folder.read().sort(KEY) if folder.exists() else pl.DataFrame(schema={"turn_id": pl.String})


def _assert_attempts_of(rows: pl.DataFrame, attempts: pl.DataFrame, keep: str) -> None:
    """`attempts` are exactly what `keep` keeps of the valid rows in `rows`, and say what the rows say."""
    valid = rows.filter(pl.col("valid"))
    assert attempts.select(KEY).is_unique().all()
    assert set(attempts["turn_id"]) <= set(valid["turn_id"])  # never an invalid turn's
    per_turn = attempts.group_by("turn_id").agg(n=pl.len(), solved=pl.col("reward").sum())
    per_turn = valid.select("turn_id", "scored", "correct").join(per_turn, "turn_id", "left").fill_null(0)
    count = "scored" if keep == "all" else "correct"
    assert (per_turn["n"] == per_turn[count]).all() and (per_turn["solved"] == per_turn["correct"]).all()
    assert attempts.height == valid[count].sum()
    joined = attempts.join(valid, "turn_id", suffix="_row")
    for column in ("problem_id", "env", "student_model", "measured_by", "settings_hash"):
        assert (joined[column] == joined[f"{column}_row"]).all(), column
    assert set(attempts["stage"]) <= {"generate"} and set(attempts["status"]) <= {"ok", "format"}
    assert ((attempts["reward"] == 1.0) <= (attempts["status"] == "ok")).all()  # a format failure never solves
    assert (attempts["attempt"] < joined["attempts"]).all() and (attempts["completion_tokens"] >= 0).all()
    if keep == "solved":
        assert (attempts["reward"] == 1.0).all()


def _rescore(rows: pl.DataFrame, attempts: pl.DataFrame) -> list[float | None]:
    """Each attempt scored again through the interop scorer against its problem row's ground truth."""
    from synthgen.interop import records, scorer

    truth = {r["turn_id"]: records.ground_truth(r) for r in rows.filter(pl.col("valid")).iter_rows(named=True)}
    try:
        rewards = scorer.score(
            [truth[t] for t in attempts["turn_id"]],
            attempts["content"].to_list(),
            (attempts["finish_reason"] == "length").to_list(),
        )
    finally:
        scorer.shared().close()
    return [r.value for r in rewards]


def test_all_keeps_every_scored_attempt_and_changes_nothing_else(cli, seeds_run, tmp_path, scripted_server):
    # A server of its own for each run: the scripted server draws its faults (here truncations) per
    # occurrence of a request, so a second run on one server would be cut elsewhere.
    plain = _copy_seeds(seeds_run, tmp_path, "plain")
    _generate(cli, plain, scripted_server(truncation_rate=0.1).url)
    # The default keeps nothing: no folder, and nothing for a reader.
    assert not attempts_dir(plain, "generate").path.exists() and read_attempts(plain) is None
    kept = _copy_seeds(seeds_run, tmp_path, "kept")
    _generate(cli, kept, scripted_server(truncation_rate=0.1).url, "--keep-attempts", "all")
    rows = _rows(kept)
    assert rows.select(COMPARED).equals(_rows(plain).select(COMPARED))  # same rows, same settings hash
    attempts = _attempts(kept)
    _assert_attempts_of(rows, attempts, "all")
    assert attempts.height == rows.filter(pl.col("valid"))["scored"].sum() > 0
    assert set(attempts["status"]) == {"ok", "format"} and "length" in set(attempts["finish_reason"])
    assert attempts["reasoning"].null_count() < attempts.height  # the scripted server sends reasoning
    # Every kept attempt scores again as it scored when it was kept.
    assert _rescore(rows, attempts) == attempts["reward"].to_list()
    # Readers of the run do not trip on the attempts folder.
    rc, out, err = cli("stats", kept, "--json")
    assert rc == 0 and '"generate"' in out, err
    rc, _, err = cli("filter", "--run-dir", kept)
    assert rc == 0, err
    assert set(StageDir(kept, "filter").read()["turn_id"]) <= set(rows["turn_id"])


def test_solved_keeps_the_solved_attempts_and_each_rescores_1(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    run_dir = _copy_seeds(seeds_run, tmp_path)
    _generate(cli, run_dir, server.url, "--keep-attempts", "solved")
    rows, attempts = _rows(run_dir), _attempts(run_dir)
    _assert_attempts_of(rows, attempts, "solved")
    assert attempts.height == rows.filter(pl.col("valid"))["correct"].sum() > 0
    assert _rescore(rows, attempts) == [1.0] * attempts.height


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_keeps_the_attempts_of_an_uninterrupted_run(
    cli, seeds_run, tmp_path, scripted_server
):
    server = scripted_server(latency="fixed", latency_s=0.01)
    reference = _copy_seeds(seeds_run, tmp_path, "ref")
    _generate(cli, reference, server.url, "--keep-attempts", "all")
    run_dir = _copy_seeds(seeds_run, tmp_path, "killed")
    cmd = [sys.executable, "-m", "synthgen", "generate", "--run-dir", str(run_dir), "--base-url", server.url, *ARGS]
    cmd += ["--keep-attempts", "all", "--max-buffer-rows", "3"]  # many parts: kills land between them
    rng = random.Random(4321)
    rows_dir = StageDir(run_dir, "generate")
    kills = 0
    for _ in range(4):
        # Killed at a random moment once the run has written something more (whatever the machine's
        # speed): between parts, between an attempts part and its rows part, inside a write.
        before = len(rows_dir.parts())
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and len(rows_dir.parts()) <= before and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        if StageDir(run_dir, "generate").exists():  # what a kill leaves: attempts only of rows on disk
            on_disk = _on_disk(run_dir)
            assert set(on_disk["turn_id"]) <= set(_rows(run_dir)["turn_id"]) | _orphans(run_dir)
    assert kills and rows_dir.exists() and not rows_dir.done_shards(), "no kill landed mid-run"
    final = subprocess.run(cmd, capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    assert _rows(run_dir).select(COMPARED).equals(_rows(reference).select(COMPARED))
    assert _attempts(run_dir).equals(_attempts(reference))  # no attempt twice, none lost


def _orphans(run_dir) -> set[str]:
    """Turn ids of attempt parts whose rows part a kill stopped (the next run deletes them)."""
    rows = {p.name for p in StageDir(run_dir, "generate").parts()}
    lonely = [p for p in attempts_dir(run_dir, "generate").parts() if p.name not in rows]
    return {t for p in lonely for t in pl.read_parquet(p, columns=["turn_id"])["turn_id"]}


def test_a_kill_between_an_attempts_part_and_its_rows_part_is_repaired(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    reference = _copy_seeds(seeds_run, tmp_path, "ref")
    _generate(cli, reference, server.url, "--keep-attempts", "all", "--max-buffer-rows", "5")
    expected = _attempts(reference)
    # What a kill -9 right after an attempts part and before its rows part leaves: the attempts of
    # rows that are not on disk, and no markers.
    run_dir = tmp_path / "cut"
    shutil.copytree(reference, run_dir)
    rows_dir, folder = StageDir(run_dir, "generate"), attempts_dir(run_dir, "generate")
    shard = rows_dir.done_shards()[0]
    last = rows_dir.shard_parts(shard)[-1]
    assert pl.read_parquet(folder.path / last.name).height > 0  # the attempts of the rows about to go
    last.unlink()
    rows_dir.marker_path(shard).unlink()
    folder.marker_path(shard).unlink()
    with pytest.raises(UserError, match="not finished"):
        read_attempts(run_dir)
    _generate(cli, run_dir, server.url, "--keep-attempts", "all", "--max-buffer-rows", "5")
    assert _rows(run_dir).select(COMPARED).equals(_rows(reference).select(COMPARED))
    assert _attempts(run_dir).equals(expected)


@pytest.mark.slow
def test_turns_that_fail_on_infrastructure_keep_no_attempts_and_reruns_converge(
    cli, seeds_run, tmp_path, scripted_server
):
    reference = _copy_seeds(seeds_run, tmp_path, "ref")
    _generate(cli, reference, scripted_server().url, "--keep-attempts", "all")
    # 30% of requests fail and the client does not retry: every run leaves some turns unfinished.
    server = scripted_server(error_rate=0.3)
    cfg = tmp_path / "no-retry.yaml"
    cfg.write_text("generate:\n  llm: {max_attempts: 1}\n")
    run_dir = _copy_seeds(seeds_run, tmp_path)
    failed = 0
    for _ in range(15):
        rc, _, err = cli("--config", cfg, "generate", "--run-dir", run_dir, "--base-url", server.url, *ARGS,
                         "--keep-attempts", "all")  # fmt: skip
        if rc == 0:
            break
        assert rc == 3 and "failed on infrastructure" in err, err
        failed += 1
        with pytest.raises(UserError, match="not finished"):
            read_attempts(run_dir)
        if StageDir(run_dir, "generate").exists():  # attempts only of the finished turns' valid rows
            _assert_attempts_of(_rows(run_dir), _on_disk(run_dir), "all")
    assert rc == 0 and failed > 0, "re-runs did not converge, or nothing failed"
    assert _attempts(run_dir).equals(_attempts(reference))


def test_resuming_with_another_keep_attempts_is_refused_and_force_rebuilds(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    run_dir = _copy_seeds(seeds_run, tmp_path)
    _generate(cli, run_dir, server.url, "--keep-attempts", "all", "--max-buffer-rows", "7")
    rows_dir, folder = StageDir(run_dir, "generate"), attempts_dir(run_dir, "generate")
    shard = rows_dir.done_shards()[0]
    # An unfinished shard (markers gone) begun with `all` resumes with `all` only.
    for marker in (rows_dir.marker_path(shard), folder.marker_path(shard)):
        marker.unlink()
    for other in ("none", "solved"):
        err = _generate(cli, run_dir, server.url, "--keep-attempts", other, rc=2)
        assert "was started with --keep-attempts all" in err and len(err.strip().splitlines()) == 1, err
    # --force starts it over, its attempts too.
    _generate(cli, run_dir, server.url, "--keep-attempts", "solved", "--force")
    rows = _rows(run_dir)
    _assert_attempts_of(rows, _attempts(run_dir), "solved")
    # A finished shard is skipped whatever --keep-attempts says now (not in the settings hash): it says so.
    err = _generate(cli, run_dir, server.url, "--keep-attempts", "all")
    assert "already finished" in err and "finished with --keep-attempts solved" in err, err
    assert _attempts(run_dir).height == rows.filter(pl.col("valid"))["correct"].sum()
    # --force without attempts clears the shard's attempts: the run keeps none.
    _generate(cli, run_dir, server.url, "--force")
    assert read_attempts(run_dir) is None and not folder.parts() and not folder.done_shards()
    # An unfinished shard begun without attempts cannot take them up half way.
    rows_dir.marker_path(shard).unlink()
    err = _generate(cli, run_dir, server.url, "--keep-attempts", "all", rc=2)
    assert "was started without --keep-attempts all" in err and len(err.strip().splitlines()) == 1, err
    _generate(cli, run_dir, server.url)  # finished as it was begun
    assert read_attempts(run_dir) is None


def test_read_attempts_reads_finished_stages_only(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    run_dir = _copy_seeds(seeds_run, tmp_path)
    _generate(cli, run_dir, server.url, "--keep-attempts", "solved", "--num-shards", "2", "--shard", "0")
    # Shard 1 of 2 not run yet: neither the rows nor their attempts are finished.
    with pytest.raises(UserError, match="not finished"):
        read_attempts(run_dir)
    # Shard 1 run without attempts: the rows are finished, their attempts are not there.
    _generate(cli, run_dir, server.url, "--num-shards", "2", "--shard", "1")
    with pytest.raises(UserError, match="run without --keep-attempts"):
        read_attempts(run_dir)
    _generate(cli, run_dir, server.url, "--keep-attempts", "solved", "--num-shards", "2", "--shard", "1", "--force")
    _assert_attempts_of(_rows(run_dir), _attempts(run_dir), "solved")
    # Shards that kept attempts differently do not read as one set.
    _generate(cli, run_dir, server.url, "--keep-attempts", "all", "--num-shards", "2", "--shard", "1", "--force")
    with pytest.raises(UserError, match="kept attempts differently"):
        read_attempts(run_dir)


def test_keep_attempts_is_outside_the_settings_hash():
    """It changes what is kept beside the rows, not the rows: every run's hash stays what it was."""
    from synthgen.stages.calibrate.settings import CalibrateSettings
    from synthgen.stages.generate.settings import GenerateSettings

    for model, given in ((GenerateSettings, {}), (CalibrateSettings, {"input_dir": "x"})):
        default = model(**given)
        assert "keep_attempts" not in default.hashed_view() and default.keep_attempts == "none"
        for keep in ("solved", "all"):
            assert model(**given, keep_attempts=keep).settings_hash() == default.settings_hash()
