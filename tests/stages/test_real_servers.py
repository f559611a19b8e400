"""Servers that bend the OpenAI API, played by the scripted server's modes, through the CLI: one that
ignores n and reasoning_effort (transformers serve), one with a context length that answers 400 to
what exceeds it, one whose engine dies on a seed (vLLM's CPU build), one failing every request."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest

from synthgen.envs import reasons
from synthgen.shards import StageDir

COMPARED = ["turn_id", "problem_id", "env", "turn", "code", "valid", "reason", "pass_rate", "correct", "summary"]
ARGS = ["--max-seeds", "3", "--lineages-per-seed", "1", "--turns", "2", "--attempts", "4", "--no-progress"]


def _run_dir(seeds_run, tmp_path, name):
    run_dir = tmp_path / name
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    return run_dir


def _stats(run_dir) -> dict:
    return json.loads(next((run_dir / "generate").glob("stats-*.json")).read_text())


@pytest.mark.slow
def test_a_server_that_ignores_n_gives_the_rows_of_one_that_honours_it(cli, seeds_run, tmp_path, scripted_server):
    honours = scripted_server()
    ref_dir = _run_dir(seeds_run, tmp_path, "ref")
    rc, _, err = cli("generate", "--run-dir", ref_dir, "--base-url", honours.url, *ARGS)
    assert rc == 0, err
    assert "student: " in err and "n honoured (4 samples in one request)" in err
    ignores = scripted_server(ignore_n=True, ignore_reasoning_effort=True)
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", ignores.url, *ARGS)
    assert rc == 0, err
    assert "student: " in err and "server ignores n (1 choice for n=2); sending 4 requests per problem" in err
    assert "teacher: " in err and "reasoning_effort not honoured (no reasoning returned)" in err
    reference = StageDir(ref_dir, "generate").read().sort("turn_id")
    rows = StageDir(run_dir, "generate").read().sort("turn_id")
    assert rows.select(COMPARED).equals(reference.select(COMPARED))  # the same samples, the same rows
    student = _stats(run_dir)["llm_this_run"]["student"]
    evaluated = rows.filter(pl.col("valid")).height
    assert student["requests"] == evaluated * 4 and student["retries"] == 0 and student["samples_infra"] == 0
    assert _stats(run_dir)["reasons"] == _stats(ref_dir)["reasons"]


def test_max_tokens_over_the_context_is_exit_2_before_any_work(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server(max_model_len=20000)  # the teacher's default 32768 does not fit
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", server.url, *ARGS)
    assert rc == 2 and "Traceback" not in err, err
    assert "--teacher-max-tokens 32768 is not below the server's context length (20000 tokens" in err
    assert server.stats()["requests"] == 0 and not StageDir(run_dir, "generate").parts()
    # Without the probe the first request learns it: exit 2 at once, naming the flag, no retries.
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", server.url, "--no-llm-probe", *ARGS)
    assert rc == 2 and "lower --teacher-max-tokens" in err and "max_model_len=20000" in err, err
    assert server.stats()["by_status"].get("400", 0) <= 3  # the requests in flight then, none retried
    assert not StageDir(run_dir, "generate").done_shards()


@pytest.mark.slow
def test_a_prompt_too_long_for_the_context_is_a_row_with_its_reason(cli, seeds_run, tmp_path, scripted_server):
    # Teacher prompts are about 1000-1500 tokens here: those over 1300 do not fit with 1700 to answer.
    server = scripted_server(max_model_len=3000)
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    limits = ["--teacher-max-tokens", "1700", "--student-max-tokens", "1000"]
    rc, out, err = cli("generate", "--run-dir", run_dir, "--base-url", server.url, *limits, *ARGS)
    assert rc == 0, err
    rows = StageDir(run_dir, "generate").read()
    too_long = rows.filter(pl.col("reason") == reasons.PROMPT_TOO_LONG)
    assert 0 < too_long.height < rows.height
    assert too_long["reason_detail"].str.contains("maximum context length is 3000 tokens").all()
    stats = _stats(run_dir)
    assert stats["reasons"][reasons.PROMPT_TOO_LONG] == too_long.height and stats["finished"] is True
    assert stats["llm_this_run"]["total"]["retries"] == 0
    assert server.stats()["by_status"]["400"] == too_long.height  # each asked once, never retried
    assert f"{reasons.PROMPT_TOO_LONG} {too_long.height}" in err + out  # the summary counts it


def test_a_server_whose_engine_dies_on_a_seed_is_named_and_seeds_can_be_switched_off(
    cli, seeds_run, tmp_path, scripted_server
):
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", scripted_server(crash_on_seed=True).url, *ARGS)
    assert rc == 2 and "the server stopped answering after a request with a seed" in err, err
    assert "pass --no-teacher-send-seed" in err and not StageDir(run_dir, "generate").parts()
    server = scripted_server(crash_on_seed=True)
    off = ["--no-teacher-send-seed", "--no-student-send-seed"]
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", server.url, *off, *ARGS)
    assert rc == 0, err
    assert "seed not sent" in err and set(server.stats()["by_status"]) == {"200"}


def test_an_infra_exit_names_its_cause_in_one_line_and_in_stats_json(cli, seeds_run, tmp_path, scripted_server):
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("generate:\n  llm: {max_outage_s: 1, backoff_initial_s: 0.05, backoff_max_s: 0.1, probe: false}\n")
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    server = scripted_server(error_rate=1.0)
    rc, _, err = cli("--config", cfg, "generate", "--run-dir", run_dir, "--base-url", server.url, *ARGS)
    assert rc == 3, err
    last = err.strip().splitlines()[-1]
    assert "3 turns failed on infrastructure (http_500 x3: scripted internal error)" in last, err
    assert "http_500: scripted internal error; retrying (the first retry of this kind" in err  # said when it began
    assert _stats(run_dir)["infra_causes"] == {"http_500": "http_500: scripted internal error"}
    rc, out, err = cli("stats", run_dir, "--json")
    assert rc == 0, err
    [unfinished] = json.loads(out)["infra"]
    assert unfinished["stage"] == "generate" and unfinished["turns"] == {"http_500": 3}
    assert unfinished["causes"]["http_500"] == "http_500: scripted internal error"
    rc, out, _ = cli("stats", run_dir)
    assert "http_500: scripted internal error" in " ".join(out.replace("│", " ").split())  # (the table wraps)
