"""Where a person reads why a real student's answer could not be read: `generate --keep-attempts all`
through the CLI, the scripted teacher's valid problems, and a student that answers with what
SmolLM2-135M-Instruct wrote (tests/envs/test_parsing.py keeps the texts). Each kept attempt's
`detail`, and the row's failed examples that the next teacher turn reads, carry the sentence
that says what the answer holds instead of the block its environment asks for."""

from __future__ import annotations

import json
import shutil

import polars as pl
from markupsafe import escape

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
    cli, scripted_server, serve, seeds_run, tmp_path, monkeypatch
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
    # ... and `stats` and `report` show those sentences with their counts, from every kept attempt.
    rc, out, err = cli("stats", run, "--json")
    assert rc == 0, err
    unreadable = json.loads(out)["student_format_failures"]
    assert unreadable["source"] == "every kept attempt" and unreadable["format_failures"] == attempts.height
    assert {detail for detail, _ in unreadable["reasons"]} == {detail for _, _, detail in ANSWERS.values()}
    assert sum(n for _, n in unreadable["reasons"]) == attempts.height
    monkeypatch.setenv("COLUMNS", "400")  # a console as wide as a Slurm log's: one line per reason
    rc, out, err = cli("stats", run)
    assert rc == 0, err
    shown = " ".join((out + err).split())
    assert f"why student answers could not be read ({attempts.height} format failures" in shown
    assert "no fenced block at all" in shown and "the answer has a ```bash block" in shown
    # Without kept attempts the rows' failed examples (a sample) stand in: the same sentences.
    shutil.rmtree(run / "generate-attempts")
    rc, out, err = cli("stats", run)
    assert rc == 0 and "reasons from the problems' failed examples" in " ".join((out + err).split()), out + err
    report = tmp_path / "report.html"
    rc, _, err = cli("report", run, "--output", report)
    assert rc == 0, err
    page = report.read_text()
    assert "Student answers that could not be read" in page
    for _, _, detail in ANSWERS.values():
        assert str(escape(detail)) in page, detail  # as the page escapes it (Jinja2, markupsafe)
