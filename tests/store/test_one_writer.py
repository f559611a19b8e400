"""One writer per output, and stages that read only finished inputs (real processes, kill -9)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from synthgen.store.files import file_metadata, read_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS, table_from_rows
from tests.stages.filter.test_run import make_row, write_generate

# Runs `synthgen ARGS` in its own process and stops it for good right after its second part file,
# in the middle of writing its output (the test kills it there).
STALLING_CLI = textwrap.dedent("""
    import sys, time
    from synthgen.store import layout as shards
    real, written = shards.StageDir.write_part, []

    def write_part(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        written.append(out)
        if len(written) == 2:
            print("stalled", flush=True)
            time.sleep(3600)
        return out

    shards.StageDir.write_part = write_part
    from synthgen.cli.app import main
    main(sys.argv[1:])
""")


def stalled(*args) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", STALLING_CLI, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout.readline().strip() == "stalled"
    return proc


def kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


ROWS = [make_row(i, pass_rate=(i % 9 + 1) / 10, correct=i % 9 + 1) for i in range(12)]


@pytest.fixture
def run(tmp_path) -> Path:
    write_generate(tmp_path / "run", ROWS)
    (tmp_path / "cfg.yaml").write_text("filter: {rows_per_part: 2}\n")  # many parts: a kill lands mid-write
    return tmp_path / "run"


def outputs(run: Path) -> tuple[list, list]:
    kept = pl.read_parquet(run / "filter" / "kept.part-*.parquet").sort("turn_id")
    rejects = pl.read_parquet(run / "filter" / "rejects" / "*.parquet").sort("turn_id")
    return kept.rows(), rejects.rows()


def single_run(tmp_path: Path, cli) -> tuple[list, list]:
    write_generate(tmp_path / "single", ROWS)
    rc, _, err = cli("--config", tmp_path / "cfg.yaml", "filter", "--run-dir", tmp_path / "single")
    assert rc == 0, err
    return outputs(tmp_path / "single")


def test_two_filters_on_one_run_one_refuses_and_the_result_equals_a_single_run(run, tmp_path, cli):
    cfg = tmp_path / "cfg.yaml"
    first = stalled("--config", cfg, "filter", "--run-dir", run)
    try:
        rc, _, err = cli("--config", cfg, "filter", "--run-dir", run)
        assert rc == 2 and err.count("\n") == 1
        assert f"filter is being written by pid {first.pid} on host" in err
    finally:
        kill(first)  # a killed holder never blocks: the next filter goes ahead
    rc, _, err = cli("--config", cfg, "filter", "--run-dir", run)
    assert rc == 0, err
    assert outputs(run) == single_run(tmp_path, cli)
    assert not [p for p in run.iterdir() if ".new-" in p.name]  # the killed build was cleared


def test_filter_killed_mid_write_leaves_nothing_bin_would_take(run, tmp_path, cli):
    kill(stalled("--config", tmp_path / "cfg.yaml", "filter", "--run-dir", run))
    assert not (run / "filter").exists()
    rc, _, err = cli("bin", "--run-dir", run)
    assert rc == 2 and err.count("\n") == 1
    assert "no problems found" in err and "a build that was killed or is still running" in err
    rc, _, err = cli("bin", "--run-dir", run, "--allow-partial")
    assert rc == 2 and "--allow-partial reads finished shards only, and there are none" in err
    assert not (run / "bin").exists()


def test_a_killed_refilter_leaves_the_old_output_whole(run, tmp_path, cli):
    cfg = tmp_path / "cfg.yaml"
    assert cli("--config", cfg, "filter", "--run-dir", run)[0] == 0
    before = outputs(run)
    kill(stalled("--config", cfg, "filter", "--run-dir", run, "--band-high", "0.5", "--force"))
    assert outputs(run) == before
    rc, _, err = cli("bin", "--run-dir", run)
    assert rc == 0, err
    binned = pl.read_parquet(run / "bin" / "*" / "*.parquet")
    summary = json.loads((run / "bin" / "summary.json").read_text())
    assert summary["input_rows"] == len(before[0]) and binned.height + summary["outside"]["total"] == len(before[0])


def test_filter_refuses_an_unfinished_generate_shard_unless_allow_partial(tmp_path, cli):
    run, late = tmp_path / "run", StageDir.shard_name(1, 2)
    write_generate(run, ROWS[:6], shard=StageDir.shard_name(0, 2))
    StageDir(run, "generate").write_part(
        late, 0, table_from_rows(ROWS[6:], PROBLEMS), file_metadata("generate", "gen0")
    )  # still being written: no marker
    rc, _, err = cli("filter", "--run-dir", run)
    assert rc == 2 and err.count("\n") == 1
    assert f"1 of 2 shard(s) have no completion marker ({late})" in err and "--allow-partial" in err
    assert not (run / "filter").exists()
    rc, _, err = cli("filter", "--run-dir", run, "--allow-partial")
    assert rc == 0, err
    assert "--allow-partial: reading the 1 finished of 2 shard(s)" in err
    kept, rejects = outputs(run)
    assert len(kept) + len(rejects) == 6
    recorded = json.loads(read_metadata(run / "filter" / "kept.part-00000.parquet")["input_partial"])
    assert recorded["missing"] == [late] and recorded["finished"] == [StageDir.shard_name(0, 2)]
    assert json.loads((run / "filter" / "stats.json").read_text())["input_partial"]["missing"] == [late]
    assert StageDir(run, "filter").done_info("kept")["input_partial"]["missing"] == [late]
    rc, _, err = cli("bin", "--run-dir", run)  # the filter output is finished; bin passes the news on
    assert rc == 0 and "was itself made from a partial input" in err


def test_two_seeds_writers_on_one_shard(tmp_path, cli):
    src = tmp_path / "src"
    src.mkdir()
    (src / "code.py").write_text("".join(f"def f{i}(x, y):\n    return x * {i} + y - {i * i}\n" for i in range(40)))
    shard = StageDir.shard_name(0, 1)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys
        from synthgen.store.layout import StageDir
        with StageDir({str(tmp_path / "run")!r}, "seeds").lock({shard!r}):
            print("locked", flush=True)
            sys.stdin.read()
    """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "locked"
    try:
        rc, _, err = cli("seeds", "dir", src, "--run-dir", tmp_path / "run", "--n", "3")
        assert rc == 2 and f"shard 0 of seeds is being written by pid {holder.pid} on host" in err
        assert not StageDir(tmp_path / "run", "seeds").done_shards()
    finally:
        kill(holder)
    rc, _, err = cli("seeds", "dir", src, "--run-dir", tmp_path / "run", "--n", "3")
    assert rc == 0, err
    assert cli("seeds", "dir", src, "--run-dir", tmp_path / "single", "--n", "3")[0] == 0
    seeds = [StageDir(tmp_path / r, "seeds").require_complete().read().rows() for r in ("run", "single")]
    assert seeds[0] and seeds[0] == seeds[1]
