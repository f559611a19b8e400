"""How sure a pass rate is (the Wilson interval) and how it was measured (provenance), from
generate's rows through bin --confident and bin's refusal to mix measurements."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import polars as pl
import pytest

from synthgen import __version__
from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.measurement import describe, measurements, wilson, wilson_exprs, with_intervals
from synthgen.store.records import PROBLEMS, problem_id, table_from_rows
from tests.helpers.problem_rows import problem_row


def test_wilson_matches_its_closed_form_at_the_ends_and_in_the_middle():
    z2 = 1.959963984540054**2
    assert wilson(0, 10) == (0.0, pytest.approx(z2 / (10 + z2)))  # k = 0: upper edge z^2 / (n + z^2)
    low, high = wilson(10, 10)
    assert high == 1.0 and low == pytest.approx(10 / (10 + z2))
    low, high = wilson(16, 32)
    assert low == pytest.approx(1 - high) and 0.33 < low < 0.34  # symmetric about 0.5
    assert wilson(0, 0) == (None, None)
    wide, narrow = wilson(4, 8), wilson(400, 800)
    assert wide[1] - wide[0] > 5 * (narrow[1] - narrow[0])  # about sqrt(100) narrower
    frame = pl.DataFrame({"k": [0, 3, 8, 0], "n": [8, 8, 8, 0]})
    lo, hi = wilson_exprs(pl.col("k"), pl.col("n"))
    got = frame.select(lo.alias("lo"), hi.alias("hi")).rows()
    for (k, n), pair in zip(frame.rows(), got):
        want = wilson(k, n)
        assert all((a is None and b is None) or math.isclose(a, b) for a, b in zip(pair, want))


def test_rows_without_an_interval_get_it_from_pass_rate_and_scored():
    df = pl.DataFrame({"pass_rate": [0.25, None], "scored": [32, 0], "pass_rate_low": [None, None]})
    out = with_intervals(df)
    assert out["pass_rate_low"][0] == pytest.approx(wilson(8, 32)[0])
    assert out["pass_rate_high"].to_list()[1] is None


def _row(i: int, p: float, scored: int = 32, measured: str | None = "m1", **extra) -> dict:
    code = f"def f(x):\n    return x + {i}\n"
    low, high = wilson(round(p * scored), scored)
    return problem_row(
        turn_id=f"s{i}/induction/l{i}/1",
        problem_id=problem_id("induction", code, ["1"], None),
        seed_id=f"s{i}",
        lineage_id=f"l{i}",
        env="induction",
        code=code,
        inputs=["1"],
        outputs=["2"],
        pass_rate=p,
        scored=scored,
        correct=round(p * scored),
        pass_rate_low=low,
        pass_rate_high=high,
        measured_by=measured,
        student_effort="low",
        **extra,
    )


def _kept(run: Path, rows: list[dict]) -> None:
    kept = StageDir(run, "filter")
    kept.write_part("kept", 0, table_from_rows(rows, PROBLEMS), file_metadata("filter", "f0"))
    kept.mark_done("kept", {"settings_hash": "f0", "rows": len(rows)})


def test_confident_keeps_only_intervals_inside_their_bin_and_the_summary_counts_straddlers(cli, tmp_path):
    run = tmp_path / "run"
    # medium is [0.26, 0.61): 0.4 of 1000 is sure, 0.5 of 8 reaches both edges, 0.3 of 32 reaches 0.26.
    _kept(run, [_row(0, 0.4, 1000), _row(1, 0.5, 8), _row(2, 0.3, 32), _row(3, 0.9, 1000)])
    rc, _, err = cli("bin", "--run-dir", run)
    assert rc == 0, err
    summary = json.loads((run / "bin" / "summary.json").read_text())
    assert summary["straddling"]["medium"] == 2 and summary["straddling_total"] == 2
    assert summary["bins"]["medium"]["written"] == 3
    assert "2 problems straddle a bin boundary" in err and "--confident leaves them out" in err
    rc, _, err = cli("bin", "--run-dir", run, "--confident", "--force")
    assert rc == 0, err
    summary = json.loads((run / "bin" / "summary.json").read_text())
    assert summary["confident"] is True and summary["bins"]["medium"] == {
        "range": "[0.26, 0.61)",
        "matched": 3,
        "written": 1,
    }
    medium = pl.read_parquet(run / "bin" / "medium" / "*.parquet")
    assert medium["pass_rate"].to_list() == [0.4]
    assert (medium["pass_rate_low"] >= 0.26).all() and (medium["pass_rate_high"] <= 0.61).all()


def test_bin_refuses_to_mix_measurements_in_one_bin_unless_told(cli, tmp_path):
    run = tmp_path / "run"
    rows = [_row(0, 0.4, measured="m1", student_model="big"), _row(1, 0.45, measured="m2", student_model="small")]
    rows.append(_row(2, 0.9, measured="m2", student_model="small"))
    _kept(run, rows)
    rc, out, err = cli("bin", "--run-dir", run)
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "'medium' would mix pass rates measured 2 ways" in err and "big" in err and "small" in err
    assert not (run / "bin").exists()
    rc, _, err = cli("bin", "--run-dir", run, "--mix-measurements")
    assert rc == 0, err
    summary = json.loads((run / "bin" / "summary.json").read_text())
    assert {m["measured_by"]: m["rows"] for m in summary["measurements"]} == {"m1": 1, "m2": 2}
    # One measurement per bin is no mix, even when bins differ.
    _kept(run, [_row(0, 0.4, measured="m1"), _row(2, 0.9, measured="m2")])
    rc, _, err = cli("bin", "--run-dir", run, "--force")
    assert rc == 0, err


def test_describe_names_the_student_and_how():
    row = {"student_model": "gpt-oss-120b", "student_effort": "low", "student_temperature": 1.0, "attempts": 32}
    row |= {"sandbox_isolation": "bwrap", "student_endpoint": ["http://a/v1"], "synthgen_version": "0.1.0"}
    text = describe(row)
    assert text.startswith("gpt-oss-120b (effort low, temperature 1, M=32, sandbox bwrap, at http://a/v1")
    assert measurements(pl.DataFrame({"pass_rate": [0.5]})) == [{"measured_by": None, "rows": 1}]


def test_generated_rows_carry_their_interval_and_provenance(cli, seeds_run, tmp_path, scripted_server):
    server = scripted_server()
    run = tmp_path / "run"
    shutil.copytree(seeds_run / "seeds", run / "seeds")
    args = ["--attempts", "8", "--turns", "2", "--lineages-per-seed", "2", "--max-seeds", "2", "--no-progress"]
    rc, _, err = cli("generate", "--run-dir", run, "--base-url", server.url, *args)
    assert rc == 0, err
    rows = StageDir(run, "generate").read()
    valid = rows.filter(pl.col("valid"))
    assert valid.height > 0
    for row in valid.iter_rows(named=True):
        assert (row["pass_rate_low"], row["pass_rate_high"]) == pytest.approx(wilson(row["correct"], row["scored"]))
        assert row["pass_rate_low"] <= row["pass_rate"] <= row["pass_rate_high"]
        assert row["student_endpoint"] == server.url and row["student_effort"] == "low"
        assert row["student_temperature"] == 1.0 and row["synthgen_version"] == __version__
        assert row["sandbox_isolation"] in {"bwrap", "rlimits-only"}
    assert valid["measured_by"].n_unique() == 1 and valid["measured_by"].null_count() == 0
    invalid = rows.filter(~pl.col("valid"))
    assert invalid["pass_rate_low"].null_count() == invalid.height
    # Every valid problem also got its mutation score (synthgen.envs.mutation), and the stats file
    # says what it cost in the sandbox.
    assert valid["mutation_score"].null_count() == 0 and (valid["mutants"] > 0).all()
    assert (valid["mutants_caught"] <= valid["mutants"]).all()
    assert invalid["mutation_score"].null_count() == invalid.height
    stats = json.loads(next((run / "generate").glob("stats-*.json")).read_text())
    assert 0 < stats["mutation_sandbox_s"] < stats["sandbox_busy_s"]
