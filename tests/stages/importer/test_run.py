"""`synthgen import`: APPS/TACO-style, CodeContests-style and LiveCodeBench rows -> a finished contest
problems folder that `train --data` reads; tests are counted and reference solutions checked."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

APPS = [
    {  # stdin/stdout, a correct solution
        "problem_id": 1,
        "question": "Print the sum of two integers.",
        "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)\n"]),
        "input_output": json.dumps({"inputs": ["1 2\n", "5 5\n"], "outputs": ["3\n", "10\n"]}),
        "difficulty": "introductory",
        "starter_code": "",
    },
    {  # the given solution fails its own second test: rejected with the reason
        "problem_id": 2,
        "question": "Print twice the integer.",
        "solutions": json.dumps(["print(int(input()) + 2)\n"]),
        "input_output": json.dumps({"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}),
        "difficulty": "interview",
        "starter_code": "",
    },
    {  # call-based, outputs wrapped in one-item lists as APPS often does; the first solution is wrong
        "problem_id": 3,
        "question": "Return the square of n.",
        "solutions": json.dumps(["def square(n):\n    return n + n\n", "def square(n):\n    return n * n\n"]),
        "input_output": json.dumps({"fn_name": "square", "inputs": [[3], [4]], "outputs": [[9], [16]]}),
        "difficulty": "competition",
        "starter_code": "def square(n):\n    ",
    },
    {  # no tests at all
        "problem_id": 4,
        "question": "Nothing to check.",
        "solutions": "[]",
        "input_output": json.dumps({"inputs": [], "outputs": []}),
        "difficulty": "interview",
        "starter_code": "",
    },
]
CODECONTESTS = [
    {
        "name": "cc1",
        "description": "Print n reversed.",
        "public_tests": {"input": ["123\n"], "output": ["321\n"]},
        "private_tests": {"input": ["50\n", "7\n"], "output": ["05\n", "7\n"]},
        "generated_tests": {"input": ["1\n"], "output": ["1\n"]},
        "solutions": {"language": [2, 3], "solution": ["int main(){}", "print(input().strip()[::-1])"]},
        "cf_rating": 800,
    }
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_apps_rows_are_counted_checked_and_rejected_with_reasons(cli, tmp_path):
    src = write_jsonl(tmp_path / "apps.jsonl", APPS)
    rc, out, err = cli("import", src, "--output", tmp_path / "real")
    assert rc == 0, err
    assert "import: 2 of 4 problems" in out and "2 rejected" in out
    rejects = [json.loads(line) for line in (tmp_path / "real" / "rejects.jsonl").read_text().splitlines()]
    reasons = {r["key"]: r["reason"] for r in rejects}
    assert "reference solution fails its own tests" in reasons["2"] and "test 2" in reasons["2"]
    assert reasons["4"].startswith("bad_inputs")
    rows = pl.read_parquet(tmp_path / "real" / "*" / "*.parquet")
    assert sorted(rows["turn_id"]) == ["import/apps/1", "import/apps/3"] and set(rows["env"]) == {"contest"}
    square = rows.filter(pl.col("turn_id") == "import/apps/3").row(0, named=True)
    assert square["test_code"] == "square" and square["outputs"] == ["9", "16"]  # the unwrapped values passed
    assert "n * n" in square["code"] and square["difficulty"] == "hard"
    summary = json.loads((tmp_path / "real" / "import_summary.json").read_text())
    assert summary["kept"] == 2 and summary["tests_per_problem"]["mean"] == 2 and summary["checked_by_solution"] == 2


def test_codecontests_and_the_output_reads_as_a_finished_training_source(cli, tmp_path):
    from synthgen.train.data import load_problem_rows

    src = tmp_path / "cc.jsonl"
    write_jsonl(src, CODECONTESTS)
    rc, out, err = cli("import", src, "--output", tmp_path / "real", "--include-generated")
    assert rc == 0, err
    (row,) = load_problem_rows([tmp_path / "real"])
    assert row["env"] == "contest" and row["visible_count"] == 1 and len(row["inputs"]) == 4
    assert row["difficulty"] == "easy" and "[::-1]" in row["code"]


def test_nothing_importable_and_unknown_layouts_are_one_line(cli, tmp_path):
    rc, _, err = cli("import", write_jsonl(tmp_path / "x.jsonl", [{"foo": 1}]), "--output", tmp_path / "o")
    assert rc == 2 and "no problem of 1 could be imported" in err and "unknown layout" in err
    rc, _, err = cli("import", tmp_path / "missing.jsonl")
    assert rc == 2 and "not found" in err
    assert not (tmp_path / "o").exists()
