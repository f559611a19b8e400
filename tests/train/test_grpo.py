"""GRPO steps on a tiny offline model: curriculum draws per step, infra exclusion, resume, torchrun."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

from tests.train.grpo_worker import FakeScorer, fake_prompt  # noqa: E402  (the repository root is on sys.path)

pytestmark = [pytest.mark.slow, pytest.mark.train]

ROOT = Path(__file__).resolve().parents[2]
RECIPE = str(ROOT / "recipes" / "tiny-cpu.yaml")
# Bins change every step: round r trains on step r (one generation round per step here).
PER_STEP = {"length": 4, "steps": {0: {"easy": 1}, 1: {"hard": 1}, 2: {"medium": 1, "easy_medium": 1}, 3: {"*": 1}}}
ALLOWED = [{"easy"}, {"hard"}, {"medium", "easy_medium"}, {"easy", "easy_medium", "medium", "hard"}]


def settings(out: Path, data: Path, model: Path, curriculum: str, **extra) -> dict:
    return {
        "data": [str(data)],
        "model": str(model),
        "curriculum": curriculum,
        "output": str(out),
        "recipe": RECIPE,
        "max_steps": 4,
        **extra,
    }


def train(cfg: dict) -> tuple[Path, FakeScorer]:
    from synthgen.train.run import run
    from synthgen.train.settings import TrainSettings

    scorer = FakeScorer()
    out = run(TrainSettings(**cfg), scorer=scorer, prompt_fn=fake_prompt)
    return out, scorer


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rounds(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "curriculum_metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def schedule_file(tmp_path_factory) -> str:
    import yaml

    path = tmp_path_factory.mktemp("sched") / "per-step.yaml"
    path.write_text(yaml.safe_dump(PER_STEP))
    return str(path)


@pytest.fixture(scope="module")
def run_a(tmp_path_factory, binned_dir, tiny_model, schedule_file):
    out = tmp_path_factory.mktemp("run-a") / "out"
    return train(settings(out, binned_dir, tiny_model, schedule_file))


def test_each_step_draws_from_its_scheduled_bins(run_a):
    out, scorer = run_a
    rows = rounds(out)
    assert [r["round"] for r in rows] == [0, 1, 2, 3] and [r["step"] for r in rows] == [0, 1, 2, 3]
    for row, allowed in zip(rows, ALLOWED):
        assert set(row["bins"]) <= allowed and sum(b["groups"] for b in row["bins"].values()) == 2
        assert row["split_groups"] == 0
    assert [{b for b, _ in call} for call in scorer.calls[:2]] == [{"easy"}, {"hard"}]
    csv_lines = (out / "bin_solve_rates_per_round.csv").read_text().splitlines()
    assert csv_lines[0].startswith("round,step,bin,weight,groups,solved,scored")
    assert any(line.startswith("0,0,easy,1.0,2,16,16,0,1.0") for line in csv_lines)


def test_infra_none_rewards_are_left_out(run_a):
    out, _ = run_a
    hard = rounds(out)[1]["bins"]["hard"]
    assert hard["infra"] == 8 and hard["scored"] == 8 and hard["solve_rate"] == 1.0
    logs = [json.loads(line) for line in (out / "trainer_log.jsonl").read_text().splitlines()]
    step2 = next(entry for entry in logs if entry["step"] == 2 and "reward" in entry)
    assert step2["reward"] == pytest.approx(1.0)  # None counted as 0 would give 0.5
    assert "entropy" in step2 and "clip_ratio/high_mean" in step2 and "curriculum/weight/hard" in step2


def test_checkpoints_and_state_are_written(run_a):
    out, _ = run_a
    for step in (2, 4):
        assert (out / f"checkpoint-{step}" / "trainer_state.json").exists()
        assert json.loads((out / f"checkpoint-{step}" / "curriculum_state.json").read_text())["next_round"] == step
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 4
    assert summary["bins"] == dict.fromkeys(("easy", "easy_medium", "hard", "medium"), 4)


def test_resume_continues_the_schedule_where_it_stopped(run_a, tmp_path, binned_dir, tiny_model, schedule_file):
    out_a, scorer_a = run_a
    out = tmp_path / "out"
    shutil.copytree(out_a, out)
    shutil.rmtree(out / "checkpoint-4")  # as if killed after step 2 was saved
    _, scorer = train(settings(out, binned_dir, tiny_model, schedule_file, resume=True))
    assert scorer.calls == scorer_a.calls[2:]  # the same problems, in the same order, for steps 3 and 4
    assert [r["round"] for r in rounds(out)] == [0, 1, 2, 3]  # rows of the lost rounds replaced, not doubled
    assert [r["bins"].keys() for r in rounds(out)] == [r["bins"].keys() for r in rounds(out_a)]
    for name in ("bin_solve_rates_cumulative.csv", "bin_solve_rates_per_round.csv"):  # restored, not restarted
        assert (out / name).read_text() == (out_a / name).read_text()


def test_frontier_resume_restores_its_statistics(tmp_path, binned_dir, tiny_model):
    # Extreme knobs so the weights follow the stats at once: only easy_medium has regret (1/0 groups).
    frontier = {"smoothing": 1.0, "floor": 0.0, "staleness": 0.0, "prior_regret": 0.0}
    full, scorer_full = train(
        settings(tmp_path / "full", binned_dir, tiny_model, "frontier", max_steps=6, frontier=frontier)
    )
    late = rounds(full)[-1]
    assert {b: w for b, w in late["weights"].items() if w > 0} == {"easy_medium": 1.0}
    assert set(late["bins"]) == {"easy_medium"}
    assert json.loads((full / "train_summary.json").read_text())["frontier_late_rounds"] == 0
    _, scorer = train(
        settings(
            tmp_path / "resumed",
            binned_dir,
            tiny_model,
            "frontier",
            max_steps=6,
            frontier=frontier,
            resume_from=str(full / "checkpoint-4"),
        )
    )
    assert scorer.calls == scorer_full.calls[4:]


def test_two_processes_with_torchrun(tmp_path, binned_dir, tiny_model, schedule_file):
    out = tmp_path / "out"
    cfg = tmp_path / "settings.json"
    cfg.write_text(json.dumps(settings(out, binned_dir, tiny_model, schedule_file)))
    torchrun = Path(sys.executable).parent / "torchrun"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [
            str(torchrun),
            "--nproc_per_node",
            "2",
            "--master_port",
            str(free_port()),
            str(Path(__file__).with_name("grpo_worker.py")),
            str(cfg),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = rounds(out)
    assert [r["round"] for r in rows] == [0, 1, 2, 3]
    for row, allowed in zip(rows, ALLOWED):
        # 2 processes x 16 completions = 4 prompt groups per round, none split across prompts.
        assert set(row["bins"]) <= allowed and sum(b["groups"] for b in row["bins"].values()) == 4
        assert row["split_groups"] == 0
    calls = [json.loads((out / f"scorer_calls_rank{r}.json").read_text()) for r in (0, 1)]
    for rank_calls in calls:  # each process scored its own half, from the scheduled bins
        assert [{b for b, _ in c} <= allowed for c, allowed in zip(rank_calls, ALLOWED)] == [True] * 4
    halves = [[{tuple(x) for x in c} for c in rank_calls] for rank_calls in calls]
    assert all(a != b for a, b in zip(*halves))  # each process scored its own share of the groups


def train_cli(*args) -> subprocess.CompletedProcess:
    """`synthgen train ARGS --recipe tiny-cpu` in a process of its own, as a user runs it."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "synthgen", "train", *map(str, args), "--recipe", RECIPE]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=240)


