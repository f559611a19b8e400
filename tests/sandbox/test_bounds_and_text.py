"""Hostile output through `synthgen sandbox -`: unencodable text, amplified results, a closed pipe.

Each case runs the real CLI in a subprocess, as a user or a calling script would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from synthgen.sandbox import Status
from tests.helpers.sandbox import run

SYNTHGEN = [sys.executable, "-c", "from synthgen.cli.app import main; main()"]
SURROGATES = "def f(x):\n    if x < 0:\n        raise ValueError('\\ud800')\n    return '\\ud800' * x\n"


def test_lone_surrogates_in_errors_and_values_are_escaped(bwrap_pool):
    result = run(bwrap_pool, SURROGATES, "f(2)", "f(-1)", "f(0)")
    ok, raised, empty = result.calls
    assert ok.status is Status.OK and ok.value == "'\\ud800\\ud800'"
    assert raised.status is Status.EXCEPTION and raised.error == "ValueError: \\ud800 (line 3)"
    assert empty.value == "''"
    for call in result.calls:
        for text in (call.value, call.error):
            assert text is None or text.encode("utf-8")


def test_sandbox_cli_finishes_and_stores_surrogates_escaped(tmp_path, needs_bwrap):
    jobs = tmp_path / "jobs.jsonl"
    lines = [
        {"id": "first \ud800", "code": SURROGATES, "calls": ["f(2)", "f(-1)"]},
        {"id": 2, "code": "def f():\n    return 1\n", "calls": ["f()"]},
    ]
    jobs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with jobs.open() as stdin:
        done = subprocess.run(SYNTHGEN + ["sandbox", "-"], stdin=stdin, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second = [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]
    assert first["calls"][0]["value"] == "'\\ud800\\ud800'"
    assert first["calls"][1]["error"] == "ValueError: \\ud800 (line 3)"
    assert second["calls"][0]["encoded"] == "1"  # later results are not lost


def _job_of_many_big_values(i: int) -> str:
    """1,000 calls that each return 1 MB: 1 GB of results if nothing capped the job as a whole."""
    code = "def f():\n    return 'x' * 1_000_000\n"
    return json.dumps({"id": i, "code": code, "calls": ["f()"] * 1000, "timeout_s": 30, "memory_mb": 1024})


def test_output_amplification_keeps_host_memory_flat(tmp_path, needs_bwrap):
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(_job_of_many_big_values(i) + "\n" for i in range(12)))
    with jobs.open() as stdin:
        proc = subprocess.Popen(
            SYNTHGEN + ["sandbox", "-", "--workers", "2"], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    lines: list[dict] = []

    def read() -> None:  # keep only the verdict statuses of each line, as a streaming reader would
        for line in proc.stdout:
            lines.append([c["status"] for c in json.loads(line)["calls"]])

    reader = threading.Thread(target=read)
    reader.start()
    host, peak_host, peak_other = psutil.Process(proc.pid), 0, 0
    try:
        while proc.poll() is None:
            try:
                peak_host = max(peak_host, host.memory_info().rss)
                for child in host.children(recursive=True):  # zygotes, bwrap, job children
                    peak_other = max(peak_other, child.memory_info().rss)
            except psutil.Error:
                pass  # a process ended between the listing and the reading
            time.sleep(0.02)
        reader.join(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.wait() == 0, proc.stderr.read().decode()
    assert len(lines) == 12
    for statuses in lines:  # a few values fit the job's total; the rest are refused, none is lost
        assert statuses.count("ok") >= 1 and statuses.count("ok") + statuses.count("output_too_large") == 1000
    assert peak_host < 300 << 20, f"host CLI peaked at {peak_host >> 20} MB"
    assert peak_other < 300 << 20, f"a sandbox process peaked at {peak_other >> 20} MB"


def test_a_closed_stdout_pipe_ends_quietly_with_exit_0(tmp_path, needs_bwrap):
    jobs = tmp_path / "jobs.jsonl"
    job = {"code": "def f(x):\n    return 'y' * 5000\n", "calls": ["f(1)"] * 20}
    jobs.write_text("".join(json.dumps({"id": i, **job}) + "\n" for i in range(300)))
    command = " ".join(SYNTHGEN[:2] + [repr(SYNTHGEN[2])])
    pipeline = f'{command} sandbox - < "{jobs}" 2> "{tmp_path}/err" | head -1 > "{tmp_path}/out"'
    script = pipeline + '; echo "${PIPESTATUS[0]}"'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, cwd=os.getcwd())
    assert done.stdout.strip() == "0"
    assert (Path(tmp_path) / "err").read_text() == ""
    assert json.loads((Path(tmp_path) / "out").read_text())["id"] == 0
