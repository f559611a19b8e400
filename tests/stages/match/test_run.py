"""`synthgen match`: one set subsampled to another's pass-rate histogram per environment, the distance
before and after, and a folder `train --data` reads."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow.parquet as pq

from synthgen.stages.match.run import bucket, distance, fit
from synthgen.store import records
from synthgen.train.data import bin_counts, load_problem_rows
from tests.helpers.problem_rows import problem_row


def _rows(env: str, rates: list[float], tag: str) -> list[dict]:
    rows = []
    for i, rate in enumerate(rates):
        code = f"def f(x):\n    return x + {i}  # {tag}\n"
        rows.append(
            problem_row(
                turn_id=f"{tag}/{env}/{i}",
                problem_id=records.problem_id(env, code, [str(i)], tag),
                seed_id=tag,
                lineage_id=f"{tag}-{i}",
                env=env,
                code=code,
                inputs=[str(i)],
                outputs=[str(i)],
                pass_rate=rate,
                difficulty="kept",
            )
        )
    return rows


def _write(folder, rows):
    folder.mkdir(parents=True)
    pq.write_table(records.table_from_rows(rows, records.with_fields(records.PROBLEMS, [])), folder / "p.parquet")
    return folder


def test_fit_keeps_the_largest_set_with_the_targets_shares():
    source = Counter({1: 10, 16: 40, 30: 50})
    target = Counter({1: 1, 16: 2, 30: 1})
    assert fit(source, target) == {1: 10, 16: 20, 30: 10}
    assert distance(Counter({1: 10, 16: 20, 30: 10}), target) == 0.0
    assert fit(Counter({5: 3}), Counter({9: 1})) == {}  # nothing in common
    assert bucket(0.5, 32) == 16 and bucket(1.0, 32) == 32 and bucket(1 / 32, 32) == 1


def test_match_subsamples_per_environment_and_trains(cli, tmp_path):
    # The source is mostly easy; the target is balanced between hard and medium, per environment.
    source = _rows("deduction", [0.9] * 30 + [0.5] * 6 + [0.125] * 4, "src") + _rows("induction", [0.5] * 8, "srci")
    source += _rows("fuzzing", [0.5] * 3, "srcf")  # the target has no fuzzing: left out
    target = _rows("deduction", [0.5] * 2 + [0.125] * 2, "tgt") + _rows("induction", [0.5] * 2 + [0.25], "tgti")
    src, tgt = _write(tmp_path / "src", source), _write(tmp_path / "tgt", target)
    out = tmp_path / "matched"
    rc, _, err = cli("match", src, "--like", tgt, "--output", out)
    assert rc == 0, err
    report = json.loads((out / "match.json").read_text())
    ded, ind = report["envs"]["deduction"], report["envs"]["induction"]
    assert ded["kept"] == 8 and ded["distance_after"] == 0.0 and ded["distance_before"] > 0.5
    # The target's 0.25 bucket is absent from the source: it stays in the distance, said so.
    assert ind["kept"] == 8 and ind["buckets_missing"] == [8] and ind["distance_after"] == round(1 / 3, 4)
    assert "1 target bucket(s) absent from the source" in err
    assert report["left_out_envs"] == ["fuzzing"] and "left out fuzzing" in err
    assert "before" in err and "after" in err
    rows = load_problem_rows([out])
    assert bin_counts(rows) == {"src": 16}  # each row keeps the split its source gave it
    ded_rates = Counter(r["pass_rate"] for r in rows if r["env"] == "deduction")
    assert ded_rates == {0.5: 4, 0.125: 4}
    # The same inputs and seed give the same set; another seed may pick other problems of a bucket.
    again = tmp_path / "again"
    assert cli("match", src, "--like", tgt, "--output", again)[0] == 0
    assert pq.read_table(again / "part-00000.parquet").equals(pq.read_table(out / "part-00000.parquet"))


def test_bad_inputs_are_one_line(cli, tmp_path):
    tgt = _write(tmp_path / "tgt", _rows("deduction", [0.5], "t"))
    rc, _, err = cli("match", tmp_path / "nope", "--like", tgt, "--output", tmp_path / "o")
    assert rc == 2 and "not found" in err and err.count("\n") == 1
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x.txt").write_text("x")
    rc, _, err = cli("match", tgt, "--like", tgt, "--output", tmp_path / "busy")
    assert rc == 2 and "not empty" in err
