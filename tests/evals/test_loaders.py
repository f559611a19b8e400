"""LiveCodeBench, Math500 and AIME2024 loaders on small files in each data set's real layout (written
here), scored end to end through `synthgen eval` against a stand-in server; and the offline message."""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

import pytest

from synthgen.evals.lcb import decode_tests, to_problem
from tests.helpers.evals import figure, summary


def packed(tests: list[dict]) -> str:
    """LiveCodeBench's private-test encoding: JSON text, pickled, zlib-compressed, base64."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def lcb_row(qid, date, difficulty, public, private, starter="", func=None, compress=True, content="Solve it."):
    return {
        "question_title": qid,
        "question_content": content,
        "platform": "leetcode" if func else "atcoder",
        "question_id": qid,
        "contest_id": "c1",
        "contest_date": f"{date}T00:00:00",
        "starter_code": starter,
        "difficulty": difficulty,
        "public_test_cases": json.dumps(public),
        "private_test_cases": packed(private) if compress else json.dumps(private),
        "metadata": json.dumps({"func_name": func} if func else {}),
    }


def stdin_test(i, o):
    return {"input": i, "output": o, "testtype": "stdin"}


def call_test(i, o):
    return {"input": i, "output": o, "testtype": "functional"}


ROWS = [
    lcb_row(
        "sum2",
        "2024-09-01",
        "easy",
        [stdin_test("1 2\n", "3\n")],
        [stdin_test("5 7\n", "12\n"), stdin_test("0 0\n", "0\n")],
        content="Print the sum of A and B.",
    ),
    lcb_row(
        "maxpair",
        "2024-12-01",
        "medium",
        [call_test("[1, 5, 3]", "5")],
        [call_test("[-4, -2]", "-2"), call_test("[7]", "7")],
        starter="class Solution:\n    def biggest(self, nums: List[int]) -> int:\n        ",
        func="biggest",
        content="Return the largest number.",
    ),
    lcb_row(
        "hard1",
        "2023-06-10",
        "hard",
        [stdin_test("3\n", "6\n")],
        [stdin_test("4\n", "24\n")],
        compress=False,
        content="Print n factorial.",
    ),
    lcb_row("old", "2022-01-01", "easy", [stdin_test("1\n", "1\n")], [], content="Too old for any split."),
]
ANSWERS = {
    "Print the sum": "```python\na, b = map(int, input().split())\nprint(a + b)\n```",
    "Return the largest": "```python\nclass Solution:\n    def biggest(self, nums: List[int]) -> int:\n"
    "        return max(nums)\n```",
    "Print n factorial": "```python\nprint(int(input()) * 2)\n```",  # right on the public test only
}


def lcb_answer(text: str, i: int) -> str:
    return next(a for k, a in ANSWERS.items() if k in text)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_private_tests_decode_without_running_pickle_code(tmp_path):
    assert decode_tests(packed([stdin_test("1\n", "2\n")])) == [stdin_test("1\n", "2\n")]
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            import os

            return (os.system, (f"touch {marker}",))

    hostile = base64.b64encode(zlib.compress(pickle.dumps(Evil()))).decode()
    with pytest.raises(pickle.UnpicklingError, match="refused global"):
        decode_tests(hostile)
    assert not marker.exists()
    not_a_string = base64.b64encode(zlib.compress(pickle.dumps([1, 2]))).decode()
    with pytest.raises(ValueError, match="not a string"):
        decode_tests(not_a_string)


def test_lcb_rows_become_contest_problems():
    stdin = to_problem(ROWS[0])
    assert stdin.env == "contest" and stdin.inputs == ["'1 2\\n'", "'5 7\\n'", "'0 0\\n'"] and stdin.visible_count == 1
    call = to_problem(ROWS[1])
    assert call.inputs == ["[1, 5, 3]", "[-4, -2]", "[7]"] and call.test_code == "biggest" and call.outputs[0] == "5"


def test_lcb_splits_and_scores_end_to_end(cli, stand_in, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "lcb.jsonl", ROWS)
    url = stand_in(lcb_answer)
    rc, out, err = cli(
        "eval",
        "--benchmarks",
        "lcb",
        "--data-dir",
        data,
        "--model-url",
        url,
        "--model-name",
        "stand-in",
        "--output",
        tmp_path / "out",
        "--lcb-samples",
        "2",
        "--lcb-k",
        "1",
        "--lcb-k",
        "2",
        "--sandbox-timeout-s",
        "5",
    )
    assert rc == 0, err
    rows = summary(tmp_path / "out")
    window = figure(rows, "lcb", "2024.08-2025.05", 1)
    assert (window["problems"], window["pass_at_k"]) == (2, 1.0)  # sum2 and maxpair, both solved
    assert figure(rows, "lcb", "v5-medium", 1)["pass_at_k"] == 1.0
    assert figure(rows, "lcb", "v5-hard", 2)["pass_at_k"] == 0.0  # the hidden test catches it
    easy = figure(rows, "lcb", "v5-easy", 1)
    assert (easy["problems"], easy["pass_at_k"]) == (1, 1.0)  # sum2 only: the 2022 problem is in no split
    assert "(2.0 samples)" not in out and "2024.08-2025.05" in out
    assert (tmp_path / "out" / "summary.md").read_text().startswith("| model |")
    # A re-run finds the finished units and sends no request.
    rc, _, err = cli(
        "eval",
        "--benchmarks",
        "lcb",
        "--data-dir",
        data,
        "--model-url",
        url,
        "--model-name",
        "stand-in",
        "--output",
        tmp_path / "out",
        "--lcb-samples",
        "2",
        "--lcb-k",
        "1",
        "--lcb-k",
        "2",
        "--sandbox-timeout-s",
        "5",
    )
    assert rc == 0 and "finished earlier" in err


MATH = [
    {
        "problem": "What is one half, as a fraction?",
        "solution": "...",
        "answer": "\\frac{1}{2}",
        "subject": "Algebra",
        "level": 1,
        "unique_id": "test/algebra/1.json",
    },
    {
        "problem": "What is 6 times 7?",
        "solution": "...",
        "answer": "42",
        "subject": "Prealgebra",
        "level": 2,
        "unique_id": "test/prealgebra/2.json",
    },
]
MATH_ANSWERS = {"one half": "The answer is \\boxed{0.5}.", "6 times 7": "So we get \\boxed{41}."}


def math_answer(text: str, i: int) -> str:
    return next(a for k, a in MATH_ANSWERS.items() if k in text)


def test_math_answers_are_checked_by_the_verifier_not_by_string_equality(cli, stand_in, tmp_path):
    pytest.importorskip("math_verify")
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp_path / "data"
    data.mkdir()
    write_jsonl(data / "math500.jsonl", MATH)
    # AIME2024 in another mirror's spelling of the columns (ID / Problem / Answer), as Parquet.
    pq.write_table(
        pa.Table.from_pylist([{"ID": "2024-I-1", "Problem": "What is one half?", "Answer": "0.5"}]),
        data / "aime2024.parquet",
    )
    rc, _, err = cli(
        "eval",
        "--benchmarks",
        "math500,aime2024",
        "--data-dir",
        data,
        "--model-url",
        stand_in(math_answer),
        "--model-name",
        "stand-in",
        "--output",
        tmp_path / "out",
        "--math500-samples",
        "2",
        "--math500-k",
        "1",
        "--aime2024-samples",
        "3",
        "--aime2024-k",
        "1",
    )
    assert rc == 0, err
    rows = summary(tmp_path / "out")
    assert figure(rows, "math500", "level-1", 1)["pass_at_k"] == 1.0  # \frac{1}{2} vs 0.5: right
    assert figure(rows, "math500", "level-2", 1)["pass_at_k"] == 0.0  # 41 vs 42: wrong
    assert figure(rows, "math500", "all", 1)["pass_at_k"] == 0.5
    assert figure(rows, "aime2024", "all", 1)["pass_at_k"] == 1.0


def test_offline_without_a_local_copy_is_one_line_naming_the_data_set(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    rc, _, err = cli("eval", "--benchmarks", "math500", "--model-url", "http://127.0.0.1:9/v1", "--output", tmp_path)
    assert rc == 2 and err.count("\n") == 1, err
    assert "HuggingFaceH4/MATH-500" in err and "--data-dir" in err and "math500.parquet" in err


def test_bad_eval_settings_are_one_line(cli, tmp_path):
    rc, _, err = cli("eval", "--benchmarks", "mbpp", "--output", tmp_path)
    assert rc == 2 and "unknown benchmark 'mbpp'" in err
    rc, _, err = cli("eval", "--benchmarks", "heldout", "--output", tmp_path)
    assert rc == 2 and "--heldout-paths" in err
    rc, _, err = cli("eval", "--lcb-samples", "4", "--lcb-k", "10", "--output", tmp_path)
    assert rc == 2 and "every k must be between 1 and --lcb-samples (4)" in err


def test_heldout_items_are_one_split_per_env_and_bin_each_a_seeded_choice(tmp_path):
    from synthgen.evals.run import benchmark_items
    from synthgen.evals.settings import HeldoutSettings
    from tests.helpers.train import write_binned

    folder = write_binned(tmp_path, n=5)
    bench = HeldoutSettings(paths=f"{folder / 'easy'},{folder / 'medium'}", max_problems=3)
    items = benchmark_items("heldout", bench, None, None, None, None, seed=1)
    assert [i.splits for i in items] == [("deduction/easy",)] * 3 + [("deduction/medium",)] * 3
    assert {i.benchmark for i in items} == {"heldout"} and "def f(x)" in items[0].messages[-1]["content"]
    again = benchmark_items("heldout", bench, None, None, None, None, seed=1)
    assert [i.problem_id for i in again] == [i.problem_id for i in items]
