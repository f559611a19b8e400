"""A full disk while the request cache writes is infrastructure: exit 3 and one line naming the
stage and the path, not SQLite's traceback ("disk I/O error", "cannot rollback"); nothing is marked
finished, and after freeing space the re-run equals a clean run."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from synthgen.store.layout import StageDir
from tests.helpers.argv import stage
from tests.stages.test_out_of_space import COMPARED, GENERATE, _one_line_infra, fill


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


# Free space left when the run starts: small enough that the cache's write-ahead log, not a
# Parquet part, is what meets the full disk (the 16 KiB and 64 KiB among them).
@pytest.mark.parametrize("leave", [16 * 1024, 32 * 1024, 64 * 1024, 96 * 1024], ids=lambda n: f"{n // 1024}KiB")
def test_generate_when_the_request_cache_meets_a_full_disk(
    cli, tmp_path, small_disk, seeds_run, scripted_server, leave
):
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
    assert not StageDir.of(run, "generate").done_shards()
    filler.unlink()
    rc, _, err = cli(*stage("generate", run, server.url), *GENERATE)
    assert rc == 0, err
    rows = StageDir.of(run, "generate").read().sort("turn_id").select(COMPARED)
    assert rows.equals(StageDir.of(clean, "generate").read().sort("turn_id").select(COMPARED))
