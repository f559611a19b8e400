"""Local copies of the evaluation benchmarks for tests: one LiveCodeBench problem, two Math500
problems (two levels) and one AIME2024 problem, as their data sets spell rows, written where
`--eval-benchmark-data-dir` (and `eval --data-dir`) read them. Importable from any test folder."""

from __future__ import annotations

import json
from pathlib import Path

LCB_ROW = {  # one stdin LiveCodeBench problem
    "question_title": "sum",
    "question_content": "Print the sum of A and B.",
    "platform": "atcoder",
    "question_id": "abc999_a",
    "contest_id": "abc999",
    "contest_date": "2024-10-05T00:00:00",
    "starter_code": "",
    "difficulty": "easy",
    "public_test_cases": json.dumps([{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]),
    "private_test_cases": json.dumps([{"input": "4 4\n", "output": "8\n", "testtype": "stdin"}]),
    "metadata": "{}",
}
MATH500_ROWS = [
    {"problem": "What is one half?", "answer": "\\frac{1}{2}", "level": 1, "unique_id": "a/1.json"},
    {"problem": "What is 6 times 7?", "answer": "42", "level": 2, "unique_id": "b/2.json"},
]
AIME2024_ROWS = [{"id": "2024-I-1", "problem": "What is 2 + 2?", "answer": "4"}]


def write_benchmarks(folder: Path, names=("lcb", "math500", "aime2024")) -> Path:
    """`folder/<name>.jsonl` for each benchmark named."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = {"lcb": [LCB_ROW], "math500": MATH500_ROWS, "aime2024": AIME2024_ROWS}
    for name in names:
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[name]))
    return folder
