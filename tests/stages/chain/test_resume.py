"""`synthgen chain --disjoint` killed (kill -9, a real process) while it builds the baseline: the
re-run cleans the killed build and writes the baseline, and nothing claims a baseline that is not there."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap

from synthgen.store.layout import StageDir
from synthgen.store.run_info import stage_info

# Runs `synthgen ARGS` and stops it for good while the disjoint baseline's part is being written.
STALL_IN_BASELINE = textwrap.dedent("""
    import sys, time
    from synthgen.store import layout as shards
    real = shards.StageDir.write_part

    def write_part(self, *args, **kwargs):
        if self.stage == "chain/disjoint":
            print("stalled", flush=True)
            time.sleep(3600)
        return real(self, *args, **kwargs)

    shards.StageDir.write_part = write_part
    from synthgen.cli.app import main
    main(sys.argv[1:])
""")


def _chain_args(run_dir, url):
    # A wide start band and M = 32: the shared demo run (M = 8) has few problems in the paper's
    # 0.05-0.16, and at M = 8 a step lands in the chains' narrow bands by luck. Chain would take
    # the starts' M = 8, so measuring at 32 takes --remeasure.
    return [
        *("chain", "--run-dir", str(run_dir), "--base-url", url, "--no-progress"),
        *("--disjoint", "--start-band", "0.05:0.40", "--tries", "3", "--attempts", "32", "--remeasure"),
    ]


def test_kill_9_while_building_the_baseline_then_the_rerun_builds_it(demo_run, tmp_path, scripted_server, cli):
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir, ignore=shutil.ignore_patterns("chain", "cache"))
    server = scripted_server(seed=3)
    reference = tmp_path / "reference"
    shutil.copytree(run_dir, reference)
    assert cli(*_chain_args(reference, server.url))[0] == 0
    assert StageDir(reference, "chain/disjoint").status().complete

    proc = subprocess.Popen(
        [sys.executable, "-c", STALL_IN_BASELINE, *_chain_args(run_dir, server.url)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "stalled"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    chain = run_dir / "chain"
    assert [p.name for p in chain.iterdir() if ".disjoint.new-" in p.name]  # the killed build
    assert not (chain / "disjoint").exists()
    # Until the baseline exists, the run's description (the export card's settings) does not claim it.
    assert stage_info(run_dir, "chain/problems").settings["disjoint"] is False

    rc, _, err = cli(*_chain_args(run_dir, server.url))
    assert rc == 0, err
    assert "already finished" in err and "the baseline is in" in err
    assert not [p.name for p in chain.iterdir() if ".new-" in p.name]
    assert StageDir(run_dir, "chain/disjoint").status().complete
    rows = StageDir(run_dir, "chain/disjoint").read().sort("problem_id")
    assert rows.height > 0 and rows.equals(StageDir(reference, "chain/disjoint").read().sort("problem_id"))
    assert stage_info(run_dir, "chain/problems").settings["disjoint"] is True
    # A third run has nothing left to do.
    rc, _, err = cli(*_chain_args(run_dir, server.url))
    assert rc == 0 and "the baseline is in" not in err
