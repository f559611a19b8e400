"""`synthgen sandbox` never writes invalid JSON: NaN, Infinity and numbers past a double's range in
a job line (Python's parser takes them; JSON has none) are a bad line, exit 2, named in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _strict(line: str):
    def refuse(name):
        raise ValueError(f"{name} in the output")

    return json.loads(line, parse_constant=refuse)


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ('{"id": NaN, "code": "def f():\\n    return 1\\n", "calls": ["f()"]}', "NaN"),
        ('{"id": -Infinity, "code": "def f():\\n    return 1\\n", "calls": ["f()"]}', "-Infinity"),
        ('{"id": 1e400, "code": "def f():\\n    return 1\\n", "calls": ["f()"]}', "1e400"),
        ('{"id": 3, "code": "def f():\\n    return 1\\n", "calls": ["f()"], "timeout_s": Infinity}', "Infinity"),
    ],
)
def test_non_finite_numbers_in_a_job_are_a_bad_line_never_echoed(tmp_path, needs_bwrap, bad, fragment):
    good = json.dumps({"id": 1, "code": "def f():\n    return 1\n", "calls": ["f()"]})
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(f"{good}\n{bad}\n{good}\n")
    done = subprocess.run(
        [sys.executable, "-m", "synthgen", "sandbox", str(jobs)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=os.getcwd(),
    )
    assert done.returncode == 2, done.stderr
    results = [_strict(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in results] == [1]  # the line before it answered; nothing after
    assert done.stderr.count("\n") == 1 and "line 2:" in done.stderr and fragment in done.stderr
