"""`synthgen generate` end to end over real HTTP against the scripted server and the real sandbox."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time

import polars as pl
import pytest

from synthgen.envs import reasons
from synthgen.store.layout import StageDir

# Columns that must match row for row between two runs of the same settings.
COMPARED = [
    "turn_id",
    "problem_id",
    "parent_id",
    "env",
    "turn",
    "code",
    "inputs",
    "outputs",
    "message",
    "valid",
    "reason",
    "pass_rate",
    "scored",
    "correct",
    "strategy",
    "summary",
]


ARGS = ["--attempts", "8", "--turns", "3", "--lineages-per-seed", "4", "--max-in-flight", "16"]
TOTAL = 8 * 4 * 3  # seeds x lineages x turns


def _generate(cli, run_dir, url, *extra, progress=False):
    rc, out, err = cli(
        "generate", "--run-dir", run_dir, "--base-url", url, *ARGS, *extra, *([] if progress else ["--no-progress"])
    )
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
    assert rows["settings_hash"].n_unique() == 1


def test_progress_stats_file_and_stats_command_count_turns_and_tokens_alike(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    run_dir = _copy_seeds(seeds_run, tmp_path)
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", server.url, *ARGS, "--max-seeds", "2")
    assert rc == 0, err
    rows = StageDir(run_dir, "generate").read()
    turns = 2 * 4 * 3
    # The live line counts teacher turns (and student attempts), not lineages.
    assert "generate turns" in err and f"{turns}/{turns}" in err and "lineages 8/8" in err
    assert f"attempts {rows.filter(pl.col('valid'))['attempts'].sum()}" in err
    sums = {
        c: int(rows[c].sum())
        for c in ("teacher_tokens_in", "teacher_tokens_out", "student_tokens_in", "student_tokens_out")
    }
    stats = json.loads(next(StageDir(run_dir, "generate").path.glob("stats-*.json")).read_text())
    assert stats["turns"] == turns and stats["finished"] is True
    assert {c: stats["tokens"][c] for c in sums} == sums
    assert "once per request" in stats["tokens"]["counting"] and "once per request" in err
    assert f"tokens in {sums['teacher_tokens_in'] + sums['student_tokens_in']:,}" in err
    rc, out, _ = cli("stats", run_dir, "--json")
    tokens = json.loads(out)["tokens"]
    for role in ("teacher", "student"):
        assert (tokens[role]["in"], tokens[role]["out"]) == (sums[f"{role}_tokens_in"], sums[f"{role}_tokens_out"])
    assert "once per request" in tokens["counting"]


def test_an_invalid_turn_is_fed_back_to_the_next_teacher_prompt(cli, seeds_run, tmp_path, scripted_server, monkeypatch):
    from synthgen.envs.base import Environment
    from synthgen.turns.turn import feedback_of

    original, seen = Environment.teacher_messages, []

    def teacher_messages(
        self, kind, *, seed_text=None, previous=None, summary=None, feedback=None, target=None, strategy=None
    ):
        seen.append(feedback)
        return original(self, kind, seed_text=seed_text, previous=previous, summary=summary)

    monkeypatch.setattr(Environment, "teacher_messages", teacher_messages)
    rows = _generate(cli, _copy_seeds(seeds_run, tmp_path), scripted_server().url)
    fed = rows.filter(~pl.col("valid") & (pl.col("turn") < 3)).iter_rows(named=True)
    expected = sorted(feedback_of(row) for row in fed)
    assert expected, "the scripted teacher makes some malformed turns"
    assert all(":" in f for f in expected)  # "<reason>: <detail>"
    assert sorted(f for f in seen if f is not None) == expected


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


def test_many_lineages_share_few_request_slots_longest_remaining_first_and_rows_do_not_change(
    cli, seeds_run, tmp_path, scripted_server, monkeypatch
):
    import synthgen.llm.client
    from synthgen.llm.client import base_seed

    sent, post = [], synthgen.llm.client.post_chat

    async def recording_post(client, body, timeout):  # inside a request slot: the order the server sees
        sent.append((body.get("seed"), body.get("n", 1)))
        return await post(client, body, timeout)

    monkeypatch.setattr(synthgen.llm.client, "post_chat", recording_post)
    runs = {}
    for active in (1, 6):
        server = scripted_server(latency_s=0.02)
        sent.clear()
        run_dir = _copy_seeds(seeds_run, tmp_path, f"active-{active}")
        extra = ["--max-seeds", "3", "--lineages-per-seed", "2", "--max-in-flight", "1"]
        rc, _, err = cli(
            "generate", "--run-dir", run_dir, "--base-url", server.url, *ARGS[:4], *extra,
            "--max-active", str(active), "--no-progress",
        )  # fmt: skip
        assert rc == 0, err
        assert server.stats()["peak_in_flight"] == 1  # the request bound holds
        rows = StageDir(run_dir, "generate").read().sort("turn_id")
        lineage_of = {base_seed(t): lid for t, lid in zip(rows["turn_id"], rows["lineage_id"])}
        runs[active] = ([(lineage_of[seed], n) for seed, n in sent], rows)
    # Wave 1: one lineage at a time holds the one slot, so the server sees each lineage in one block.
    order = [lineage for lineage, _ in runs[1][0]]
    assert len(set(order)) == 6 and order == sorted(order, key=order.index)
    # Six lineages under way on one slot: every one's first teacher request (the most turns ahead of
    # it) is served before any student request (n = M) of a lineage that got further.
    first = runs[6][0][:6]
    assert [n for _, n in first] == [1] * 6 and len({lineage for lineage, _ in first}) == 6
    assert runs[6][1].select(COMPARED).equals(runs[1][1].select(COMPARED))  # the schedule changes no row


def test_the_plan_reads_seeds_lazily_and_matches_the_sorted_seed_order(tmp_path):
    """Seeds over two files with a repeated id: the shard's lineages (each with its text and its
    environment), the finished and the started ones, as the sorted, deduplicated seed list says."""
    import pyarrow as pa

    from synthgen.stages.generate.plan import plan_shard
    from synthgen.stages.generate.settings import GenerateSettings
    from synthgen.store.files import file_metadata
    from synthgen.store.records import PROBLEMS, SEEDS, table_from_rows

    texts = [f"def f{i}(x):\n    return x + {i}\n" for i in range(9)]
    seed_rows = [
        dict(seed_id=f"id{(i * 7) % 9}", source="dir", origin="o", repo=None, path="p", start_line=1, end_line=2)
        | dict(num_lines=2, text=texts[(i * 7) % 9])
        for i in range(9)
    ]
    seeds = StageDir(tmp_path, "seeds")
    for k, part in enumerate((seed_rows[:5], seed_rows[5:] + seed_rows[:1])):  # id0 twice
        seeds.write_part("shard-00000-of-00001", k, table_from_rows(part, SEEDS), file_metadata("seeds", "h"))
    settings = GenerateSettings(
        run_dir=tmp_path, shard=1, num_shards=2, lineages_per_seed=2, max_seeds=8, envs=["induction", "deduction"]
    )
    sorted_ids = sorted({r["seed_id"] for r in seed_rows})[:8]
    expected = {
        f"{sid}:{settings.envs[(i + j) % 2]}:{j}": texts[int(sid[2:])]
        for i, sid in enumerate(sorted_ids)
        if i % 2 == 1
        for j in range(2)
    }
    fresh = plan_shard(seeds.parts(), [], settings, 3)
    got = {lin.lineage_id: lin.seed_text for lin in fresh.items}
    assert got == expected and fresh.units_total == len(expected) and fresh.units_done == 0
    # One lineage finished (3 rows), one started (1 row): the first is skipped, the second redone.
    finished, started = sorted(expected)[:2]
    rows = [
        dict.fromkeys(PROBLEMS.names)
        | dict(turn_id=f"{lid}:t{t}", lineage_id=lid, seed_id="s", env="induction", mode="multi", turn=t)
        | dict(valid=False, reason="format_error", attempts=8, scored=0, correct=0, format_failures=0)
        | dict(infra_failures=0, strategy="first", settings_hash="g", teacher_model="m", student_model="m")
        | dict.fromkeys(("teacher_tokens_in", "teacher_tokens_out", "student_tokens_in", "student_tokens_out"), 0)
        for lid, turns in ((finished, 3), (started, 1))
        for t in range(1, turns + 1)
    ]
    table = pa.Table.from_pylist(rows, schema=PROBLEMS)
    done = StageDir(tmp_path, "generate")
    done.write_part("shard-00001-of-00002", 0, table, file_metadata("generate", "g"))
    resumed = plan_shard(seeds.parts(), done.parts(), settings, 3)
    left = {lin.lineage_id for lin in resumed.items}
    assert left == set(expected) - {finished} and resumed.units_done == 1
    assert resumed.resumed_keys == {f"{started}:t1"} and resumed.turns_todo == 3 * len(expected) - 4


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_matches_uninterrupted(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server(latency="fixed", latency_s=0.01)
    args = [
        "--base-url",
        server.url,
        "--no-progress",
        "--attempts",
        "8",
        "--turns",
        "3",
        "--lineages-per-seed",
        "4",
        "--max-in-flight",
        "8",
    ]
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
    server = scripted_server(
        error_rate=0.15, rate_limit_rate=0.05, truncation_rate=0.05, garbage_rate=0.05, hang_rate=0.02, hang_s=30
    )
    run_dir = _copy_seeds(seeds_run, tmp_path)
    for _ in range(10):  # turns that failed on infrastructure are retried by the next run
        rc, _, err = cli(
            "--config",
            _fast_retry_config(tmp_path),
            "generate",
            "--run-dir",
            run_dir,
            "--base-url",
            server.url,
            "--no-progress",
            "--attempts",
            "8",
            "--turns",
            "3",
            "--lineages-per-seed",
            "2",
            "--max-seeds",
            "6",
        )
        if rc != 3:
            break
    assert rc == 0, err
    rows = StageDir(run_dir, "generate").read()
    assert rows.height == 6 * 2 * 3  # every seed-turn accounted for
    assert set(rows["reason"]) <= set(reasons.ALL)
    valid = rows.filter(pl.col("valid") & (pl.col("scored") > 0))
    assert ((valid["pass_rate"] - valid["correct"] / valid["scored"]).abs() < 1e-9).all()
    # The faults really happened; infrastructure failures were retried, never kept as a result.
    usage = json.loads(next(StageDir(run_dir, "generate").path.glob("stats-*.json")).read_text())["llm_this_run"]
    assert usage["total"]["retries"] > 0
    assert (rows["reason"] != reasons.INFRA).all() and rows["infra_failures"].sum() == 0
    assert (valid["scored"] == valid["attempts"]).all()
    assert rows["format_failures"].sum() > 0  # truncated and garbage answers are formatting failures


def _fast_retry_config(tmp_path):
    cfg = tmp_path / "fast.yaml"
    cfg.write_text(
        "generate:\n  teacher: {timeout_s: 3}\n  student: {timeout_s: 3}\n"
        "  llm: {max_attempts: 2, backoff_initial_s: 0.05, backoff_max_s: 0.2}\n"
    )
    return cfg


@pytest.mark.slow
def test_sigterm_flushes_finished_rows_and_a_rerun_completes(seeds_run, tmp_path, scripted_server):
    server = scripted_server(latency="fixed", latency_s=0.05)
    run_dir = _copy_seeds(seeds_run, tmp_path)
    cmd = [
        sys.executable,
        "-m",
        "synthgen",
        "generate",
        "--run-dir",
        str(run_dir),
        "--base-url",
        server.url,
        "--no-progress",
        "--attempts",
        "8",
        "--turns",
        "3",
        "--lineages-per-seed",
        "4",
        "--max-in-flight",
        "4",
    ]
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


# -- infrastructure failures are never finished work ---------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def reference(seeds_run, tmp_path_factory):
    """The rows of an uninterrupted run on a healthy scripted server (seed 0)."""
    from synthgen.cli.app import app, run_guarded
    from synthgen.demo.scripted.launch import start_scripted_server

    run_dir = _copy_seeds(seeds_run, tmp_path_factory.mktemp("reference"))
    with start_scripted_server(seed=0, mode="process") as server:
        rc = run_guarded(app, ["generate", "--run-dir", str(run_dir), "--base-url", server.url, "--no-progress", *ARGS])
    assert rc == 0
    return StageDir(run_dir, "generate").read().sort("turn_id")


def _generate_rc(cli, tmp_path, run_dir, url, *extra):
    return cli(
        "--config",
        _fast_retry_config(tmp_path),
        "generate",
        "--run-dir",
        run_dir,
        "--base-url",
        url,
        "--no-progress",
        *ARGS,
        *extra,
    )


def _assert_unfinished(run_dir):
    stage = StageDir(run_dir, "generate")
    assert not stage.done_shards() and not list(stage.path.glob("*.done"))
    if stage.exists():
        assert (stage.read()["reason"] != reasons.INFRA).all()  # failed turns are never rows
    stats = json.loads(next(stage.path.glob("stats-*.json")).read_text())
    assert stats["finished"] is False and stats["infra_failures"]


def test_a_dead_url_marks_nothing_finished(cli, seeds_run, tmp_path):
    run_dir = _copy_seeds(seeds_run, tmp_path)
    rc, _, err = _generate_rc(cli, tmp_path, run_dir, f"http://127.0.0.1:{_free_port()}/v1")
    assert rc in (2, 3), err  # 2 once a preflight check refuses the URL before any work
    assert "Traceback" not in err and err.strip().count("\n") == 0
    assert not StageDir(run_dir, "generate").done_shards()
    if rc == 3:
        assert f"{8 * 4} turns failed on infrastructure" in err and "re-run to retry them" in err
        _assert_unfinished(run_dir)


def test_a_server_failing_every_request_is_exit_3_and_a_rerun_completes(
    cli, seeds_run, tmp_path, scripted_server, reference
):
    run_dir = _copy_seeds(seeds_run, tmp_path)
    rc, _, err = _generate_rc(cli, tmp_path, run_dir, scripted_server(error_rate=1.0).url)
    assert rc == 3, err
    # Every lineage stops at its first turn: one failed turn per lineage, none written.
    assert f"{8 * 4} turns failed on infrastructure (" in err and "500" in err
    _assert_unfinished(run_dir)
    assert not StageDir(run_dir, "generate").exists()
    rows = _generate(cli, run_dir, scripted_server().url)
    assert rows.select(COMPARED).equals(reference.select(COMPARED))
    assert StageDir(run_dir, "generate").done_shards()


@pytest.mark.slow
def test_reruns_after_failures_keep_every_good_row_and_end_equal_to_an_uninterrupted_run(
    cli, seeds_run, tmp_path, scripted_server, reference
):
    # 30% of requests fail and the client does not retry: every run leaves some lineages unfinished.
    # A retried request draws a fresh fault, so re-runs converge; answers never depend on the fault.
    server = scripted_server(error_rate=0.3)
    cfg = tmp_path / "no-retry.yaml"
    cfg.write_text("generate:\n  llm: {max_attempts: 1}\n")
    run_dir = _copy_seeds(seeds_run, tmp_path)
    kept: dict[str, dict] = {}
    failed_runs = 0
    for _ in range(15):
        rc, _, err = cli(
            "--config", cfg, "generate", "--run-dir", run_dir, "--base-url", server.url, "--no-progress", *ARGS
        )
        rows = StageDir(run_dir, "generate").read() if StageDir(run_dir, "generate").exists() else None
        if rows is not None:
            now = {r["turn_id"]: r for r in rows.select(COMPARED).iter_rows(named=True)}
            assert all(now[k] == v for k, v in kept.items())  # a re-run keeps every good row as it was
            kept = now
        if rc == 0:
            break
        assert rc == 3 and "failed on infrastructure" in err, err
        _assert_unfinished(run_dir)
        failed_runs += 1
    assert rc == 0 and failed_runs > 0, "re-runs did not converge, or nothing failed"
    final = StageDir(run_dir, "generate").read().sort("turn_id")
    assert final.select(COMPARED).equals(reference.select(COMPARED))


@pytest.mark.slow
def test_an_outage_mid_run_is_exit_3_then_a_rerun_completes(seeds_run, tmp_path, reference):
    from synthgen.demo.scripted.launch import start_scripted_server

    port = _free_port()
    server = start_scripted_server(seed=0, port=port, latency="fixed", latency_s=0.1, mode="process")
    run_dir = _copy_seeds(seeds_run, tmp_path)
    cmd = [
        sys.executable,
        "-m",
        "synthgen",
        "--config",
        str(_fast_retry_config(tmp_path)),
        "generate",
        "--run-dir",
        str(run_dir),
        "--base-url",
        server.url,
        "--no-progress",
        *ARGS[:-1],
        "4",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while server.stats()["requests"] < 12 and proc.poll() is None:
            time.sleep(0.05)
    finally:
        server.stop()  # the outage: the run needs far more requests than it got
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert "failed on infrastructure" in err and "Traceback" not in err
    _assert_unfinished(run_dir)
    with start_scripted_server(seed=0, port=port, mode="process"):  # the server is back on the same address
        final = subprocess.run(cmd, capture_output=True, text=True)
        assert final.returncode == 0, final.stderr
    rows = StageDir(run_dir, "generate").read().sort("turn_id")
    assert rows.select(COMPARED).equals(reference.select(COMPARED))
    assert StageDir(run_dir, "generate").done_shards()


class _MemoryCheatStudent:
    """The bank's teacher, and a student that always answers induction with an f that searches its
    sandbox memory for an earlier job's `def f(` (the teacher's validation run) and returns what
    that f returns. One request at a time: the bank parses with `ast`, which is not thread-safe."""

    def __init__(self):
        import threading

        from synthgen.demo.scripted.bank import BankResponder
        from tests.helpers.memory_probe import cheat_completion

        self.bank, self.cheat, self.lock = BankResponder(0), cheat_completion(), threading.Lock()

    def respond(self, messages, n, rng_seed, params):
        from synthgen.demo.scripted import cues
        from synthgen.demo.scripted.responder import ScriptedReply

        found = cues.read(cues.prompt_text(messages))
        if found.task == "solve" and found.env == "induction":
            return [ScriptedReply(self.cheat, "searching memory") for _ in range(n)]
        with self.lock:
            return self.bank.respond(messages, n, rng_seed, params)


@pytest.mark.slow
def test_a_student_reading_the_teachers_f_from_sandbox_memory_passes_nothing(cli, seeds_run, tmp_path, serve):
    server = serve(_MemoryCheatStudent())
    run_dir = _copy_seeds(seeds_run, tmp_path)
    rc, _, err = cli(
        "generate", "--run-dir", run_dir, "--base-url", server.url, "--envs", "induction", "--attempts", "4",
        "--turns", "1", "--lineages-per-seed", "2", "--sandbox-timeout-s", "20", "--no-progress",
    )  # fmt: skip
    assert rc == 0, err
    rows = StageDir(run_dir, "generate").read().filter(pl.col("valid"))
    assert rows.height >= 4 and (rows["env"] == "induction").all()  # validated teacher problems were there to read
    assert rows["scored"].min() > 0 and rows["correct"].sum() == 0 and (rows["pass_rate"] == 0).all()
