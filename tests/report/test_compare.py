"""`synthgen compare RUN_OR_OUTPUT...`: one HTML page of the paper's comparisons across runs, curves
averaged over runs that differ only in seed; bad inputs are one line and exit 2."""

from __future__ import annotations

import base64
import csv
import json
import re
from pathlib import Path

import pytest

from tests.helpers.benchmark_rows import write_benchmarks
from tests.helpers.problem_rows import problem_row

pytest.importorskip("matplotlib", reason="compare needs the plot extra (matplotlib)")

EVAL_FIELDS = ["step", "suite", "split", "problems", "samples", "k", "pass_at_k"]
CUMULATIVE_FIELDS = [
    "round",
    "step",
    "bin",
    "problems",
    "seen",
    "solved_ever",
    "cumulative_solve_rate",
    "solved_of_seen",
]


def write_train_output(
    folder: Path, data: str, seed: int, rates: dict[str, list[float]], settings: bool = True
) -> Path:
    """A training output as `synthgen train` leaves it: the two CSVs and the summary with its settings."""
    folder.mkdir(parents=True)
    with open(folder / "eval_pass_at_k.csv", "w", newline="") as fh:
        out = csv.DictWriter(fh, EVAL_FIELDS)
        out.writeheader()
        for split, values in rates.items():
            for step, value in enumerate(values, start=1):
                out.writerow(
                    {
                        "step": step,
                        "suite": "heldout",
                        "split": split,
                        "problems": 4,
                        "samples": 2,
                        "k": 1,
                        "pass_at_k": value,
                    }
                )
    with open(folder / "bin_solve_rates_cumulative.csv", "w", newline="") as fh:
        out = csv.DictWriter(fh, CUMULATIVE_FIELDS)
        out.writeheader()
        for split, values in rates.items():
            for step, value in enumerate(values):
                out.writerow(
                    {
                        "round": step,
                        "step": step,
                        "bin": split,
                        "problems": 4,
                        "seen": 4,
                        "solved_ever": 0,
                        "cumulative_solve_rate": value,
                        "solved_of_seen": value,
                    }
                )
    summary = {"global_step": 3}
    if settings:
        summary["settings"] = {"data": [data], "curriculum": "soft", "seed": seed, "eval": {"samples": 2}}
    (folder / "train_summary.json").write_text(json.dumps(summary))
    return folder


def images(html: str) -> list[str]:
    sources = re.findall(r'<img src="([^"]+)"', html)
    for src in sources:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    return sources


def test_runs_that_differ_only_in_seed_are_one_curve_with_its_spread(cli, tmp_path):
    chains = [
        write_train_output(tmp_path / f"chains-s{s}", "runs/exp1/chain", s, {"easy": [0.1, v], "hard": [0.0, v / 2]})
        for s, v in ((0, 0.2), (1, 0.4))
    ]
    disjoint = write_train_output(tmp_path / "disjoint", "runs/exp1/chain/disjoint", 0, {"easy": [0.1, 0.3]})
    out = tmp_path / "page.html"
    rc, _, err = cli("compare", *chains, disjoint, "--output", out)
    assert rc == 0, err
    html = out.read_text()
    assert len(images(html)) == 2  # heldout pass@k, cumulative solve rates; no generate run given
    assert not re.search(r'(src|href)="(?!data:|#)', html) and "<script" not in html
    # Two curves, named by the setting that tells them apart; the seeds pair up.
    assert "data=chain (2 seeds)" in html and "data=chain/disjoint" in html
    # At the last step: the chains' mean 0.300 and standard deviation 0.100 over their two seeds.
    row = re.search(r"data=chain \(2 seeds\)</td><td>heldout easy pass@1</td><td>2</td>(.*?)</tr>", html, re.S)
    assert row and re.findall(r">([0-9.]+)<", row.group(1)) == ["0.300", "0.100", "2"], row
    assert "No generate run given" in html


def test_a_folder_of_outputs_and_an_output_still_training(cli, tmp_path):
    write_train_output(tmp_path / "outputs" / "a", "d", 0, {"easy": [0.5]})
    write_train_output(tmp_path / "outputs" / "b", "d", 1, {"easy": [0.7]}, settings=False)  # no summary settings yet
    out = tmp_path / "page.html"
    rc, _, err = cli("compare", tmp_path / "outputs", "--output", out)
    assert rc == 0, err
    html = out.read_text()
    assert html.count("<td>training</td>") == 2  # the run without settings is a curve of its own


