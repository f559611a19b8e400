"""A full disk is infrastructure: seeds, generate and filter on a small tmpfs that fills up during
the stage end with exit 3 and one line naming the path and the stage, nothing marked finished, old
output whole; after freeing space the re-run equals a clean run. The request cache meeting the full
disk (SQLite's "disk I/O error", "cannot rollback") is the same: one line, never its traceback."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from synthgen.store.layout import StageDir
from tests.helpers.argv import SMALL_GENERATE, flags, stage

GENERATE = flags(**SMALL_GENERATE, max_in_flight=8)
COMPARED = ["turn_id", "problem_id", "env", "turn", "code", "inputs", "outputs", "valid", "reason", "pass_rate"]


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs (you are root here; elsewhere the test is skipped), unmounted afterwards."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk, leave: int = 0):
    """Fill `disk` up to `leave` free bytes with one file; returns it (delete it to free the space)."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    with open(filler, "wb") as fh:
        try:
            fh.write(b"\0" * max(0, free - leave))
            fh.flush()
        except OSError:
            pass
    return filler


def _one_line_infra(rc, err, stage, where):
    assert rc == 3, err
    # (Before it, generate's preflight says what it found about each role's server, a line per role.)
    errors = [line for line in err.splitlines() if line.startswith("synthgen:")]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0] and "Traceback" not in err, err
    assert f"{stage}:" in errors[0] and "out of space" in errors[0] and str(where) in errors[0], err


def test_seeds_on_a_full_disk(cli, tmp_path, small_disk):
    clean = tmp_path / "clean"
    assert cli("seeds", "--run-dir", clean, "--n", "8", "--seed", "7")[0] == 0
    run = small_disk / "run"
    filler = fill(small_disk)
    rc, _, err = cli("seeds", "--run-dir", run, "--n", "8", "--seed", "7")
    _one_line_infra(rc, err, "seeds", run)
    assert not StageDir(run, "seeds").done_shards()
    filler.unlink()
    assert cli("seeds", "--run-dir", run, "--n", "8", "--seed", "7")[0] == 0
    assert StageDir(run, "seeds").read().equals(StageDir(clean, "seeds").read())


# Free space left when the run starts: none, a little (the request cache's write-ahead log, not a
# Parquet part, meets the full disk: 16-96 KiB), or enough for the run to fill it part way.
@pytest.mark.parametrize("leave", [0, 16, 32, 48, 64, 96, 160], ids=lambda n: f"{n}KiB")
def test_generate_on_a_disk_that_fills_up(cli, tmp_path, small_disk, seeds_run, scripted_server, leave):
    leave *= 1024
    server = scripted_server()
    clean = tmp_path / "clean"
    shutil.copytree(seeds_run / "seeds", clean / "seeds")
    assert cli(*stage("generate", clean, server.url), *GENERATE)[0] == 0
    run = small_disk / "run"
    shutil.copytree(seeds_run / "seeds", run / "seeds")
    filler = fill(small_disk, leave)
    rc, _, err = cli(*stage("generate", run, server.url), *GENERATE)
    _one_line_infra(rc, err, "generate", run)
    assert "sqlite" not in err.lower() or "out of space" in err
    assert not StageDir(run, "generate").done_shards()
    filler.unlink()
    rc, _, err = cli(*stage("generate", run, server.url), *GENERATE)
    assert rc == 0, err
    rows = StageDir(run, "generate").read().sort("turn_id").select(COMPARED)
    assert rows.equals(StageDir(clean, "generate").read().sort("turn_id").select(COMPARED))


def test_filter_on_a_full_disk_keeps_the_old_output(cli, tmp_path, small_disk, seeds_run, scripted_server):
    server = scripted_server()
    run = small_disk / "run"
    shutil.copytree(seeds_run / "seeds", run / "seeds")
    assert cli(*stage("generate", run, server.url), *GENERATE)[0] == 0
    assert cli("filter", "--run-dir", run, "--band-low", "0", "--band-high", "1")[0] == 0
    old = StageDir(run, "filter").read()
    clean = tmp_path / "clean"
    shutil.copytree(run, clean, ignore=shutil.ignore_patterns("filter", "cache"))
    assert cli("filter", "--run-dir", clean)[0] == 0
    filler = fill(small_disk)
    rc, _, err = cli("filter", "--run-dir", run, "--force")
    _one_line_infra(rc, err, "filter", run)
    assert StageDir(run, "filter").read().equals(old)  # the old output, whole and still marked
    assert not [p for p in run.iterdir() if ".new-" in p.name]
    filler.unlink()
    assert cli("filter", "--run-dir", run, "--force")[0] == 0
    assert StageDir(run, "filter").read().equals(StageDir(clean, "filter").read())
