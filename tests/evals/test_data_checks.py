"""Benchmark files are checked before anything is scored: `--data-dir` means offline (a missing
file is one line naming it, the hub is never asked), and a column of the wrong type is one line
naming the file, the row and the column, with nothing written."""

from __future__ import annotations

import json
import sys
import types

import pytest


@pytest.fixture
def no_hub(monkeypatch):
    """A `datasets` module that records any attempt to load from the hub."""
    calls = []
    fake = types.ModuleType("datasets")
    fake.load_dataset = lambda *args, **kwargs: calls.append(args) or []
    monkeypatch.setitem(sys.modules, "datasets", fake)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    return calls


def _eval(cli, tmp_path, benchmark, data):
    out = tmp_path / "out"
    rc, _, err = cli(
        "eval", "--benchmarks", benchmark, "--data-dir", data, "--model-url", "http://127.0.0.1:9/v1", "--output", out
    )
    return rc, err, out


def _written(out):
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) if out.exists() else []


@pytest.mark.parametrize("benchmark", ["math500", "aime2024", "lcb", "humaneval"])
def test_data_dir_without_the_file_is_one_line_and_never_asks_the_hub(cli, tmp_path, no_hub, benchmark):
    data = tmp_path / "data"
    data.mkdir()
    rc, err, out = _eval(cli, tmp_path, benchmark, data)
    assert rc == 2 and err.count("\n") == 1, err
    assert str(data / f"{benchmark}.jsonl") in err and "Traceback" not in err
    assert no_hub == [] and _written(out) == []


@pytest.mark.parametrize(
    ("benchmark", "row", "column"),
    [
        ("math500", {"problem": 5, "answer": [1]}, "problem"),
        ("math500", {"problem": "What is 1+1?", "answer": [2]}, "answer"),
        ("aime2024", {"Problem": "What is 1+1?", "Answer": {"x": 2}}, "Answer"),
        ("humaneval", {"task_id": "t/0", "prompt": 7, "test": "", "entry_point": "f"}, "prompt"),
        ("lcb", {"question_content": "Solve it.", "public_test_cases": 3}, "public_test_cases"),
        ("lcb", {"question_content": ["Solve", "it"]}, "question_content"),
    ],
)
def test_a_column_of_the_wrong_type_is_one_line_naming_file_and_column(cli, tmp_path, no_hub, benchmark, row, column):
    data = tmp_path / "data"
    data.mkdir()
    good = {"math500": {"problem": "What is 2?", "answer": "2"}, "aime2024": {"Problem": "2?", "Answer": 2}}
    rows = [good[benchmark], row] if benchmark in good else [row]
    (data / f"{benchmark}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc, err, out = _eval(cli, tmp_path, benchmark, data)
    assert rc == 2 and err.count("\n") == 1, err
    assert str(data / f"{benchmark}.jsonl") in err and f"row {len(rows)}" in err and repr(column) in err
    assert no_hub == [] and _written(out) == []