def write_generate_run(cli, run: Path, mode: str, kept_per_seed: int, seed: int) -> Path:
    """A generate stage of 4 seeds (turns 1-2 multi-turn, or turn 1 single-turn) and its filter."""
    from synthgen.store.files import file_metadata
    from synthgen.store.layout import StageDir
    from synthgen.store.records import PROBLEMS, problem_id, table_from_rows

    rows = []
    for s in range(4):
        for i in range(3):
            turn = 1 + (i % 2) if mode == "multi" else 1
            code = f"def f(x):\n    return x * {s * 10 + i + seed * 100} + {turn}\n"
            lineage = f"{mode}{s}" if mode == "multi" else f"{mode}{s}:s{i}"
            rows.append(
                problem_row(
                    turn_id=f"s{s}/deduction/{lineage}/{turn}-{i}",
                    problem_id=problem_id("deduction", code, ["1"], None),
                    seed_id=f"s{s}",
                    lineage_id=lineage,
                    env="deduction",
                    mode=mode,
                    turn=turn,
                    code=code,
                    inputs=["1"],
                    outputs=["1"],
                    pass_rate=0.5 if i < kept_per_seed else 0.0,  # pass rate 0 is dropped by the filter
                )
            )
    settings = {
        "seed": seed,
        "turns": 2 if mode == "multi" else 1,
        "single_turn": 3 if mode == "single" else 0,
        "attempts": 32,
    }
    stage = StageDir(run, "generate")
    stage.write_part(
        "shard-00000-of-00001",
        0,
        table_from_rows(rows, PROBLEMS),
        file_metadata("generate", "g", {"settings": settings}),
    )
    stage.mark_done("shard-00000-of-00001", {"settings_hash": "g"})
    rc, _, err = cli("filter", "--run-dir", run, "--no-dedup")
    assert rc == 0, err
    return run


def test_multi_turn_over_single_turn_yield_across_runs(cli, tmp_path):
    multi = [write_generate_run(cli, tmp_path / f"multi-{s}", "multi", k, s) for s, k in ((0, 2), (1, 3))]
    single = write_generate_run(cli, tmp_path / "single", "single", 1, 0)
    out = tmp_path / "page.html"
    rc, _, err = cli("compare", *multi, single, "--output", out)
    assert rc == 0, err
    html = out.read_text()
    assert len(images(html)) == 1  # the yield figure; no training output given
    # Multi-turn: 2 and 3 kept per seed (mean 2.5) over two seeds; single-turn: 1 kept per seed.
    assert re.search(
        r"<td class=\"n\">2\.500</td>\s*<td class=\"n\">1\.000</td>\s*<td class=\"n\">2\.50x</td>", html
    ), html
    assert "No training output here logged" in html


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: p / "missing", "not found"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "neither a training output"),
        (lambda p: (p / "file.txt").write_text("x") and p / "file.txt", "is a file"),
        (lambda p: write_train_output(p / "t", "d", 0, {}), "nothing to plot"),
    ],
    ids=["missing", "empty-folder", "a-file", "nothing-logged"],
)
def test_bad_inputs_are_one_line_and_exit_2(cli, tmp_path, make, words):
    out = tmp_path / "page.html"
    rc, _, err = cli("compare", make(tmp_path), "--output", out)
    assert rc == 2 and words in err and err.count("\n") == 1, err
    assert not out.exists()


def test_no_input_is_exit_2(cli):
    rc, _, err = cli("compare")
    assert rc == 2 and err.count("\n") == 1, err


@pytest.fixture(scope="module")
def chains_vs_disjoint(demo_run, tmp_path_factory):
    """Two CPU training runs on the demo's chains and on their disjoint baseline, logging pass@k on
    LiveCodeBench and Math500 (local copies) at every step."""
    import os
    import subprocess
    import sys

    pytest.importorskip("trl")
    pytest.importorskip("math_verify")
    from synthgen.train.tiny import make_tiny_model

    root = tmp_path_factory.mktemp("compare-train")
    model = make_tiny_model(root / "model")
    bench = write_benchmarks(root / "bench", ("lcb", "math500"))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    outputs = []
    for name, data in (("chains", demo_run / "chain"), ("disjoint", demo_run / "chain" / "disjoint")):
        out = root / name
        argv = [sys.executable, "-m", "synthgen", "train", "--data", str(data), "--model", str(model)]
        argv += ["--recipe", "tiny-cpu", "--curriculum", "soft", "--max-steps", "2", "--output", str(out)]
        argv += ["--eval-every", "1", "--eval-benchmarks", "lcb,math500", "--eval-benchmark-data-dir", str(bench)]
        argv += ["--eval-benchmark-samples", "lcb=2,math500=2", "--eval-max-completion-length", "8"]
        argv += ["--report-to", "none"]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs.append(out)
    return outputs


@pytest.mark.slow
@pytest.mark.train
def test_chains_against_disjoint_in_a_headless_browser(cli, chains_vs_disjoint, demo_run, tmp_path):
    from tests.helpers.browser import check_page

    page_file = tmp_path / "compare.html"
    rc, _, err = cli("compare", *chains_vs_disjoint, demo_run, "--output", page_file)
    assert rc == 0, err
    html = page_file.read_text()
    # pass@k of LiveCodeBench and of Math500, the cumulative solve rates, the yield per turn.
    assert len(images(html)) == 4
    assert "<h3>lcb</h3>" in html and "<h3>math500</h3>" in html
    assert "data=chain</td>" in html and "data=chain/disjoint</td>" in html  # the curves, named by their data
    check_page(page_file, tmp_path, title="synthgen compare", images=4, colours=100)
