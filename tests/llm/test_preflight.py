"""Before any work, generate and demo check each role's server: a wrong URL or model is exit 2, one line."""

from __future__ import annotations

import shutil
import socket

from synthgen.store.layout import StageDir


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_generate_refuses_a_dead_url_and_a_wrong_model(cli, seeds_run, tmp_path, scripted_server):
    run_dir = tmp_path / "run"
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    url = _dead_url()
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", url, "--no-progress")
    assert rc == 2 and f"nothing answered at {url}" in _one_line(err)
    server = scripted_server()
    rc, _, err = cli(
        "generate", "--run-dir", run_dir, "--base-url", server.url, "--no-progress", "--student-model", "no/such-model"
    )
    line = _one_line(err)
    assert rc == 2 and line.startswith("synthgen: error: student: ")
    assert "serves 'openai/gpt-oss-120b', not the configured model 'no/such-model'" in line
    assert server.stats()["requests"] == 0  # no chat request was sent
    assert not list(StageDir(run_dir, "generate").path.glob("*.done"))


def test_demo_checks_the_server_before_making_seeds(cli, tmp_path):
    url = _dead_url()
    rc, _, err = cli("demo", "--run-dir", tmp_path / "demo", "--base-url", url, "--no-progress")
    assert rc == 2 and f"nothing answered at {url}" in _one_line(err)
    assert not (tmp_path / "demo" / "seeds").exists()


def test_every_max_tokens_over_the_context_is_named_in_one_line(cli, seeds_run, tmp_path, scripted_server):
    """A newcomer learns both flags at once, each with a value that fits, and no request is made."""
    server = scripted_server(max_model_len=8192)  # teacher 32768 and student 16384 by default
    run_dir = tmp_path / "run"
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    rc, _, err = cli("generate", "--run-dir", run_dir, "--base-url", server.url, "--no-progress")
    line = _one_line(err)
    assert rc == 2
    assert "--teacher-max-tokens 32768 is not below the server's context length (8192 tokens" in line
    assert "--student-max-tokens 16384 is not below the server's context length (8192 tokens" in line
    assert line.endswith("pass e.g. --teacher-max-tokens 4096 --student-max-tokens 4096"), line
    assert server.stats()["requests"] == 0
    # Set by the user, a value over the context is theirs to change: the demo stops too.
    rc, _, err = cli("demo", "--run-dir", tmp_path / "d", "--base-url", server.url, "--student-max-tokens", "9000")
    line = _one_line(err)
    assert rc == 2 and "--student-max-tokens 9000 is not below" in line and "teacher" not in line.split("pass")[0]


def test_the_demo_fits_default_max_tokens_to_the_context_and_says_so_once(cli, tmp_path, scripted_server):
    """The demo runs on built-in defaults sized for gpt-oss (128k): on a server that states 8192 its
    defaults become half of that (the prompt keeps the other half), said once per role, and every
    stage sends the fitted value (the scripted server answers 400 to what is over its context)."""
    server = scripted_server(max_model_len=8192)
    run_dir = tmp_path / "demo"
    small = ["--seeds", "3", "--turns", "2", "--attempts", "4", "--no-progress"]
    rc, out, err = cli("demo", "--run-dir", run_dir, "--base-url", server.url, *small)
    assert rc == 0, err
    said = [line for line in (out + err).splitlines() if "max_tokens fitted to 4096" in line]
    assert [line.split(":")[0] for line in said] == ["teacher", "student"], said
    assert "the default 32768" in said[0] and "the default 16384" in said[1]
    assert "400" not in server.stats()["by_status"], server.stats()
    rows = StageDir(run_dir, "generate").read()
    assert rows["valid"].any()
