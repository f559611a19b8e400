"""`synthgen seeds`: every source, determinism, sharding, and bad input."""

from __future__ import annotations

import json
import textwrap

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.store.files import read_metadata
from synthgen.store.layout import StageDir


def _code_file(i: int, lines: int = 80) -> str:
    body = [f"def func_{i}_{k}(x, y):" if k % 8 == 0 else f"    x = x * {k} + y - {i}  # step" for k in range(lines)]
    return "\n".join(body) + "\n"


@pytest.fixture
def starcoder_files(tmp_path):
    files = []
    for part in range(2):
        table = pa.table(
            {
                "content": [_code_file(part * 10 + i) for i in range(10)],
                "max_stars_repo_name": [f"org/repo{part}"] * 10,
                "max_stars_repo_path": [f"pkg/mod{i}.py" for i in range(10)],
                "id": list(range(10)),
            }
        )
        path = tmp_path / f"train-{part:05d}.parquet"
        pq.write_table(table, path)
        files.append(path)
    return files


def _seeds(run_dir):
    return StageDir(run_dir, "seeds").read()


def test_default_source_is_the_standard_library(cli, tmp_path):
    rc, _, err = cli("seeds", "--run-dir", tmp_path, "--n", "12")
    assert rc == 0, err
    df = _seeds(tmp_path)
    assert df.height == 12
    assert df["num_lines"].min() >= 25 and df["num_lines"].max() <= 50
    assert all(t.count("\n") == n for t, n in zip(df["text"], df["num_lines"]))
    assert (df["end_line"] - df["start_line"] + 1 == df["num_lines"]).all()
    assert df["seed_id"].n_unique() == 12
    meta = read_metadata(StageDir(tmp_path, "seeds").parts()[0])
    assert meta["stage"] == "seeds" and len(meta["settings_hash"]) == 16


def test_starcoder_parquet_source(cli, tmp_path, starcoder_files):
    rc, _, err = cli("seeds", "starcoder", *starcoder_files, "--run-dir", tmp_path / "r", "--n", "15")
    assert rc == 0, err
    df = _seeds(tmp_path / "r")
    assert df.height == 15 and set(df["source"]) == {"starcoder"}
    assert df["repo"].str.starts_with("org/repo").all() and df["path"].str.starts_with("pkg/").all()


def test_solutions_are_used_whole_short_and_long_ones_included(cli, tmp_path):
    """The paper seeds with whole real solutions: none is cut to --max-lines or skipped for its length."""
    path = tmp_path / "sol.jsonl"
    rows = [{"problem_id": f"p{i}", "code": _code_file(i, 30)} for i in range(6)]
    rows.append({"problem_id": "short", "code": "\nn = int(input())\nprint(n * 2)\n"})  # 2 lines: still a seed
    rows.append({"problem_id": "long", "code": _code_file(99, 80)})  # over --max-lines: still whole
    rows.append({"problem_id": "empty", "code": "\n\n"})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    rc, _, err = cli("seeds", "solutions", path, "--run-dir", tmp_path / "r", "--n", "50")
    assert rc == 0, err
    df = _seeds(tmp_path / "r").sort("origin")
    assert df.height == 8 and set(df["source"]) == {"solutions"}
    long = df.filter(pl.col("origin").str.ends_with("#long")).row(0, named=True)
    assert long["text"] == _code_file(99, 80) and long["num_lines"] == 80
    short = df.filter(pl.col("origin").str.ends_with("#short")).row(0, named=True)
    assert short["text"] == "n = int(input())\nprint(n * 2)\n" and short["num_lines"] == 2
    whole = df.filter(pl.col("origin").str.ends_with("#p0")).row(0, named=True)
    assert whole["text"] == _code_file(0, 30) and (whole["start_line"], whole["end_line"]) == (1, 30)


def test_default_source_leaves_installed_packages_out(cli, tmp_path):
    rc, _, err = cli("seeds", "--run-dir", tmp_path, "--n", "400")
    assert rc == 0, err
    origins = _seeds(tmp_path)["origin"].to_list()
    assert not any("site-packages" in o or "dist-packages" in o for o in origins)


def test_same_seed_same_snippets_other_seed_other_snippets(cli, tmp_path, starcoder_files):
    for name, seed in (("a", 1), ("b", 1), ("c", 2)):
        assert (
            cli("seeds", "starcoder", *starcoder_files, "--run-dir", tmp_path / name, "--n", "8", "--seed", seed)[0]
            == 0
        )
    a, b, c = (_seeds(tmp_path / x) for x in "abc")
    assert a.equals(b)
    assert set(a["seed_id"]) != set(c["seed_id"])


