"""Messages that say what happened: what changed since a finished run and what --force replays,
a stage that is still being written (pid, host) rather than absent, how to finish an interrupted
run, nothing left behind by bad input, and whole lines without a terminal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from synthgen.store.layout import StageDir, running_note
from tests.helpers.argv import SMALL_GENERATE, python_m, stage


@pytest.fixture
def generated(cli, tmp_path, seeds_run, scripted_server):
    """A finished small generate run (2 seeds, 2 turns) and the server's URL."""
    run_dir = tmp_path / "run"
    shutil.copytree(seeds_run, run_dir)
    server = scripted_server()
    rc, _, err = cli(*stage("generate", run_dir, server.url, **SMALL_GENERATE, max_seeds=2))
    assert rc == 0, err
    return run_dir, server.url


def test_other_settings_say_what_changed_and_what_force_replays(cli, generated):
    run_dir, url = generated
    argv = stage("generate", run_dir, url, **{**SMALL_GENERATE, "turns": 3, "attempts": 5}, max_seeds=2)
    rc, out, err = cli(*argv)
    assert rc == 2 and err.count("\n") == 1, err
    assert "turns: 2 -> 3" in err and "attempts: 4 -> 5" in err
    assert "--force redoes it" in err and "request cache" in err and "hash" not in err
    rc, _, err = cli(*argv, "--force")
    assert rc == 0, err
    assert StageDir(run_dir, "generate").done_info(StageDir(run_dir, "generate").done_shards()[0])


def hold(run_dir, shard: str) -> subprocess.Popen:
    """Another process that writes `shard` of generate (holds its lock) until its stdin closes."""
    script = textwrap.dedent(f"""
        import sys
        from synthgen.store.layout import StageDir
        with StageDir({str(run_dir)!r}, "generate").lock({shard!r}):
            print("locked", flush=True)
            sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_stage_being_written_is_named_running_with_its_pid_not_absent(cli, tmp_path):
    run_dir = tmp_path / "run"
    generate = StageDir(run_dir, "generate")
    assert running_note(generate) is None
    writer = hold(run_dir, StageDir.shard_name(0, 1))
    try:
        rc, _, err = cli("filter", "--run-dir", run_dir)
        assert rc == 2 and err.count("\n") == 1, err
        assert f"`synthgen generate` is still writing {generate.path} (pid {writer.pid} on host" in err
        assert "first" not in err  # not "run synthgen generate first"
        assert running_note(generate).startswith(f"running (pid {writer.pid} on host")
        rc, out, err = cli("stats", run_dir)
        assert rc == 0 and f"running (pid {writer.pid} on host" in out + err, out + err
    finally:
        writer.stdin.close()
        writer.wait()
    assert running_note(generate) is None
    rc, _, err = cli("filter", "--run-dir", run_dir)
    assert rc == 2 and "run `synthgen generate` first" in err


def test_an_interrupted_one_shard_run_says_how_to_finish_it(cli, generated):
    run_dir, _ = generated
    generate = StageDir(run_dir, "generate")
    for shard in generate.done_shards():
        generate.marker_path(shard).unlink()  # as if it was stopped before its last part
    for argv in ([], ["--allow-partial"]):
        rc, _, err = cli("filter", "--run-dir", run_dir, *argv)
        assert rc == 2 and err.count("\n") == 1, err
        assert "run `synthgen generate` again with the same settings to finish them (it resumes" in err


@pytest.mark.parametrize("command", ["generate", "filter", "bin", "chain"])
def test_bad_input_leaves_nothing_behind(cli, tmp_path, command):
    typo = tmp_path / "runs" / "exp1-typo"
    rc, _, err = cli(command, "--run-dir", typo)
    assert rc == 2 and err.count("\n") == 1, err
    assert not (tmp_path / "runs").exists()


def test_without_a_terminal_lines_are_whole(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.py").write_text(
        "def f(x):\n    y = x + 1\n    return y * 2\n" + "".join(f"v{i} = {i}\n" for i in range(40))
    )
    run_dir = tmp_path / ("a-run-directory-with-a-long-name-" * 3)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}
    done = subprocess.run(
        python_m("seeds", "dir", source, "--run-dir", run_dir), capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "wrote" in line]
    assert len(lines) == 1 and str(run_dir / "seeds") in lines[0] and len(lines[0]) > 120


def test_train_resume_from_a_missing_folder_is_one_line_before_any_log(tmp_path):
    done = subprocess.run(
        python_m("train", "--resume-from", tmp_path / "no-such-checkpoint", "--output", tmp_path / "out"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and not done.stdout, done.stderr
    assert done.stderr.splitlines() == [
        f"synthgen: error: --resume-from {tmp_path / 'no-such-checkpoint'} is not a checkpoint folder (it does not "
        "exist)"
    ]
