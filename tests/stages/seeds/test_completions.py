"""`synthgen seeds completions OUTPUT`: the solved completions a training run logged, as whole seeds."""

from __future__ import annotations

import polars as pl

from synthgen.store.layout import StageDir
from synthgen.train.completions import CompletionLog

LONG = "def f(xs):\n" + "".join(f"    x{i} = sum(xs) + {i}\n" for i in range(80)) + "    return x79\n"
ROWS = [{"problem_id": f"p{i}", "env": "induction", "difficulty": "hard"} for i in range(5)]
TEXTS = [
    f"Here it is:\n```python\n{LONG}```",  # solved, 82 lines: kept whole
    "```python\ndef g(x):\n    return x + 1\n```",  # solved
    "```python\ndef h(x):\n    return x - 1\n```",  # wrong: left out
    "The answer is 42.",  # solved, but no code
    "```python\ndef broken(:\n```",  # solved, does not parse
]
REWARDS = [1.0, 1.0, 0.0, 1.0, 1.0]


def test_solved_completions_become_whole_seeds(cli, tmp_path):
    out = tmp_path / "train"
    log = CompletionLog(out, "all")
    log.write(0, 1, ROWS, TEXTS, REWARDS)
    log.write(1, 2, ROWS[:1], [TEXTS[2]], [None])  # infra: never a seed
    run = tmp_path / "run"
    rc, _, err = cli("seeds", "completions", out, "--run-dir", run, "--n", "10")
    assert rc == 0, err
    seeds = StageDir(run, "seeds").read()
    assert seeds.height == 2 and set(seeds["source"]) == {"completions"}
    texts = sorted(seeds["text"].to_list(), key=len)
    assert texts[0].startswith("def g(x)") and texts[1].rstrip("\n") == LONG.rstrip("\n")
    assert seeds.filter(pl.col("num_lines") > 50).height == 1  # whole, past the 25-50-line windows


def test_no_logged_completions_is_one_line(cli, tmp_path):
    (tmp_path / "train").mkdir()
    rc, _, err = cli("seeds", "completions", tmp_path / "train", "--run-dir", tmp_path / "run")
    assert rc == 2 and "--save-completions solved" in err and err.count("\n") == 1, err
