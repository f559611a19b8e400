"""`synthgen bin`: the paper's bands (Appendix B, Table 3) at their boundaries, output layout readable by
polars/pyarrow/datasets, balance, bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pyarrow.dataset as ds
import pytest

from synthgen.cli import app as cli
from synthgen.stages.bin import run as stage
from synthgen.stages.bin.settings import BinSettings
from synthgen.store.bins import SCHEMES
from synthgen.store.files import file_metadata, read_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS, SCHEMA_VERSION, problem_id, table_from_rows
from tests.helpers.problem_rows import problem_row

# (pass rate, broad bin, chains bin); None = outside every bin.
EDGES = [
    (0.0, None, None),
    (0.04, None, None),
    (0.05, None, "hard"),
    (0.0999, None, "hard"),
    (0.10, "hard", "hard"),
    (0.16, "hard", "hard"),
    (0.1601, "hard", None),
    (0.2599, "hard", None),
    (0.26, "medium", None),
    (0.4099, "medium", None),
    (0.41, "medium", "medium"),
    (0.59, "medium", "medium"),
    (0.5901, "medium", None),
    (0.61, "easy_medium", None),
    (0.8099, "easy_medium", None),
    (0.81, "easy_medium", "easy"),
    (0.8499, "easy_medium", "easy"),
    (0.85, "easy", "easy"),
    (0.91, "easy", "easy"),
    (0.9101, "easy", None),
    (0.97, "easy", None),
    (0.9701, None, None),
    (1.0, None, None),
]


def make_row(i: int, p: float | None, env: str = "induction") -> dict:
    code = f"def f(x):\n    return x + {i}\n"
    return problem_row(
        turn_id=f"seed{i:04d}/{env}/lin/1",
        problem_id=problem_id(env, code, ["1"], None),
        seed_id=f"seed{i:04d}",
        lineage_id=f"lin{i}",
        env=env,
        code=code,
        inputs=["1"],
        outputs=["2"],
        pass_rate=p,
        correct=0 if p is None else round(p * 32),
    )


def write_kept(run: Path, rows: list[dict]) -> None:
    """A finished filter output: its kept part and its marker."""
    kept = StageDir(run, "filter")
    kept.write_part("kept", 0, table_from_rows(rows, PROBLEMS), file_metadata("filter", "f0"))
    kept.mark_done("kept", {"settings_hash": "f0", "rows": len(rows)})


def _main(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    return exc.value.code


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def classify(p: float, bins) -> str | None:
    return stage.assign(pl.DataFrame({"pass_rate": [p]}), bins)["difficulty"][0]


@pytest.mark.parametrize("scheme,column", [("broad", 1), ("chains", 2)])
def test_bins_at_the_spec_boundaries(scheme, column):
    bins = BinSettings(scheme=scheme).resolved()
    for edge in EDGES:
        assert classify(edge[0], bins) == edge[column], (scheme, edge)
    df = stage.assign(pl.DataFrame({"pass_rate": [e[0] for e in EDGES]}), bins)
    assert df["difficulty"].to_list() == [e[column] for e in EDGES]


def test_edges_of_fractions_with_fewer_scored_attempts():
    bins = BinSettings(scheme="broad").resolved()
    assert classify(13 / 50, bins) == "medium"  # 0.26 exactly
    assert classify(61 / 100, bins) == "easy_medium"
    assert classify(4 / 25, BinSettings(scheme="chains").resolved()) == "hard"  # 0.16


def test_schemes_are_spec_section_6():
    assert SCHEMES["chains"] == {"hard": (0.05, 0.16), "medium": (0.41, 0.59), "easy": (0.81, 0.91)}
    assert SCHEMES["broad"] == {
        "hard": (0.10, 0.26),
        "medium": (0.26, 0.61),
        "easy_medium": (0.61, 0.85),
        "easy": (0.85, 0.97),
    }
    labels = {b.name: b.label() for b in BinSettings(scheme="broad").resolved()}
    assert labels == {
        "hard": "[0.1, 0.26)",
        "medium": "[0.26, 0.61)",
        "easy_medium": "[0.61, 0.85)",
        "easy": "[0.85, 0.97]",
    }


def test_output_layout_metadata_and_readers(tmp_path, capsys):
    run = tmp_path / "run"
    rows = [make_row(i, e[0], env=("induction", "deduction")[i % 2]) for i, e in enumerate(EDGES)]
    rows.append(make_row(99, None))
    write_kept(run, rows)
    assert _main(["bin", "--run-dir", str(run), "--write-outside"]) == 0
    out = capsys.readouterr()
    assert "pass rates per environment" in out.out and "pass rates per bin" in out.out
    assert "fall outside every bin" in out.err
    summary = json.loads((run / "bin" / "summary.json").read_text())
    expected = {}
    for e in EDGES:
        expected[e[1]] = expected.get(e[1], 0) + 1
    for name in SCHEMES["broad"]:
        path = run / "bin" / name / "part-00000.parquet"
        frame = pl.read_parquet(path)
        assert frame.height == expected.get(name, 0) == summary["bins"][name]["written"]
        assert set(frame["difficulty"]) <= {name}
        assert ds.dataset(path.parent, format="parquet").to_table().num_rows == frame.height
        meta = read_metadata(path)
        assert meta["schema_version"] == SCHEMA_VERSION and meta["stage"] == "bin"
        assert meta["settings_hash"] == BinSettings(run_dir=run, write_outside=True).settings_hash()
    outside = pl.read_parquet(run / "bin_outside" / "part-00000.parquet")
    assert outside.height == expected[None] + 1 == summary["outside"]["total"]
    assert outside["difficulty"].null_count() == outside.height
    assert summary["outside"]["no_pass_rate"] == 1
    # Kept columns are unchanged; difficulty is added at the end.
    assert pl.read_parquet(run / "bin" / "hard" / "part-00000.parquet").columns == PROBLEMS.names + ["difficulty"]


def test_each_bin_loads_with_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    run = tmp_path / "run"
    write_kept(run, [make_row(i, p) for i, p in enumerate([0.12, 0.3, 0.5, 0.7, 0.9, 0.95])])
    stage.run(BinSettings(run_dir=run))
    files = {name: str(run / "bin" / name / "part-00000.parquet") for name in SCHEMES["broad"]}
    loaded = datasets.load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "hf"))
    assert {name: loaded[name].num_rows for name in files} == {"hard": 1, "medium": 2, "easy_medium": 1, "easy": 2}
    assert loaded["medium"]["difficulty"] == ["medium", "medium"]
    # The whole bin/ folder is exactly the binned problems; an empty bin has no folder (datasets
    # cannot read a Parquet file without rows) and outside rows live beside bin/.
    write_kept(run, [make_row(i, p) for i, p in enumerate([0.3, 0.5, 0.99])])
    summary = stage.run(BinSettings(run_dir=run, write_outside=True), force=True)
    assert sorted(p.name for p in (run / "bin").iterdir() if p.is_dir()) == ["medium"]
    assert summary["bins"]["hard"]["written"] == 0 and summary["outside"]["above"] == 1
    whole = datasets.load_dataset(
        "parquet", data_files=str(run / "bin" / "*" / "*.parquet"), cache_dir=str(tmp_path / "hf2")
    )
    assert whole["train"].num_rows == 2 and set(whole["train"]["difficulty"]) == {"medium"}
    assert pl.read_parquet(run / "bin_outside" / "*.parquet")["pass_rate"].to_list() == [0.99]


def test_balance_is_deterministic_under_seed(tmp_path):
    rows = [make_row(i, p) for i, p in enumerate([0.12] * 3 + [0.3] * 7 + [0.7] * 5 + [0.9] * 9)]
    picks = []
    for seed in (1, 1, 2):
        run = tmp_path / f"run{len(picks)}"
        write_kept(run, rows)
        summary = stage.run(BinSettings(run_dir=run, balance=True, seed=seed))
        assert summary["balanced_to"] == 3
        assert {k: v["written"] for k, v in summary["bins"].items()} == dict.fromkeys(SCHEMES["broad"], 3)
        picks.append(pl.read_parquet(run / "bin" / "*" / "*.parquet")["turn_id"].sort().to_list())
    assert picks[0] == picks[1]
    assert picks[0] != picks[2]


def test_custom_bins_from_config(tmp_path):
    run = tmp_path / "run"
    write_kept(run, [make_row(i, p) for i, p in enumerate([0.0, 0.3, 0.5, 0.7, 1.0])])
    cfg = tmp_path / "c.yaml"
    cfg.write_text("bin: {scheme: custom, bins: {low: [0.0, 0.5], high: [0.5, 1.0]}}\n")
    assert _main(["--config", str(cfg), "bin", "--run-dir", str(run)]) == 0
    assert pl.read_parquet(run / "bin" / "low" / "*.parquet")["pass_rate"].to_list() == [0.0, 0.3]
    assert pl.read_parquet(run / "bin" / "high" / "*.parquet")["pass_rate"].to_list() == [0.5, 0.7, 1.0]
    # A flag works too; a re-run with other settings needs --force and then removes the old bins.
    assert _main(["bin", "--run-dir", str(run), "--scheme", "custom", "--bins", "mid=0.25:0.75", "--force"]) == 0
    assert sorted(p.name for p in (run / "bin").iterdir() if p.is_dir()) == ["mid"]


@pytest.mark.parametrize(
    "argv,words",
    [
        (["--scheme", "custom", "--bins", "a=0.1:0.5,b=0.4:0.9"], "overlap"),
        (["--scheme", "custom", "--bins", "easy-medium=0.1:0.5"], "must match"),
        (["--scheme", "custom", "--bins", "a=0.5:0.1"], "low < high"),
        (["--scheme", "custom"], "needs --bins"),
        (["--scheme", "weird"], "scheme"),
        (["--bins", "a=0:1"], "only read with scheme 'custom'"),
    ],
)
def test_bad_bins_are_exit_2(tmp_path, capsys, argv, words):
    write_kept(tmp_path / "run", [make_row(0, 0.5)])
    assert _main(["bin", "--run-dir", str(tmp_path / "run"), *argv]) == 2
    assert words in _one_line(capsys)


def test_missing_or_corrupt_input_is_exit_2(tmp_path, capsys):
    assert _main(["bin", "--run-dir", str(tmp_path / "nothing")]) == 2
    assert "run `synthgen filter` first" in _one_line(capsys)
    (tmp_path / "run" / "filter").mkdir(parents=True)
    (tmp_path / "run" / "filter" / "kept.part-00000.parquet").write_text("garbage")
    assert _main(["bin", "--run-dir", str(tmp_path / "run")]) == 2
    assert "not finished" in _one_line(capsys) and not (tmp_path / "run" / "bin").exists()
    StageDir(tmp_path / "run", "filter").mark_done("kept", {"settings_hash": "f0"})
    assert _main(["bin", "--run-dir", str(tmp_path / "run")]) == 2
    assert "cannot read Parquet" in _one_line(capsys)


def test_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    write_kept(run, [make_row(i, i / 20, env=("induction", "fuzzing")[i % 2]) for i in range(21)])
    assert _main(["bin", "--run-dir", str(run), "--plot", str(tmp_path / "h.png")]) == 0
    assert (tmp_path / "h.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    run = tmp_path / "run"
    write_kept(run, [make_row(0, 0.5)])
    assert _main(["bin", "--run-dir", str(run), "--plot", str(tmp_path / "h.png")]) == 2
    assert "pip install 'synthgen[plot]'" in _one_line(capsys)
    assert not (run / "bin").exists()
