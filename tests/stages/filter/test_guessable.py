"""Chance levels end to end: a planted set (a coin-flip deduction, a broad-preimage abduction, a
memorisable induction, contest problems whose hidden tests repeat the public ones, a lax fuzzing
checker) and a sound control of each kind, through generate's scoring, `import` and `calibrate`;
`filter` drops exactly the planted ones as guessable, `bin` and `stats` read pass rates against
chance, and an older run without the columns still reads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.store.layout import StageDir
from synthgen.store.measurement import above_chance_expr, wilson
from tests.helpers.planted import CONTROLS, IMPORTED, PLANTED, PlantedResponder

ENVS = "induction,abduction,deduction,fuzzing,contest"


def _which(code: str, message: str | None) -> tuple[str, bool] | None:
    """(env, planted?) of a generated row, from the planted set's own code and message."""
    for planted, table in ((True, PLANTED), (False, CONTROLS)):
        for env, p in table.items():
            if p.problem.code.strip() == (code or "").strip() and (p.problem.message or None) == (message or None):
                return env, planted
    return None


def _assert_chance(row: dict, env: str, planted: bool) -> None:
    p = (PLANTED if planted else CONTROLS)[env]
    if p.drawn:  # a random strategy: the implied p lies in the 95% Wilson interval of its 40 draws
        from synthgen.envs.chance import DRAWS

        low, high = wilson(round(row["chance_rate"] * DRAWS), DRAWS)
        assert low <= p.chance <= high, (env, row["chance_rate"])
    else:
        assert row["chance_rate"] == p.chance, (env, planted, row["chance_rate"])
    assert row["chance_strategies"] == list(p.strategies), (env, planted)


@pytest.mark.slow
def test_planted_problems_through_generate_import_calibrate_and_filter(cli, seeds_run, tmp_path: Path, serve):
    server = serve(PlantedResponder())
    run = tmp_path / "run"
    shutil.copytree(seeds_run / "seeds", run / "seeds")
    # Two seeds x five lineages: each environment's lineage j of seed i is (i + j) mod 5, twice each.
    rc, _, err = cli(
        "generate", "--run-dir", run, "--base-url", server.url, "--envs", ENVS, "--attempts", "4", "--turns", "1",
        "--lineages-per-seed", "5", "--max-seeds", "2", "--no-progress",
    )  # fmt: skip
    assert rc == 0, err
    rows = StageDir(run, "generate").read()
    assert rows.height == 10 and rows["valid"].all(), rows.filter(~pl.col("valid"))["reason_detail"].to_list()
    seen = set()
    for row in rows.iter_rows(named=True):
        env, planted = _which(row["code"], row["message"])
        seen.add((env, planted))
        _assert_chance(row, env, planted)
        assert row["pass_rate"] == 0.5
    assert len(seen) == 10

    # filter at its default (0.5): exactly the planted problems go, as guessable.
    rc, _, err = cli("filter", "--run-dir", run, "--no-dedup")
    assert rc == 0, err
    kept = pl.read_parquet(run / "filter" / "kept.part-*.parquet")
    rejects = pl.read_parquet(run / "filter" / "rejects" / "*.parquet")
    assert {_which(c, m) for c, m in kept.select("code", "message").iter_rows()} == {(e, False) for e in PLANTED}
    assert {_which(c, m) for c, m in rejects.select("code", "message").iter_rows()} == {(e, True) for e in PLANTED}
    assert set(rejects["reject_reason"]) == {"guessable"}
    assert all("at or above 0.5" in d and "chance rate" in d for d in rejects["reject_detail"])
    stats = json.loads((run / "filter" / "stats.json").read_text())
    assert stats["reasons"]["guessable"] == 5 and stats["chance"] == {
        "max_chance_rate": 0.5,
        "guessable": 5,
        "unmeasured": 0,
    }

    # Real contest problems: the planted one's hidden test is its public one.
    src = tmp_path / "cc.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in IMPORTED))
    rc, out, err = cli("import", src, "--output", tmp_path / "real")
    assert rc == 0, err
    assert "1 problems earn the reward without solving" in out
    real = pl.read_parquet(tmp_path / "real" / "*" / "*.parquet")
    assert dict(real.select("turn_id", "chance_rate").iter_rows()) == {
        "import/cc/planted-import": 1.0,
        "import/cc/control-import": 0.0,
    }
    summary = json.loads((tmp_path / "real" / "import_summary.json").read_text())
    assert summary["chance"] == {"guessable": 1, "strategies": {"public-outputs": 1}}

    # calibrate both sets: the same chance levels, measured anew beside the new pass rates.
    both = tmp_path / "set"
    (both / "generated").mkdir(parents=True)
    for i, part in enumerate(StageDir(run, "generate").parts()):
        shutil.copy(part, both / "generated" / f"part-{i}.parquet")
    shutil.copytree(tmp_path / "real", both / "real")
    cal = tmp_path / "cal"
    rc, _, err = cli(
        "calibrate", "--run-dir", cal, "--input-dir", both, "--student-url", server.url, "--attempts", "4",
        "--no-progress",
    )  # fmt: skip
    assert rc == 0, err
    calibrated = StageDir(cal, "calibrate").read()
    assert calibrated.height == 12 and (calibrated["pass_rate"] == 0.5).all()
    for row in calibrated.iter_rows(named=True):
        if row["env"] == "contest" and row["turn_id"].startswith("import/"):
            planted = "planted" in row["turn_id"]
            assert row["chance_rate"] == (1.0 if planted else 0.0)
            assert row["chance_strategies"] == (["public-outputs"] if planted else [])
        else:
            _assert_chance(row, *_which(row["code"], row["message"]))
    rc, _, err = cli(
        "filter", "--run-dir", cal, "--input-dir", cal / "calibrate", "--no-dedup", "--max-chance-rate", "0.5"
    )
    assert rc == 0, err
    rejects = pl.read_parquet(cal / "filter" / "rejects" / "*.parquet")
    assert set(rejects["reject_reason"]) == {"guessable"} and rejects.height == 6
    assert "import/cc/planted-import" in rejects["turn_id"].to_list()
    assert pl.read_parquet(cal / "filter" / "kept.part-*.parquet").height == 6

    # bin and stats read the pass rates against chance.
    rc, out, err = cli("bin", "--run-dir", cal, "--input-dir", cal / "calibrate", "--scheme", "custom",
                       "--bins", "mid=0.4:0.6")  # fmt: skip
    assert rc == 0, err
    binned = json.loads((cal / "bin" / "summary.json").read_text())["chance"]["mid"]
    assert binned["measured"] == 12 and binned["guessable"] == 6 and binned["mean_pass_rate"] == 0.5
    # Above chance, (p - c) / (1 - c): 0.5 for each control, 0 for the coin flip, below 0 for the
    # abduction (random inputs win more often than this student), none where c = 1.
    above = calibrated.select(above_chance_expr())["pass_rate"].to_list()
    assert sorted(a for a in above if a is not None)[-7:] == [0.0] + [0.5] * 6 and above.count(None) == 4
    assert binned["mean_above_chance"] == round(sum(a for a in above if a is not None) / 8, 4)
    assert "pass rates against chance per bin" in out
    rc, out, err = cli("stats", cal, "--json")
    assert rc == 0, err
    kept_chance = json.loads(out)["measurement"]["chance"]["kept"]
    assert kept_chance["measured"] == 6 and kept_chance["guessable"] == 0 and kept_chance["max"] == 0.0
    assert kept_chance["mean_pass_rate_above_chance"] == 0.5


