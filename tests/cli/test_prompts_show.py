"""`synthgen prompts show`: the exact messages of a turn, from a seed, a problem file or a stored run."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS

EXAMPLES = Path(__file__).resolve().parents[2] / "seeds" / "examples"
CODE = "def f(xs):\n    return sorted(set(xs))[-2]"


def stored_run(tmp_path: Path) -> Path:
    """A run with one generate part holding a valid abduction row and its student summary columns."""
    from synthgen.envs.problem import Problem
    from synthgen.sandbox import values

    run = tmp_path / "run"
    problem = Problem("abduction", CODE, ["[4, 9, 1, 9]"], outputs=[values.encode(4)])
    row = dict.fromkeys(PROBLEMS.names)
    row.update(problem.to_fields())
    row.update(
        turn_id="s/abduction/0:t2",
        seed_id="s",
        lineage_id="s/abduction/0",
        env="abduction",
        mode="multi",
        turn=2,
        valid=True,
        reason="ok",
        pass_rate=0.25,
        attempts=32,
        scored=32,
        correct=8,
        format_failures=1,
        infra_failures=0,
        solved_examples=["[7, 4]"],
        failed_examples=["[4]", "[9, 9]"],
        strategy="harder",
        teacher_tokens_in=0,
        teacher_tokens_out=0,
        student_tokens_in=0,
        student_tokens_out=0,
        teacher_model="m",
        student_model="m",
        settings_hash="h",
    )
    StageDir(run, "generate").write_part("shard-00000-of-00001", 0, pa.Table.from_pylist([row], schema=PROBLEMS), {})
    return run, problem.problem_id


def test_first_turn_on_the_built_in_sample_and_on_a_seed_file(cli, tmp_path):
    rc, out, err = cli("prompts", "show", "--env", "induction", "--kind", "first")
    assert rc == 0, err
    assert out.startswith("===== user =====\n") and "def merge_ranges(ranges):" in out and "5 different inputs" in out
    seed = tmp_path / "seed.py"
    seed.write_text("int main() { return 42; }\n")
    rc, out, _ = cli("prompts", "show", "--env", "deduction", "--seed-file", seed, "--feedback", "format_error: oops")
    assert rc == 0 and "int main() { return 42; }" in out and "format_error: oops" in out


def test_mutate_from_a_stored_row_rebuilds_its_summary(cli, tmp_path):
    run, pid = stored_run(tmp_path)
    rc, out, err = cli(
        "prompts", "show", "--env", "abduction", "--kind", "mutate", "--run-dir", run, "--problem-id", pid
    )
    assert rc == 0, err
    assert CODE in out and "- f([4, 9, 1, 9]) -> 4" in out
    assert "Make the next puzzle somewhat easier. The student solved it 8 of 32 times, a pass rate of 0.250." in out
    assert "Solved example 1:\n```\n[7, 4]\n```" in out and "Failed example 2:\n```\n[9, 9]\n```" in out
    assert "1 answers could not be read" in out
    rc, out, _ = cli(
        "prompts",
        "show",
        "--env",
        "abduction",
        "--kind",
        "mutate",
        "--run-dir",
        run,
        "--problem-id",
        pid,
        "--pass-rate",
        "0.9",
        "--json",
    )
    (message,) = json.loads(out)
    assert message["role"] == "user" and "Make the next puzzle harder." in message["content"]
    assert "solved it 29 of 32 times, a pass rate of 0.906" in message["content"]


def test_the_config_file_moves_the_progression_boundaries(cli, tmp_path):
    run, pid = stored_run(tmp_path)
    config = tmp_path / "run.yaml"
    config.write_text("generate:\n  progression: {easier_at: 0.3}\n")
    rc, out, err = cli(
        "--config",
        config,
        "prompts",
        "show",
        "--env",
        "abduction",
        "--kind",
        "mutate",
        "--run-dir",
        run,
        "--problem-id",
        pid,
    )
    assert rc == 0, err
    assert "Make the next puzzle easier. The student solved it 8 of 32 times" in out and "never solved" not in out


def test_chain_uses_the_chain_bands_and_its_two_texts(cli, tmp_path):
    run, pid = stored_run(tmp_path)
    base = ("prompts", "show", "--env", "abduction", "--kind", "chain", "--run-dir", run, "--problem-id", pid)
    rc, out, err = cli(*base)
    assert rc == 0, err
    assert "Turn this hard puzzle into a medium one" in out and "between 0.41 and 0.59" in out
    rc, out, _ = cli(*base, "--strategy", "chain-easy")
    assert rc == 0 and "Turn this medium puzzle into an easy one" in out and "between 0.81 and 0.91" in out


def test_student_messages_for_a_stored_problem(cli, tmp_path):
    run, pid = stored_run(tmp_path)
    rc, out, err = cli("prompts", "show", "--env", "abduction", "--student", "--run-dir", run, "--problem-id", pid)
    assert rc == 0, err
    assert "Find arguments for which `f` returns exactly this value:\n4\n" in out and "[4, 9, 1, 9]" not in out


def test_mutate_from_a_problem_file(cli):
    problem = EXAMPLES / "induction" / "problem.json"
    rc, _, err = cli("prompts", "show", "--env", "induction", "--kind", "mutate", "--problem", problem)
    assert rc == 2 and "needs the student's pass rate" in err
    rc, out, err = cli(
        "prompts",
        "show",
        "--env",
        "induction",
        "--kind",
        "mutate",
        "--problem",
        problem,
        "--pass-rate",
        "0",
        "--strategy",
        "similar",
    )
    assert rc == 0 and "Keep the level" in out and "never solved it: 0 correct out of 32" in out, err


def test_bad_requests_are_one_line_errors(cli, tmp_path):
    run, pid = stored_run(tmp_path)
    problem = EXAMPLES / "deduction" / "problem.json"
    cases = [
        (("--env", "golf"), "unknown environment 'golf'"),
        (("--env", "deduction", "--kind", "rewrite"), "'rewrite' is not one of 'first', 'mutate', 'chain'"),
        (("--env", "deduction", "--kind", "mutate"), "this needs a problem"),
        (("--env", "deduction", "--problem", problem), "starts from a seed"),
        (
            (
                "--env",
                "deduction",
                "--kind",
                "mutate",
                "--problem",
                problem,
                "--pass-rate",
                "0.5",
                "--strategy",
                "wild",
            ),
            "unknown mutate strategy 'wild'",
        ),
        (("--env", "deduction", "--kind", "chain", "--problem", problem, "--run-dir", run), "not both"),
        (("--env", "deduction", "--kind", "chain", "--run-dir", run), "go together"),
        (
            ("--env", "deduction", "--kind", "chain", "--run-dir", run, "--problem-id", pid),
            "belongs to the abduction environment",
        ),
        (("--env", "abduction", "--kind", "chain", "--run-dir", run, "--problem-id", "nope"), "no problem 'nope'"),
        (
            ("--env", "abduction", "--kind", "chain", "--run-dir", tmp_path / "none", "--problem-id", "x"),
            "run directory not found",
        ),
        (("--env", "abduction", "--seed-file", tmp_path / "missing.py"), "cannot read"),
    ]
    for args, needle in cases:
        rc, _, err = cli("prompts", "show", *args)
        assert rc == 2 and needle in err and err.count("\n") == 1, (args, err)


def test_a_parquet_row_given_as_problem_keeps_its_summary(cli, tmp_path):
    run, pid = stored_run(tmp_path)
    part = StageDir(run, "generate").parts()[0]
    rc, out, err = cli("prompts", "show", "--env", "abduction", "--kind", "mutate", "--problem", f"{part}:{pid}")
    assert rc == 0, err
    assert "solved it 8 of 32 times, a pass rate of 0.250" in out and "Solved example 1:\n```\n[7, 4]\n```" in out


@pytest.mark.parametrize(
    "rate, says, never",
    [
        (
            "1.0",
            ["32 of those were correct", "No attempt was wrong.", "No correct answer is shown."],
            "No attempt was correct",
        ),
        (
            "0",
            ["0 of those were correct", "No attempt was correct.", "No wrong answer is shown."],
            "No attempt was wrong",
        ),
    ],
)
def test_a_made_up_pass_rate_reads_consistently(cli, rate, says, never):
    problem = EXAMPLES / "deduction" / "problem.json"
    rc, out, err = cli(
        "prompts", "show", "--env", "deduction", "--kind", "mutate", "--problem", problem, "--pass-rate", rate
    )
    assert rc == 0, err
    assert all(words in out for words in says) and never not in out
