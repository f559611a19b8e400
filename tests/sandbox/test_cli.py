"""The JSON-lines protocol of `synthgen sandbox` (run_cli and the stand-alone main)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading

import pytest

from synthgen.cli.sandbox import BadJobLine, parse_job, run_cli
from synthgen.errors import UserError
from synthgen.sandbox.settings import SandboxRunSettings


def _run(lines: list[str]) -> tuple[list[dict], Exception | None]:
    out = io.StringIO()
    error = None
    try:
        run_cli(
            io.StringIO("".join(line + "\n" for line in lines)), out, SandboxRunSettings(workers=2, isolation="bwrap")
        )
    except UserError as exc:
        error = exc
    return [json.loads(line) for line in out.getvalue().splitlines()], error


def test_results_in_order_with_matches_and_isolation(needs_bwrap):
    jobs = [
        {
            "id": "a",
            "code": "def f(x):\n    return [x, (x,)]\n",
            "calls": ["f(1)", "f('s')"],
            "expected": ["[1, (1,)]", "['s', ['s']]"],
        },
        {"id": 2, "code": "import time\ndef f():\n    time.sleep(5)\n", "calls": ["f()"], "timeout_s": 0.3},
        {
            "code": "def f():\n    return float('nan')\n",
            "calls": ["f()", "g()"],
            "expected": ["float('nan')", None],
            "memory_mb": 128,
        },
    ]
    results, error = _run([json.dumps(j) for j in jobs] + [""])
    assert error is None
    assert [r["id"] for r in results] == ["a", 2, None]
    assert all(r["isolation"] == "bwrap" for r in results)
    first = results[0]["calls"]
    assert [c["status"] for c in first] == ["ok", "ok"] and [c["match"] for c in first] == [True, False]
    assert first[0]["value"] == "[1, (1,)]" and first[0]["encoded"] == '[1,{"tuple":[1]}]'
    assert results[1]["calls"][0]["status"] == "timeout"
    third = results[2]["calls"]
    assert third[0]["match"] is True and third[1]["status"] == "exception" and third[1]["match"] is None


def test_many_jobs_stream_in_order(needs_bwrap):
    lines = [json.dumps({"id": i, "code": "def f(x):\n    return x + 1\n", "calls": [f"f({i})"]}) for i in range(50)]
    results, error = _run(lines)
    assert error is None and [r["calls"][0]["encoded"] for r in results] == [str(i + 1) for i in range(50)]


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"calls": ["f()"]}', "missing field 'code'"),
        ('{"code": "x = 1"}', "missing field 'calls'"),
        ('{"code": "x = 1", "calls": "f()"}', "list of strings"),
        ('{"code": "x = 1", "calls": ["f()"], "expected": ["1", "2"]}', "one entry per call"),
        ('{"code": "x = 1", "calls": ["f()"], "expected": ["__import__(\'os\')"]}', "expected[0]"),
        ('{"code": "x = 1", "calls": ["f()"], "timeout_s": "2"}', "timeout_s"),
        ('{"code": "x = 1", "calls": ["f()"], "timeout_s": -1}', "timeout_s"),
        ('{"code": "x = 1", "calls": ["f()"], "memory_mb": 1}', "memory_mb"),
        ('{"code": "x = 1", "calls": ["f()"], "timeout": 2}', "unknown field"),
    ],
)
def test_bad_lines_are_user_errors_with_the_line_number(line, fragment):
    with pytest.raises(BadJobLine) as info:
        parse_job(line, 7)
    assert isinstance(info.value, UserError) and isinstance(info.value, ValueError)
    assert str(info.value).startswith("line 7: ") and fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_line_stops_after_earlier_results(needs_bwrap):
    good = json.dumps({"id": 1, "code": "def f():\n    return 1\n", "calls": ["f()"]})
    results, error = _run([good, good, "{oops", good])
    assert [r["id"] for r in results] == [1, 1]
    assert isinstance(error, BadJobLine) and str(error).startswith("line 3:")


def test_stand_alone_main_exit_codes(tmp_path, needs_bwrap):
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(
        json.dumps({"id": 1, "code": "def f():\n    return 'ok'\n", "calls": ["f()"], "expected": ["'ok'"]}) + "\n"
    )
    cmd = [sys.executable, "-m", "synthgen.cli.sandbox"]
    done = subprocess.run(cmd + [str(jobs)], capture_output=True, text=True, timeout=60, cwd=os.getcwd())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["calls"][0]["match"] is True
    done = subprocess.run(cmd + ["-"], input="{bad\n", capture_output=True, text=True, timeout=60, cwd=os.getcwd())
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "line 1" in done.stderr


def test_each_result_comes_before_the_next_line_is_sent(needs_bwrap):
    """A caller may wait for an answer before it sends the next job (no read-ahead deadlock)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "synthgen.cli.sandbox", "-", "--workers", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    )
    try:
        for i in range(3):
            proc.stdin.write(json.dumps({"id": i, "code": "def f(x):\n    return -x\n", "calls": [f"f({i})"]}) + "\n")
            proc.stdin.flush()
            answer: list[str] = []
            reader = threading.Thread(target=lambda out=answer: out.append(proc.stdout.readline()))
            reader.start()
            reader.join(timeout=30)
            assert answer and json.loads(answer[0])["calls"][0]["encoded"] == str(-i)
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_command_limits_apply_to_lines_that_set_none(tmp_path, needs_bwrap):
    """`--timeout-s` is the default of every line without its own timeout_s; a line's own wins."""
    slow = {"code": "import time\ndef f():\n    time.sleep(1.0)\n    return 1\n", "calls": ["f()"]}
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps({"id": "cmd", **slow}) + "\n" + json.dumps({"id": "own", **slow, "timeout_s": 5}) + "\n")
    cmd = [sys.executable, "-m", "synthgen.cli.sandbox", str(jobs), "--timeout-s", "0.3", "--workers", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=os.getcwd())
    assert done.returncode == 0, done.stderr
    statuses = {r["id"]: r["calls"][0]["status"] for r in map(json.loads, done.stdout.splitlines())}
    assert statuses == {"cmd": "timeout", "own": "ok"}