def test_shards_partition_the_seeds(cli, tmp_path, starcoder_files):
    assert cli("seeds", "starcoder", *starcoder_files, "--run-dir", tmp_path / "one", "--n", "17")[0] == 0
    for i in range(3):
        rc, _, err = cli(
            "seeds",
            "starcoder",
            *starcoder_files,
            "--run-dir",
            tmp_path / "many",
            "--n",
            "17",
            "--shard",
            i,
            "--num-shards",
            3,
        )
        assert rc == 0, err
    whole = _seeds(tmp_path / "one")
    parts = [pl.read_parquet(p) for p in StageDir(tmp_path / "many", "seeds").parts()]
    ids = [set(p["seed_id"]) for p in parts]
    assert len(parts) == 3 and all(ids)
    assert sum(len(x) for x in ids) == len(set().union(*ids)) == 17  # no overlap, no loss
    assert set().union(*ids) == set(whole["seed_id"])


def test_finished_shard_is_skipped_and_other_settings_refused(cli, tmp_path, starcoder_files):
    args = ("seeds", "starcoder", *starcoder_files, "--run-dir", tmp_path)
    assert cli(*args, "--n", "5")[0] == 0
    before = StageDir(tmp_path, "seeds").parts()[0].stat().st_mtime_ns
    rc, _, err = cli(*args, "--n", "5")
    assert rc == 0 and StageDir(tmp_path, "seeds").parts()[0].stat().st_mtime_ns == before
    rc, _, err = cli(*args, "--n", "6")
    assert rc == 2 and "other settings" in err
    assert cli(*args, "--n", "6", "--force")[0] == 0 and _seeds(tmp_path).height == 6


def test_config_file_sets_flags_and_flags_win(cli, tmp_path, starcoder_files):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"run_dir: {tmp_path / 'r'}\nseeds:\n  n: 4\n  seed: 3\n")
    assert cli("--config", cfg, "seeds", "starcoder", *starcoder_files)[0] == 0
    assert _seeds(tmp_path / "r").height == 4
    assert cli("--config", cfg, "seeds", "starcoder", *starcoder_files, "--n", "3", "--run-dir", tmp_path / "s")[0] == 0
    assert _seeds(tmp_path / "s").height == 3


def _one_line_error(result, needle):
    rc, out, err = result
    assert rc == 2, (rc, err)
    assert needle in err and err.strip().count("\n") == 0 and "Traceback" not in err


def test_bad_inputs_are_one_line_errors(cli, tmp_path, starcoder_files):
    run = ("--run-dir", tmp_path / "r")
    _one_line_error(cli("seeds", "dir", tmp_path / "nope", *run), "source path not found")
    no_col = tmp_path / "nocol.parquet"
    pq.write_table(pa.table({"text": ["x"]}), no_col)
    _one_line_error(cli("seeds", "starcoder", no_col, *run), "has no column 'content'")
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"not parquet at all")
    _one_line_error(cli("seeds", "starcoder", corrupt, *run), "cannot read Parquet file")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "tiny.py").write_text("x = 1\n")
    _one_line_error(cli("seeds", "dir", empty, *run), "no snippet of 25-50 lines")
    bad_cfg = tmp_path / "bad.toml"
    bad_cfg.write_text("[seeds\nn = 3")
    _one_line_error(cli("--config", bad_cfg, "seeds", *run), "not valid TOML")
    _one_line_error(cli("seeds", "dir", *run, "--min-lines", "60"), "--min-lines (60) exceeds --max-lines (50)")
    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text('{"code": "x"}\nnot json\n')
    _one_line_error(cli("seeds", "solutions", bad_jsonl, *run), "bad.jsonl:2: not a JSON object")
    # Nothing that a later run could take for finished was left behind.
    assert StageDir(tmp_path / "r", "seeds").parts() == []
    assert not StageDir(tmp_path / "r", "seeds").done_shards()


def test_filler_windows_are_skipped(tmp_path, cli):
    src = tmp_path / "src"
    src.mkdir()
    data = "TABLE = [\n" + "".join(f"    ({i}, 'x{i}', 0x{i:02x}),\n" for i in range(200)) + "]\n"
    comments = "".join(f"# comment line {i}\n\n" for i in range(100))
    (src / "data.py").write_text(data)
    (src / "comments.py").write_text(comments)
    _one_line_error(cli("seeds", "dir", src, "--run-dir", tmp_path / "r"), "no snippet")
    (src / "code.py").write_text(textwrap.dedent(_code_file(1)))
    assert cli("seeds", "dir", src, "--run-dir", tmp_path / "r")[0] == 0
    assert set(_seeds(tmp_path / "r")["origin"]) == {str(src / "code.py")}
