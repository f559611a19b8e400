"""The "Reproducing the paper" table (docs/reproducing.md, linked from the README), every row run in
order on tiny CPU settings.

The rows are read from that page; each command runs through the CLI in this process, changed
only as its "The same on a CPU, tiny" paragraph says: after the demo standing in for the
real run, a tiny model, the scripted server at the rows' address and a few TACO-style problems;
every `train` line on the tiny recipe for one step with local benchmark copies; `seeds
completions` (a tiny random model solves nothing) replaced by the real problems' reference
solutions; a `train` line that differs from an earlier one only in `--output` copied from it.
Then each row's own outputs are checked: every training output logged all three benchmarks and
recorded its settings, every page has its plots and one curve per training setting compared.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.helpers.benchmark_rows import write_benchmarks

pytestmark = [pytest.mark.slow, pytest.mark.train, pytest.mark.timeout(2400)]

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai/gpt-oss-120b"  # the model name the rows' generate lines ask for (generate's default)
TINY_TRAIN = ["--recipe", "tiny-cpu", "--model", "data/tiny-model", "--max-steps", "1"]
BENCH = ["--eval-benchmark-data-dir", "data/bench", "--eval-benchmark-samples", "lcb=2,math500=2,aime2024=2"]
BENCH += ["--eval-max-completion-length", "8"]
TACO = [  # TACO rows as the data set spells them: a question, solutions and tests as JSON text
    {
        "question": f"Read an integer n and print n + {k}.",
        "solutions": json.dumps([f"n = int(input())\nprint(n + {k})\n"]),
        "input_output": json.dumps({"inputs": ["1\n", "5\n"], "outputs": [f"{1 + k}\n", f"{5 + k}\n"]}),
        "difficulty": ("EASY", "MEDIUM", "HARD")[k % 3],
        "starter_code": "",
    }
    for k in range(6)
]


def paper_rows() -> list[tuple[str, list[str]]]:
    """(the paper's figure or table, its commands) for every row of the page's table."""
    section = (ROOT / "docs" / "reproducing.md").read_text()
    assert "(docs/reproducing.md)" in (ROOT / "README.md").read_text()  # the README links the page
    rows = []
    for line in section.splitlines():
        if not line.startswith("| ") or line.startswith("| paper |"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, line
        rows.append((cells[0], re.findall(r"`(synthgen [^`]+)`", cells[2])))
    return rows


def _flag_value(words: list[str], flag: str) -> str | None:
    return words[words.index(flag) + 1] if flag in words else None


def _without(words: list[str], flag: str) -> list[str]:
    if flag not in words:
        return words
    i = words.index(flag)
    return words[:i] + words[i + 2 :]


def adapt(line: str, url: str) -> list[str]:
    """A row's command as the page's CPU paragraph says it runs here (argv after `synthgen`)."""
    words = shlex.split(line)[1:]
    words = [url if w.startswith("http://") else w for w in words]
    expanded: list[str] = []
    for word in words:
        expanded += (sorted(glob.glob(word)) or [word]) if "*" in word else [word]
    words = expanded
    if words[:2] == ["seeds", "completions"]:
        return ["seeds", "solutions", "data/taco/solutions.jsonl", *words[3:]]
    if words[0] == "train" and "--recipe" in words:
        words = _without(_without(words, "--recipe"), "--eval-every") + TINY_TRAIN + ["--eval-every", "1"]
        if "--per-env" in words:
            words[words.index("--per-env") + 1] = str(int(_flag_value(words, "--per-env")) // 5000)
        if "--eval-benchmarks" in words:
            words += BENCH
    return words


def run_cli(argv: list[str]) -> tuple[int, str]:
    from synthgen.cli.app import app, run_guarded

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = run_guarded(app, argv)
    return rc, err.getvalue()


def _write_inputs(work: Path) -> None:
    (work / "seeds").symlink_to(ROOT / "seeds")  # the rows name seeds/examples/ in the repository
    taco = work / "data" / "taco"
    taco.mkdir(parents=True)
    (taco / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TACO))
    solutions = [{"code": json.loads(r["solutions"])[0]} for r in TACO]
    (taco / "solutions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in solutions))
    more = work / "data" / "more-real"  # Fig. 3's other real sets, beside TACO
    more.mkdir(parents=True)
    extra = [
        {**r, "question": r["question"].replace("n +", "n -"), "solutions": r["solutions"].replace("n +", "n -")}
        for r in TACO
    ]
    for r, k in zip(extra, range(6)):
        r["input_output"] = json.dumps({"inputs": ["1\n", "5\n"], "outputs": [f"{1 - k}\n", f"{5 - k}\n"]})
    (more / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in extra))
    write_benchmarks(work / "data" / "bench")


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """Every row run in order in one workspace: {row: [(argv, rc, stderr), ...]}."""
    pytest.importorskip("trl")
    pytest.importorskip("matplotlib")
    pytest.importorskip("math_verify")
    from synthgen.demo.scripted.launch import start_scripted_server

    rows = paper_rows()
    work = tmp_path_factory.mktemp("paper")
    _write_inputs(work)
    results: dict[str, list[tuple[list[str], int, str]]] = {}
    trained: dict[str, str] = {}  # a train command without its --output -> the output that holds it
    with contextlib.chdir(work), start_scripted_server(mode="process", seed=0, models=(MODEL,)) as server:
        for argv in (["demo", "--run-dir", "data/runs/exp1"], ["train", "--make-tiny-model", "data/tiny-model"]):
            rc, err = run_cli(argv)
            assert rc == 0, f"{argv}: {err[-3000:]}"
        for row, commands in rows:
            results[row] = []
            for line in commands:
                argv = adapt(line, server.url)
                output = _flag_value(argv, "--output") if argv[0] == "train" else None
                same = json.dumps(_without(argv, "--output")) if output else None
                if same in trained:
                    shutil.copytree(trained[same], output)
                    results[row].append((argv, 0, f"copied from {trained[same]}"))
                    continue
                rc, err = run_cli(argv)
                results[row].append((argv, rc, err))
                if rc != 0:
                    break
                if same:
                    trained[same] = output
        yield work, results


ROWS = [row for row, _ in paper_rows()]


def test_the_table_covers_the_papers_figures_and_tables():
    rows = paper_rows()
    figures = {int(n) for row, _ in rows if row.startswith("Fig") for n in re.findall(r"\d+", row)}
    tables = {int(n) for row, _ in rows if row.startswith("Table") for n in re.findall(r"\d+", row)}
    assert figures >= set(range(1, 24)) and tables == {1, 2, 3, 4}, (sorted(figures), sorted(tables))
    assert all(commands for _, commands in rows), [row for row, commands in rows if not commands]


@pytest.mark.parametrize("row", ROWS)
def test_each_row_runs_on_tiny_settings(ran, row):
    work, results = ran
    for argv, rc, err in results[row]:
        assert rc == 0, f"{row}: `synthgen {' '.join(argv)}` failed:\n{err[-3000:]}"
        if argv[0] == "train" and "--output" in argv:
            out = work / _flag_value(argv, "--output")
            summary = json.loads((out / "train_summary.json").read_text())
            assert summary["global_step"] == 1 and summary["settings"]["seed"] == 0
            logged = (out / "eval_pass_at_k.csv").read_text()
            assert all(f",{suite}," in logged for suite in ("lcb", "math500", "aime2024")), logged
        if argv[0] in ("compare", "report"):
            page = (work / _flag_value(argv, "--output")).read_text()
            assert page.count('<img src="data:image/png;base64,') >= 1
        if argv[0] == "compare":
            trainings = [a for a in argv[1:] if (work / a / "train_summary.json").is_file()]
            assert page.count("<td>training</td>") == len(trainings), argv  # one curve per setting
            if any((work / a / "generate").is_dir() for a in argv[1:]):
                assert re.search(r"[0-9.]+x</td>", page), "no multi-turn / single-turn ratio"
