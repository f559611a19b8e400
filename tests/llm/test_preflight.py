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
