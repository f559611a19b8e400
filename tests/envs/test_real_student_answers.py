"""Where a person reads why a real student's answer could not be read: `generate --keep-attempts all`
through the CLI, the scripted teacher's valid problems, and a student that answers with what
SmolLM2-135M-Instruct wrote (tests/envs/test_parsing.py keeps the texts). Each kept attempt's
`detail`, and the row's failed examples that the next teacher turn reads, carry the sentence
that says what the answer holds instead of the block its environment asks for."""

from __future__ import annotations

import shutil

import polars as pl

from synthgen.store.attempts import read_attempts
from synthgen.store.layout import StageDir
from tests.envs import test_parsing as real
from tests.helpers.evals import ChoiceResponder

# env -> (what its student prompt asks for, the real answer given, the detail a person reads)
ANSWERS = {
    "induction": (
        "block that defines `f`",
        real.REAL_UNCLOSED_WITH_PROSE,
        "no closed ```python block with a function f; the answer has an unclosed ```python block",
    ),
    "deduction": (
        "```output block",
        real.REAL_SEVERAL_VALUES,
        "the ```output block holds 2 lines that each read as a value (one is asked for): "
        "[1, 'Ahhaa'] (integer repr) [2, '(\\')'] [3, ' (\\')']['abc'] (list repr) [[1, ...",
    ),
    "abduction": (
        "Any arguments that produce this value",
        real.REAL_PROSE_ONLY,
        "no closed ```input block with the arguments; the answer has no fenced block at all (prose only)",
    ),
    "fuzzing": (
        "exposes the bug",
        real.REAL_BASH_BLOCK,
        "no closed ```input block with the arguments; the answer has a ```bash block",
    ),
}


def _student(prompt: str, index: int) -> str:
    del index
    (answer,) = [text for asks, text, _ in ANSWERS.values() if asks in prompt]
    return answer


def test_generate_keeps_a_readable_reason_for_each_unreadable_real_answer(
    cli, scripted_server, serve, seeds_run, tmp_path
):
    run = tmp_path / "run"
    shutil.copytree(seeds_run / "seeds", run / "seeds")
    teacher, student = scripted_server(), serve(ChoiceResponder(_student), models=["student"])
    rc, _, err = cli(
        "generate", "--run-dir", run, "--turns", "1", "--attempts", "2", "--no-progress", "--keep-attempts", "all",
        "--teacher-url", teacher.url, "--student-url", student.url, "--student-model", "student",
    )  # fmt: skip
    assert rc == 0, err
    attempts = pl.from_arrow(read_attempts(run))
    assert set(attempts["env"]) == set(ANSWERS), attempts["env"].to_list()  # every environment answered
    for row in attempts.iter_rows(named=True):
        assert (row["status"], row["detail"]) == ("format", ANSWERS[row["env"]][2]), row
    valid = StageDir(run, "generate").read().filter(pl.col("valid"))
    for row in valid.iter_rows(named=True):
        assert row["failed_examples"] == [f"(unreadable answer: {ANSWERS[row['env']][2]})"], row["failed_examples"]
