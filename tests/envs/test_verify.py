"""`synthgen verify` on the hand-written examples in seeds/examples, on Parquet rows, and on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthgen.settings.base import ENV_NAMES

EXAMPLES = Path(__file__).resolve().parents[2] / "seeds" / "examples"


@pytest.mark.parametrize("env", ENV_NAMES)
def test_examples_score_one(cli, env):
    rc, out, err = cli("verify", "--env", env, EXAMPLES / env / "problem.json", EXAMPLES / env / "answer.txt")
    assert rc == 0, err
    assert "validation: ok" in out and "parsed answer:" in out
    assert out.rstrip().splitlines()[-1].startswith("reward: 1 (ok)")


def test_env_defaults_to_the_problem_field(cli):
    rc, out, _ = cli("verify", EXAMPLES / "deduction" / "problem.json", EXAMPLES / "deduction" / "answer.txt")
    assert rc == 0 and "gold output: [(2, 'a'), (3, 'b')]" in out


def test_wrong_and_unreadable_answers(cli, tmp_path):
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("```output\n[(3, 'b'), (2, 'a')]\n```\n")
    rc, out, _ = cli("verify", EXAMPLES / "deduction" / "problem.json", wrong)
    assert rc == 0 and out.rstrip().endswith("reward: 0 (ok) differs from the gold output")
    junk = tmp_path / "junk.txt"
    junk.write_text("no idea")
    rc, out, _ = cli("verify", EXAMPLES / "abduction" / "problem.json", junk)
    assert rc == 0 and "parsed answer: none" in out and "reward: 0 (format)" in out
    rc, out, _ = cli(
        "verify", "--truncated", EXAMPLES / "abduction" / "problem.json", EXAMPLES / "abduction" / "answer.txt"
    )
    assert rc == 0 and "reward: 0 (format) the answer was cut off" in out


def test_invalid_problem_is_reported_not_scored(cli, tmp_path):
    problem = json.loads((EXAMPLES / "induction" / "problem.json").read_text())
    problem["code"] = "import os\n" + problem["code"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(problem))
    rc, out, _ = cli("verify", path, EXAMPLES / "induction" / "answer.txt")
    assert rc == 0 and "validation: forbidden (imports os)" in out and "reward: n/a" in out


def test_parquet_row(cli, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for i, env in enumerate(ENV_NAMES):
        row = json.loads((EXAMPLES / env / "problem.json").read_text())
        rows.append(
            {
                "turn_id": f"seed/{env}/0/1",
                "problem_id": f"p{i}",
                "env": env,
                "code": row["code"],
                "inputs": row["inputs"],
                "message": row.get("message"),
                "pre_test_code": row.get("pre_test_code"),
                "test_code": row.get("test_code"),
                "visible_count": None,
            }
        )
    path = tmp_path / "part-00000.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    rc, out, err = cli("verify", f"{path}:2", EXAMPLES / "deduction" / "answer.txt")
    assert rc == 0 and "reward: 1 (ok)" in out, err
    rc, out, _ = cli("verify", f"{path}:seed/fuzzing/0/1", EXAMPLES / "fuzzing" / "answer.txt")
    assert rc == 0 and "reward: 1 (ok)" in out
    rc, _, err = cli("verify", f"{path}:9", EXAMPLES / "fuzzing" / "answer.txt")
    assert rc == 2 and "row 9 does not exist" in err
    rc, _, err = cli("verify", f"{path}:nope", EXAMPLES / "fuzzing" / "answer.txt")
    assert rc == 2 and "no row" in err


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: (d / "missing.json", EXAMPLES / "deduction" / "answer.txt"), "problem file not found"),
        (lambda d: (EXAMPLES / "deduction" / "problem.json", d / "missing.txt"), "answer file not found"),
        (lambda d: (_write(d / "bad.json", "{not json"), EXAMPLES / "deduction" / "answer.txt"), "not valid JSON"),
        (lambda d: (_write(d / "list.json", "[1, 2]"), EXAMPLES / "deduction" / "answer.txt"), "one JSON object"),
        (
            lambda d: (
                _write(d / "noenv.json", json.dumps({"code": "def f(x):\n    return x", "inputs": ["1"]})),
                EXAMPLES / "deduction" / "answer.txt",
            ),
            "pass --env",
        ),
        (
            lambda d: (
                _write(
                    d / "badin.json",
                    json.dumps({"env": "deduction", "code": "def f(x):\n    return x", "inputs": ["x + 1"]}),
                ),
                EXAMPLES / "deduction" / "answer.txt",
            ),
            "malformed input",
        ),
        (lambda d: (_write(d / "bad.parquet", "not parquet"), EXAMPLES / "deduction" / "answer.txt"), "name a row"),
        (
            lambda d: (
                Path(str(_write(d / "bad2.parquet", "not parquet")) + ":0"),
                EXAMPLES / "deduction" / "answer.txt",
            ),
            "cannot read",
        ),
    ],
)
def test_bad_input_exits_2(cli, tmp_path, make, message):
    problem, answer = make(tmp_path)
    rc, _, err = cli("verify", problem, answer)
    assert rc == 2 and message in err and err.count("\n") == 1


def test_env_flag_checks(cli):
    rc, _, err = cli(
        "verify", "--env", "poetry", EXAMPLES / "deduction" / "problem.json", EXAMPLES / "deduction" / "answer.txt"
    )
    assert rc == 2 and "unknown environment" in err
    rc, _, err = cli(
        "verify", "--env", "abduction", EXAMPLES / "deduction" / "problem.json", EXAMPLES / "deduction" / "answer.txt"
    )
    assert rc == 2 and "does not match" in err


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_an_imported_contest_problem_without_a_solution_verifies(cli, tmp_path):
    import json

    row = {
        "question": "Read n and print 2n.",
        "difficulty": "EASY",
        "input_output": json.dumps({"inputs": ["3\n", "5\n"], "outputs": ["6\n", "10\n"]}),
    }
    (tmp_path / "set.jsonl").write_text(json.dumps(row) + "\n")
    rc, _, err = cli("import", tmp_path / "set.jsonl", "--output", tmp_path / "real")
    assert rc == 0, err
    part = next((tmp_path / "real").rglob("part-*.parquet"))
    (tmp_path / "right.txt").write_text("```python\nn = int(input())\nprint(2 * n)\n```\n")
    (tmp_path / "wrong.txt").write_text("```python\nprint(input())\n```\n")
    rc, out, err = cli("verify", f"{part}:0", tmp_path / "right.txt")
    assert rc == 0 and "reward: 1" in out, err
    rc, out, _ = cli("verify", f"{part}:0", tmp_path / "wrong.txt")
    assert rc == 0 and "reward: 0" in out


def test_an_answer_that_reads_the_teachers_f_from_memory_scores_zero(cli, tmp_path):
    from tests.helpers.memory_probe import cheat_completion

    problem = EXAMPLES / "induction" / "problem.json"
    cheat = tmp_path / "cheat.txt"
    cheat.write_text(cheat_completion())
    for _ in range(3):  # each run validates the teacher's f in the sandbox first, then scores the answer
        rc, out, err = cli("verify", problem, cheat)
        assert rc == 0, err
        assert "validation: ok" in out and out.rstrip().splitlines()[-1].startswith("reward: 0 (ok)"), out
    # The control: the same answer carrying a copy of the teacher's f in its own text finds it and passes.
    teacher = json.loads(problem.read_text())["code"]
    control = tmp_path / "control.txt"
    control.write_text(cheat_completion().replace("\n```\n", f"\n_COPY = '''{teacher}'''\n```\n"))
    rc, out, err = cli("verify", problem, control)
    assert rc == 0 and out.rstrip().splitlines()[-1].startswith("reward: 1 (ok)"), out
