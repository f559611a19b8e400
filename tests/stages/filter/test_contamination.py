"""The filter checks problems against the evaluation benchmarks synthgen loads (local copies here:
no network), by word n-grams and by MinHash, drops matches with their reason, and the card says
what was checked, against which versions, and how many matched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS, problem_id, table_from_rows
from tests.helpers.problem_rows import problem_row

HE_SOLUTION = (
    "    result = []\n    for index in range(len(numbers)):\n        for other in range(index + 1, len(numbers)):\n"
    "            if abs(numbers[index] - numbers[other]) < threshold:\n                return True\n    return False\n"
)
STATEMENT = (
    "You are given an array of integers called heights where each value is the height of a building standing in a "
    "row from west to east and you must report how many buildings can see the sunset over the ocean to the west "
    "given that a building sees it only when every building before it is strictly shorter than it is"
)


def _reworded(text: str, every: int = 12) -> str:
    """Every `every`-th word changed: no 13-word run survives, most 5-word shingles do."""
    words = text.split()
    return " ".join(f"{w}x" if i % every == every - 1 else w for i, w in enumerate(words))


def _data_dir(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    he = {
        "task_id": "HumanEval/0",
        "prompt": "def has_close_elements(numbers, threshold):\n",
        "canonical_solution": HE_SOLUTION,
        "test": "def check(candidate):\n    assert candidate([1.0, 2.0], 0.5) is False\n",
        "entry_point": "has_close_elements",
    }
    (root / "humaneval.jsonl").write_text(json.dumps(he) + "\n")
    lcb = [
        {"question_id": "abc300_a", "question_content": STATEMENT, "starter_code": "", "contest_date": "2024-10-05"},
        {"question_id": "old_1", "question_content": "sum the digits of n " * 4, "contest_date": "2023-01-01"},
    ]
    (root / "lcb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lcb))
    (root / "math500.jsonl").write_text(
        json.dumps({"unique_id": "m/1", "problem": "What is 1+1?", "solution": "2"}) + "\n"
    )
    return root


def _row(i: int, code: str, message: str) -> dict:
    return problem_row(
        turn_id=f"s{i}/induction/l{i}/1",
        problem_id=problem_id("induction", code, ["1"], message),
        seed_id=f"s{i}",
        lineage_id=f"l{i}",
        env="induction",
        code=code,
        inputs=["1", "2"],
        outputs=["1", "2"],
        message=message,
    )


def test_benchmark_copies_are_dropped_with_their_reason_and_counted_per_benchmark(cli, tmp_path):
    data = _data_dir(tmp_path / "benchmarks")
    rows = [
        _row(0, "def f(x):\n    return x * 3 + 1\n", "multiply by three and add one"),
        _row(1, "def f(numbers, threshold):\n" + HE_SOLUTION, "are two numbers closer than the threshold"),
        _row(2, "def f(h):\n    return len(h)\n", _reworded(STATEMENT)),
        _row(3, "def f(n):\n    return sum(map(int, str(n)))\n", "sum the digits of n " * 4),  # LCB, outside the window
    ]
    run = tmp_path / "run"
    gen = StageDir(run, "generate")
    gen.write_part("shard-00000-of-00001", 0, table_from_rows(rows, PROBLEMS), file_metadata("generate", "g"))
    gen.mark_done("shard-00000-of-00001", {"settings_hash": "g", "rows": len(rows)})
    args = ["--contamination-benchmarks", "humaneval,lcb,math500", "--contamination-data-dir", data]
    rc, _, err = cli("filter", "--run-dir", run, *args, "--contamination-minhash-threshold", "0.35", "--no-dedup")
    assert rc == 0, err
    rejects = pl.read_parquet(run / "filter" / "rejects" / "*.parquet")
    why = dict(rejects.select("turn_id", "reject_detail").iter_rows())
    assert set(rejects["reject_reason"]) == {"contaminated"} and set(why) == {rows[1]["turn_id"], rows[2]["turn_id"]}
    assert "13-gram overlap with humaneval:HumanEval/0" in why[rows[1]["turn_id"]]
    assert why[rows[2]["turn_id"]].startswith("MinHash Jaccard") and "lcb:abc300_a" in why[rows[2]["turn_id"]]
    stats = json.loads((run / "filter" / "stats.json").read_text())["contamination"]
    assert stats["contaminated"] == 2 and stats["minhash_matches"] == 2  # the copy matches both ways
    assert stats["benchmarks"]["lcb"]["texts"] == 1 and stats["benchmarks"]["lcb"]["window"] == "2024-08-01..2025-05-31"
    assert {k: v["matched"] for k, v in stats["benchmarks"].items()} == {"humaneval": 1, "lcb": 1, "math500": 0}
    assert stats["benchmarks"]["math500"]["dataset"] == "HuggingFaceH4/MATH-500"
    rc, _, err = cli("filter", "--run-dir", run, "--contamination-benchmarks", "mbpp", "--force")
    assert rc == 2 and "unknown benchmark 'mbpp'" in err


def test_the_card_states_what_was_checked_and_how_many_matched(cli, demo_run, tmp_path):
    pytest.importorskip("datasets")
    run = tmp_path / "demo"
    shutil.copytree(demo_run, run)
    data = _data_dir(tmp_path / "benchmarks")
    args = ["--contamination-benchmarks", "humaneval,math500,lcb", "--contamination-data-dir", data]
    for command in (["filter", "--run-dir", run, *args, "--force"], ["bin", "--run-dir", run, "--force"]):
        rc, _, err = cli(*command)
        assert rc == 0, err
    rc, _, err = cli("export", run, tmp_path / "out")
    assert rc == 0, err
    card = (tmp_path / "out" / "README.md").read_text()
    section = card.split("## Contamination")[1].split("\n## ")[0]
    assert "by word 13-gram overlap and MinHash (estimated Jaccard >= 0.7)" in section
    assert "| humaneval | `openai/human-eval (HumanEval.jsonl.gz)` (local copy) |" in section
    assert (
        "| lcb | `lighteval/code_generation_lite` (local copy) | release_latest | test "
        "| 2024-08-01..2025-05-31 | 1 | 0 |" in section
    )
    assert "dropped 0 matching problems" in section
    assert "No contamination check" not in card


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("refs.json", '{"rows": [{"prompt": "x"}]}', "must hold a JSON array of objects"),
        ("refs.json", '[{"prompt": "x"}, "y"]', "must hold a JSON array of objects"),
        ("refs.jsonl", '{"prompt": "x"}\nnot json\n', "line 2 is not JSON"),
        ("refs.jsonl", '{"prompt": "x"}\n["y"]\n', "line 2 is not a JSON object"),
        ("REFS.PARQUET", '{"prompt": "x"}\n', "Parquet input"),
    ],
)
def test_a_malformed_reference_file_is_one_line_naming_what_is_wrong(tmp_path, name, text, words):
    from synthgen.errors import UserError
    from synthgen.stages.filter.contamination import load_references

    (tmp_path / name).write_text(text)
    with pytest.raises(UserError, match=words):
        load_references([tmp_path / name], ["prompt"])
