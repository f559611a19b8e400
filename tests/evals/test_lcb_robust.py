"""LiveCodeBench files as they come: one unreadable problem is skipped by name while the others
are scored, an expected output past Python's 4300-digit limit is read and judged, and samples cut
by a time limit are counted next to pass@k."""

from __future__ import annotations

import json

from tests.evals.test_loaders import call_test, lcb_row, stdin_test, write_jsonl
from tests.helpers.evals import figure, summary

BIG = "1" + "0" * 5000  # 10 ** 5000: 5001 digits
ROWS = [
    lcb_row("sum2", "2024-09-01", "easy", [stdin_test("1 2\n", "3\n")], [stdin_test("5 7\n", "12\n")], content="Sum."),
    lcb_row(
        "power",
        "2024-10-01",
        "easy",
        [call_test("5000", BIG)],
        [call_test("1", "10")],
        starter="class Solution:\n    def power(self, n: int) -> int:\n        ",
        func="power",
        content="Power of ten.",
    ),
    lcb_row("spin", "2024-11-01", "easy", [stdin_test("1\n", "1\n")], [], content="Spin."),
    {**lcb_row("broken", "2024-12-01", "easy", [], [], content="Broken."), "private_test_cases": "not base64 at all!"},
]
ANSWERS = {
    "Sum.": "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
    "Power of ten.": "```python\nclass Solution:\n    def power(self, n):\n        return 10 ** n\n```",
    "Spin.": "```python\nwhile True:\n    pass\n```",
}


def test_one_unreadable_problem_is_skipped_the_rest_scored_and_timeouts_counted(cli, stand_in, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "lcb.jsonl", ROWS)
    url = stand_in(lambda text, i: next(a for k, a in ANSWERS.items() if k in text))
    out = tmp_path / "out"
    args = ["eval", "--benchmarks", "lcb", "--data-dir", data, "--model-url", url, "--model-name", "stand-in"]
    rc, stdout, err = cli(*args, "--output", out, "--lcb-samples", "1", "--lcb-k", "1", "--sandbox-timeout-s", "1")
    assert rc == 0, err
    assert "broken" in err and "unreadable test cases" in err
    window = figure(summary(out), "lcb", "2024.08-2025.05", 1)
    assert window["problems"] == 3 and abs(window["pass_at_k"] - 2 / 3) < 1e-6  # sum2 and power pass
    assert window["timeouts"] == 1  # spin
    skipped = json.loads((out / "skipped.json").read_text())
    assert [s["problem_id"] for s in skipped] == ["broken"] and "unreadable" in skipped[0]["reason"]
    assert "broken" in (out / "summary.md").read_text() and "timeouts" in stdout