def test_cli_reverse_medium_with_real_environments(tmp_path, binned_dir, tiny_model):
    """The acceptance run: the CLI, env prompts and sandbox rewards, a checkpoint and per-bin metrics;
    what training writes: the model card names the base model, the final weights are written once,
    and a line says that reward 0 is what a tiny random model gets."""
    out = tmp_path / "out"
    proc = train_cli(
        "--data", binned_dir, "--model", tiny_model, "--curriculum", "reverse-medium", "--max-steps", "2",
        "--output", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (out / "checkpoint-2" / "curriculum_state.json").exists() and (out / "model.safetensors").exists()
    # The weights TRL saved in the last checkpoint are OUTPUT's weights, one file on disk under two names.
    assert (out / "model.safetensors").samefile(out / "checkpoint-2" / "model.safetensors")
    assert (out / "config.json").is_file() and (out / "tokenizer_config.json").is_file()
    assert not (out / "optimizer.pt").exists() and (out / "checkpoint-2" / "optimizer.pt").exists()
    card = (out / "README.md").read_text()
    assert "[None]" not in card and f"fine-tuned version of the local model `{tiny_model}`" in card
    assert f"synthgen: note: {tiny_model} is a tiny random model" in proc.stderr
    assert "reward 0 is expected" in proc.stderr
    # reverse-medium fitted to 2 steps: 17500 -> 1 and 20000 -> 1, so medium, then easy (= easy_medium).
    assert [set(r["bins"]) for r in rounds(out)] == [{"medium"}, {"easy_medium"}]
    assert all(b["scored"] + b["infra"] == 16 for r in rounds(out) for b in r["bins"].values())
    summary = json.loads((out / "train_summary.json").read_text())
    assert "dropped" in summary["schedule"] and summary["global_step"] == 2
    # One progress line per step instead of progress bars, metric dicts and library deprecation notices.
    assert "step 2/2 | reward" in proc.stderr and "clipped" in proc.stderr
    for noise in ("Loading weights", "Writing model shards", "is_gradient_checkpointing", "{'loss'", "it/s]"):
        assert noise not in proc.stderr + proc.stdout, noise
    assert list((out / "runs").glob("*/events.out.tfevents.*"))  # the default local tracker: tensorboard


def test_cli_missing_bins_share_trains_on_the_bins_present_after_one_short_line(tmp_path, tiny_model):
    from tests.helpers.train import write_binned

    data = write_binned(tmp_path / "data", bins=("easy", "medium"))
    out = tmp_path / "out"
    proc = train_cli(
        "--data", data, "--model", tiny_model, "--curriculum", "hard", "--missing-bins", "share", "--max-steps", "1",
        "--output", out,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    warning = [line for line in proc.stderr.splitlines() if "warning" in line.lower() and "bin" in line]
    assert len(warning) == 1 and warning[0].startswith("synthgen: warning: no hard bin") and len(warning[0]) < 140
    assert "easy (4), medium (4)" in warning[0]
    assert {b for r in rounds(out) for b in r["bins"]} <= {"easy", "medium"}
    assert json.loads((out / "train_summary.json").read_text())["missing_bins"] == ["hard"]


def test_cli_without_a_model_is_a_one_line_error(cli, binned_dir, tmp_path):
    rc, _, err = cli(
        "train",
        "--data",
        str(binned_dir),
        "--output",
        str(tmp_path / "o"),
        "--max-steps",
        "1",
        "--learning-rate",
        "1e-6",
    )
    assert rc == 2 and err.strip().count("\n") == 0 and "no model" in err
