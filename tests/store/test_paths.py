"""Every output path is checked before any work: a file where a folder should be, a folder under a
file, a symlink loop, a read-only mount. Each is exit 2 with one line naming the path."""

from __future__ import annotations

import subprocess

import pytest


@pytest.fixture(scope="module")
def read_only(tmp_path_factory):
    """A read-only tmpfs (root ignores permission bits, not a read-only mount)."""
    where = tmp_path_factory.mktemp("ro") / "mnt"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {done.stderr.decode().strip()}")
    yield where
    subprocess.run(["umount", str(where)], check=False)


@pytest.fixture
def bad(tmp_path, read_only):
    """Bad output paths by kind."""
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "nowhere").symlink_to(tmp_path / "gone")
    return {
        "file": tmp_path / "a-file",
        "under-file": tmp_path / "a-file" / "out",
        "loop": tmp_path / "loop",
        "under-loop": tmp_path / "loop" / "out",
        "read-only": read_only,
        "under-read-only": read_only / "out",
        "nowhere": tmp_path / "nowhere",
    }


def _commands(tmp_path):
    """(name, argv with {} where the bad path goes): every command that writes a folder."""
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    url = "http://127.0.0.1:9/v1"
    evaluate = ["eval", "--benchmarks", "math500", "--data-dir", data, "--model-url", url]
    return {
        "report --output": ["report", run, "--output", "{}/report.html"],
        "eval --output": [*evaluate, "--output", "{}"],
        "eval --run-dir": [*evaluate, "--run-dir", "{}"],
        "train --output": ["train", "--model", "m", "--output", "{}"],
        "train --make-tiny-model": ["train", "--make-tiny-model", "{}"],
        "export": ["export", run, "{}"],
        "seeds": ["seeds", "--run-dir", "{}"],
        "generate": ["generate", "--run-dir", "{}", "--base-url", url, "--no-progress"],
        "filter": ["filter", "--run-dir", "{}"],
        "bin": ["bin", "--run-dir", "{}"],
        "chain": ["chain", "--run-dir", "{}", "--base-url", url, "--no-progress"],
    }


NAMES = [
    "report --output",
    "eval --output",
    "eval --run-dir",
    "train --output",
    "train --make-tiny-model",
    "export",
    "seeds",
    "generate",
    "filter",
    "bin",
    "chain",
]
KINDS = ["file", "under-file", "loop", "under-loop", "read-only", "under-read-only"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("command", NAMES)
def test_a_bad_output_path_is_one_line_and_exit_2(cli, tmp_path, bad, command, kind):
    path = bad[kind]
    argv = [str(a).replace("{}", str(path)) for a in _commands(tmp_path)[command]]
    rc, out, err = cli(*argv)
    assert rc == 2, (argv, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path).split("/")[-1] in err, err


def test_report_output_that_is_a_folder_or_a_loop_is_refused(cli, tmp_path, bad):
    run = tmp_path / "run"
    run.mkdir()
    cases = ((tmp_path, "is a folder"), (bad["loop"], "symlink loop"), (bad["nowhere"], "link to nothing"))
    for target, words in cases:
        rc, _, err = cli("report", run, "--output", target)
        assert rc == 2 and err.count("\n") == 1 and words in err, err


def test_a_good_new_output_folder_is_not_created_by_the_check(tmp_path):
    from synthgen.store.paths import output_folder

    target = tmp_path / "new" / "deeper"
    assert output_folder(target, "--output") == target and not (tmp_path / "new").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # the write probe left nothing behind
