"""Shard IO: atomic writes leave no finished-looking file when the writer dies mid-way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

from synthgen.errors import UserError
from synthgen.records import SEEDS, SCHEMA_VERSION, table_from_rows
from synthgen.shards import StageDir, file_metadata, read_metadata


def _rows(n):
    return [
        {"seed_id": f"s{i}", "source": "dir", "origin": "o", "start_line": 1, "end_line": 2, "num_lines": 2, "text": "x\n"}
        for i in range(n)
    ]


def test_write_read_roundtrip_with_metadata(tmp_path):
    stage = StageDir(tmp_path, "seeds")
    stage.write_part("shard-a", 0, table_from_rows(_rows(3), SEEDS), file_metadata("seeds", "abc"))
    stage.write_part("shard-b", 0, table_from_rows(_rows(2), SEEDS), file_metadata("seeds", "abc"))
    assert not stage.is_done("shard-a")
    stage.mark_done("shard-a", {"rows": 3, "settings_hash": "abc"})
    assert stage.is_done("shard-a") and stage.done_shards() == ["shard-a"]
    assert stage.read().height == 5
    meta = read_metadata(stage.parts()[0])
    assert meta["schema_version"] == SCHEMA_VERSION and meta["settings_hash"] == "abc"
    assert stage.read_table().schema.field("num_lines").type == pa.int32()


@pytest.mark.parametrize("hook", ["_fsync", "replace"])
def test_writer_killed_mid_file_leaves_nothing_finished(tmp_path, hook):
    """A writer SIGKILLed before its rename (data written, or mid-sync) leaves no finished file."""
    script = textwrap.dedent(
        f"""
        import os, sys, time
        import pyarrow as pa
        from synthgen import shards

        def stall(*args, **kwargs):
            print("stalled", flush=True)
            time.sleep(60)

        if {hook!r} == "replace":
            shards.os.replace = stall
        else:
            shards._fsync = stall
        table = pa.table({{"x": list(range(1000))}})
        shards.StageDir({str(tmp_path)!r}, "seeds").write_part("shard-k", 0, table, {{}})
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "stalled"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stage = StageDir(tmp_path, "seeds")
    assert stage.parts() == [] and not stage.is_done("shard-k")
    leftovers = list(stage.path.iterdir())
    assert leftovers and all(p.name.startswith(".") for p in leftovers)
    stage.remove_stale_temps("shard-k")
    assert list(stage.path.iterdir()) == []


def test_corrupt_parquet_is_a_user_error(tmp_path):
    stage = StageDir(tmp_path, "seeds")
    stage.path.mkdir(parents=True)
    (stage.path / "shard-x.part-00000.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(UserError, match="cannot read Parquet file"):
        stage.read()
    with pytest.raises(UserError, match="no Parquet files"):
        StageDir(tmp_path, "generate").read()