def test_an_older_run_without_chance_columns_still_filters_and_keeps_its_rows(cli, tmp_path: Path):
    """A schema-2 part (before chance_rate) reads: its rows have no chance rate, are kept, and counted."""
    from synthgen.store.files import file_metadata
    from synthgen.store.records import PROBLEMS, table_from_rows
    from tests.helpers.problem_rows import problem_row

    old = pa.schema([f for f in PROBLEMS if not f.name.startswith("chance_")])
    rows = [
        problem_row(turn_id=f"s{i}/deduction/l{i}/1", problem_id=f"p{i}", seed_id=f"s{i}", lineage_id=f"l{i}",
                    env="deduction", code=f"def f(x):\n    return x + {i}\n", inputs=["1"], outputs=[str(1 + i)])
        for i in range(3)
    ]  # fmt: skip
    meta = {**file_metadata("generate", "g"), "synthgen.schema_version": "2"}
    gen = StageDir(tmp_path / "run", "generate")
    gen.write_part("shard-00000-of-00001", 0, table_from_rows(rows, old), meta)
    gen.mark_done("shard-00000-of-00001", {"settings_hash": "g", "rows": 3})
    assert pq.read_schema(gen.parts()[0]).metadata[b"synthgen.schema_version"] == b"2"
    rc, _, err = cli("filter", "--run-dir", tmp_path / "run", "--no-dedup")
    assert rc == 0, err
    assert pl.read_parquet(tmp_path / "run" / "filter" / "kept.part-*.parquet").height == 3
    stats = json.loads((tmp_path / "run" / "filter" / "stats.json").read_text())
    assert stats["chance"] == {"max_chance_rate": 0.5, "guessable": 0, "unmeasured": 3}
    rc, out, err = cli("stats", tmp_path / "run", "--json")
    assert rc == 0, err
    generated = json.loads(out)["measurement"]["chance"]["generated"]
    assert generated["rows"] == 3 and generated["measured"] == 0
