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
from synthgen.store.files import file_metadata, read_metadata
from synthgen.store.layout import StageDir
from synthgen.store.record_checks import SEEDS_SPEC
from synthgen.store.records import SCHEMA_VERSION, SEEDS, table_from_rows


def _rows(n):
    return [
        {
            "seed_id": f"s{i}",
            "source": "dir",
            "origin": "o",
            "start_line": 1,
            "end_line": 2,
            "num_lines": 2,
            "text": "x\n",
        }
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
        from synthgen.store import files, layout
        def stall(*args, **kwargs):
            print("stalled", flush=True)
            time.sleep(60)

        if {hook!r} == "replace":
            files.os.replace = stall
        else:
            files._fsync = stall
        table = pa.table({{"x": list(range(1000))}})
        layout.StageDir({str(tmp_path)!r}, "seeds").write_part("shard-k", 0, table, {{}})
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


# -- names, completeness, the swap ------------------------------------------------------------------
def _finished_shard(stage: StageDir, shard: str, n: int, digest: str = "abc") -> None:
    stage.write_part(shard, 0, table_from_rows(_rows(n), SEEDS), file_metadata("seeds", digest))
    stage.mark_done(shard, {"rows": n, "settings_hash": digest})


def test_shard_names_round_trip():
    name = StageDir.shard_name(3, 8)
    assert name == "shard-00003-of-00008" and StageDir.shard_index(name) == (3, 8)
    assert StageDir.shard_index("kept") is None
    assert StageDir.marker_printf() % (3, 8) == name + ".done"


def test_missing_shards_are_named_and_allow_partial_reads_the_finished_ones(tmp_path):
    stage = StageDir(tmp_path, "seeds")
    _finished_shard(stage, StageDir.shard_name(0, 3), 2)
    stage.write_part(StageDir.shard_name(1, 3), 0, table_from_rows(_rows(5), SEEDS), file_metadata("seeds", "abc"))
    # shard 2 never started: it is missing too
    with pytest.raises(UserError) as caught:
        stage.require_complete()
    assert "2 of 3 shard(s)" in str(caught.value)
    assert "shard-00001-of-00003, shard-00002-of-00003" in str(caught.value)
    found = stage.require_complete(allow_partial=True)
    assert found.partial and found.read().height == 2
    assert found.metadata()["input_partial"]["missing"] == [StageDir.shard_name(1, 3), StageDir.shard_name(2, 3)]
    assert "reading the 1 finished of 3" in found.note()
    for i in (1, 2):
        _finished_shard(stage, StageDir.shard_name(i, 3), 1)
    found = stage.require_complete()
    assert found.complete and not found.partial and found.metadata() == {} and found.read().height == 4


@pytest.mark.parametrize(
    "case,words",
    [
        ("hashes", "mixes shards made with different settings"),
        ("part-hash", "was written with settings zzz"),
        ("splits", "2-way and 4-way splits"),
    ],
)
def test_inconsistent_stages_are_refused_even_with_allow_partial(tmp_path, case, words):
    stage = StageDir(tmp_path, "seeds")
    _finished_shard(stage, StageDir.shard_name(0, 2), 1)
    if case == "hashes":
        _finished_shard(stage, StageDir.shard_name(1, 2), 1, digest="other")
    elif case == "part-hash":
        stage.write_part(StageDir.shard_name(0, 2), 1, table_from_rows(_rows(1), SEEDS), file_metadata("seeds", "zzz"))
    else:
        _finished_shard(stage, StageDir.shard_name(1, 4), 1)
    with pytest.raises(UserError, match=words):
        stage.require_complete(allow_partial=True)


def test_foreign_parquet_needs_no_marker_but_our_nested_parts_do(tmp_path):
    import pyarrow.parquet as pq

    own = tmp_path / "mine"
    (own / "hard").mkdir(parents=True)
    pq.write_table(table_from_rows(_rows(2), SEEDS), own / "hard" / "p.parquet")  # written by someone else
    assert StageDir.at(own, "bin").require_complete().parts == [own / "hard" / "p.parquet"]
    ours = StageDir(tmp_path / "run", "bin")
    from synthgen.store.files import write_parquet_atomic

    write_parquet_atomic(
        ours.path / "hard" / "part-00000.parquet", table_from_rows(_rows(1), SEEDS), file_metadata("bin", "abc")
    )
    with pytest.raises(UserError, match=r"\(bin\)"):
        ours.require_complete()
    ours.mark_done("bin", {"settings_hash": "abc"})
    assert len(ours.require_complete().parts) == 1


def test_nothing_there_is_one_line_naming_the_stage_that_makes_it(tmp_path):
    with pytest.raises(UserError, match=r"no generated problems found in .* \(run `synthgen generate` first, or x\)"):
        StageDir(tmp_path, "generate").require_complete(hint=", or x")
    (tmp_path / "generate").write_text("")
    with pytest.raises(UserError, match="is a file"):
        StageDir(tmp_path, "generate").require_complete()


def test_rebuild_swaps_in_whole_or_keeps_the_old(tmp_path):
    stage = StageDir(tmp_path, "filter")

    def rows() -> int:
        return stage.require_complete().read(spec=SEEDS_SPEC).height

    with stage.rebuild() as build:
        _finished_shard(build, "kept", 3)
        assert not stage.path.exists()  # nothing visible until the block ends
    assert rows() == 3
    with pytest.raises(RuntimeError):
        with stage.rebuild() as build:
            _finished_shard(build, "kept", 5)
            raise RuntimeError("killed half-way")
    assert rows() == 3  # the old output, untouched
    with stage.rebuild() as build:
        _finished_shard(build, "kept", 5)
    assert rows() == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == [".filter.lock", "filter"]  # no builds left over


def test_stage_reads_check_the_schema(tmp_path):
    stage = StageDir(tmp_path, "seeds")
    stage.write_part("shard-a", 0, pa.table({"seed_id": ["x"], "text": [5]}), file_metadata("seeds", "abc"))
    with pytest.raises(UserError, match="has no column 'source'"):
        stage.read()
    with pytest.raises(UserError, match=r"column 'text' is int64, expected string"):
        stage.read(["seed_id", "text"])


@pytest.mark.parametrize("exchange", [True, False])
def test_swap_with_and_without_an_atomic_exchange(tmp_path, monkeypatch, exchange):
    from synthgen.store import layout

    if not exchange:
        monkeypatch.setattr(layout, "exchange", lambda a, b: False)  # filesystems without RENAME_EXCHANGE
    stage = StageDir(tmp_path, "filter")
    for n in (2, 4):
        with stage.rebuild() as build:
            _finished_shard(build, "kept", n)
    assert stage.require_complete().read(spec=SEEDS_SPEC).height == 4
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".filter.") and p.is_dir()] == []
