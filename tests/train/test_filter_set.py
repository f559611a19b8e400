"""`train --data RUN/filter`: the filter's kept set as one split, the paper's "all synthetic" set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthgen.store.layout import StageDir
from synthgen.train.data import KEPT_SPLIT, bin_counts, load_problem_rows
from tests.helpers.train import write_generated
from tests.train.grpo_worker import fake_prompt

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def filtered(tmp_path_factory):
    from synthgen.cli.app import app, run_guarded

    run_dir = tmp_path_factory.mktemp("filtered")
    write_generated(run_dir)
    assert run_guarded(app, ["filter", "--run-dir", str(run_dir), "--no-dedup"]) == 0
    return run_dir


def test_a_filter_folder_is_one_split_of_every_kept_problem(filtered):
    kept = StageDir(filtered, "filter").read()
    rows = load_problem_rows([filtered / "filter"])
    assert bin_counts(rows) == {KEPT_SPLIT: kept.height} and kept.height == 7
    assert {r["problem_id"] for r in rows} == set(kept["problem_id"])
    # 1-3 of 32 solved: kept by the filter, below every broad bin, and in the training set.
    assert sum(r["pass_rate"] < 0.10 for r in rows) == 3
    # The rejects beside the kept rows never train.
    assert not {r["problem_id"] for r in rows} & set(StageDir(filtered, "filter/rejects").read()["problem_id"])


def test_an_unfinished_filter_folder_is_refused(filtered, tmp_path, cli):
    import shutil

    from synthgen.errors import UserError

    copy = tmp_path / "run"
    shutil.copytree(filtered, copy)
    (copy / "filter" / "kept.done").unlink()
    with pytest.raises(UserError, match="not finished|no finished"):
        load_problem_rows([copy / "filter"])


@pytest.mark.slow
@pytest.mark.train
def test_grpo_trains_on_every_kept_problem_and_logs_its_solved_completions(filtered, tiny_model, tmp_path):
    pytest.importorskip("trl")
    from synthgen.train.run import run
    from synthgen.train.settings import TrainSettings

    drawn: list[str] = []
    solved: list[tuple[str, str]] = []

    def scorer(rows, completions, truncated):
        drawn.extend(r["problem_id"] for r in rows)
        solved.extend((r["problem_id"], c) for i, (r, c) in enumerate(zip(rows, completions)) if i % 2)
        assert {r["difficulty"] for r in rows} == {KEPT_SPLIT}
        return [float(i % 2) for i in range(len(rows))]

    out = tmp_path / "out"
    settings = TrainSettings(
        data=[str(filtered / "filter")],
        model=str(tiny_model),
        output=str(out),
        recipe=str(ROOT / "recipes" / "tiny-cpu.yaml"),
        max_steps=4,
        save_completions="solved",
    )
    run(settings, scorer=scorer, prompt_fn=fake_prompt)
    kept = set(StageDir(filtered, "filter").read()["problem_id"])
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["bins"] == {KEPT_SPLIT: len(kept)}
    assert set(drawn) <= kept and len(set(drawn)) > 1
    # Every solved completion (reward 1) is logged with its problem and reward, per round.
    import polars as pl

    logged = pl.read_parquet(out / "completions" / "*.parquet")
    assert (logged["reward"] == 1.0).all() and set(logged["difficulty"]) == {KEPT_SPLIT}
    assert sorted(zip(logged["problem_id"], logged["completion"])) == sorted(solved)
    assert sorted(set(logged["round"])) == [0, 1, 2, 3]
