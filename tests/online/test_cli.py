"""`synthgen train --online` from the command line: the dry-run plan, and bad combinations as one line (exit 2)."""

from __future__ import annotations

import pytest


def base(run_dir) -> list[str]:
    return [
        "train",
        "--online",
        "--run-dir",
        str(run_dir),
        "--model",
        "data/nothing",
        "--recipe",
        "tiny-cpu",
        "--max-steps",
        "40",
    ]


def test_dry_run_prints_servers_rates_and_budgets(cli, online_run_dir):
    pytest.importorskip("trl")
    rc, out, err = cli(
        *base(online_run_dir),
        "--dry-run",
        "--online-teacher-url",
        "http://gpu01:8000/v1",
        "--online-buffer-capacity",
        "12",
        "--online-worker-budget",
        "4",
    )
    assert rc == 0, err
    assert "teacher  http://gpu01:8000/v1  model openai/gpt-oss-120b, reasoning high" in out
    assert "student  the policy in this process" in out
    assert "each round trains on 2 prompts x G = 8 completions" in out
    assert "at most 160 requests over the run (40 worker rounds x 4)" in out
    assert "[0.125, 0.625]" in out and "12 problems" in out and "Zipf" in out and "SCALER" in out
    assert "12 problem(s) of the data start the buffer (18 available)" in out
    assert "8 seed snippet(s)" in out


def test_dry_run_lists_what_the_run_would_stop_on(cli, tmp_path):
    pytest.importorskip("trl")
    rc, out, err = cli(*base(tmp_path), "--dry-run", "--online-student-backend", "server")
    assert rc == 2
    assert "needs --online-student-url" in out and "explorations need seed snippets" in out
    assert err.count("\n") == 1 and "seed snippets" in err


def test_dry_run_without_online_is_refused(cli, tmp_path):
    rc, _, err = cli("train", "--dry-run", "--run-dir", str(tmp_path))
    assert rc == 2 and "--online" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--online-worker-mode", "thread"], "needs a server student"),
        (["--online-student-sync-every", "5"], "for a server student"),
        (["--online-accept-low", "0.7", "--online-accept-high", "0.6"], "must not exceed"),
        (["--online-envs", "poetry"], "unknown environment"),
    ],
)
def test_combinations_that_cannot_work_are_one_line(cli, tmp_path, flags, message):
    pytest.importorskip("trl")
    rc, _, err = cli(*base(tmp_path), *flags)
    assert rc == 2 and message in err and err.count("\n") == 1


def test_a_teacher_that_does_not_answer_stops_the_run_before_training(cli, tmp_path, online_run_dir, tiny_policy):
    rc, _, err = cli(
        "train",
        "--online",
        "--run-dir",
        str(online_run_dir),
        "--model",
        str(tiny_policy),
        "--recipe",
        "tiny-cpu",
        "--max-steps",
        "2",
        "--output",
        str(tmp_path / "out"),
        "--online-teacher-url",
        "http://127.0.0.1:9/v1",
    )
    assert rc == 2 and "teacher" in err and err.count("\n") == 1
    assert not (tmp_path / "out" / "checkpoint-2").exists()
