"""`synthgen filter`: every reject reason from a crafted row, dedup choice, outputs, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from synthgen.cli import app as cli
from synthgen.envs import reasons as R
from synthgen.stages.filter import run as stage
from synthgen.stages.filter.settings import FilterSettings
from synthgen.store.files import file_metadata, read_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS, REJECTS_EXTRA, SCHEMA_VERSION, problem_id, table_from_rows, with_fields
from tests.helpers.problem_rows import problem_row

SHARD = "shard-00000-of-00001"


def code_for(i: int) -> str:
    """Distinct, non-trivial code per i (different constants, names and structure)."""
    ops = ["+", "-", "*", "//", "%", "^", "|", "&"]
    return (
        f"def f(values, k{i}):\n"
        f"    acc_{i} = {i * 31 % 97}\n"
        f"    for index, item in enumerate(values):\n"
        f"        if item {ops[i % 8]} {i + 2} > index * {i % 5 + 1}:\n"
        f"            acc_{i} += item {ops[(i + 3) % 8]} k{i} - {i * 7}\n"
        f"        elif len(str(item)) == {i % 4}:\n"
        f"            acc_{i} -= {i * i + 1}\n"
        f"    return acc_{i} if acc_{i} % {i + 3} else -acc_{i}\n"
    )


def make_row(i: int, **kw) -> dict:
    code = kw.pop("code", code_for(i))
    env = kw.pop("env", "induction")
    message = kw.pop("message", f"hint {i}")
    turn = kw.pop("turn", 1)
    row = problem_row(
        turn_id=f"seed{i:03d}/{env}/lin{i:03d}/{turn}",
        problem_id=problem_id(env, code, ["1"], message),
        seed_id=f"seed{i:03d}",
        lineage_id=f"lin{i:03d}",
        parent_id=None,
        env=env,
        turn=turn,
        code=code,
        inputs=["1", "2"],
        outputs=["'1'", "'2'"],
        message=message,
        visible_count=1,
        reason=R.OK,
        strategy="first",
        teacher_tokens_in=100,
        teacher_tokens_out=50,
        student_tokens_in=10,
        student_tokens_out=5,
        settings_hash="gen0",
        mutation_score=0.9,
        mutants=10,
        mutants_caught=9,
        surviving_mutants=["constant"],
    )
    return row | kw


def write_generate(run: Path, rows: list[dict], shard: str = SHARD) -> None:
    gen = StageDir(run, "generate")
    gen.write_part(shard, 0, table_from_rows(rows, PROBLEMS), file_metadata("generate", "gen0"))
    gen.mark_done(shard, {"settings_hash": "gen0", "rows": len(rows)})


def rejects_of(run: Path) -> pl.DataFrame:
    return pl.read_parquet(run / "filter" / "rejects" / "*.parquet")


def kept_of(run: Path) -> pl.DataFrame:
    return pl.read_parquet(run / "filter" / "kept.part-*.parquet")


def crafted_rows(reference_text: str) -> dict[str, dict]:
    """One row per reason code (and one clean row), keyed by the reason it must get."""
    rows: dict[str, dict] = {}
    for k, code in enumerate(R.GENERATION):
        rows[code] = make_row(
            k, valid=False, reason=code, reason_detail=f"why {code}", pass_rate=None, scored=0, correct=0
        )
    n = len(R.GENERATION)
    rows[R.NEVER_SOLVED] = make_row(n + 1, pass_rate=0.0, correct=0)
    rows[R.ALWAYS_SOLVED] = make_row(n + 2, pass_rate=1.0, correct=32)
    rows[R.OUT_OF_BAND] = make_row(n + 3, pass_rate=49 / 50, correct=49, scored=50, attempts=50)
    rows[R.NO_EVIDENCE] = make_row(n + 4, pass_rate=None, scored=0, correct=0, infra_failures=32)
    rows[R.CONTAMINATED] = make_row(n + 5, code="def f(x):\n    " + reference_text + "\n    return x\n")
    rows["kept"] = make_row(n + 6, pass_rate=0.5)
    # Same problem as "kept" with renamed identifiers and other spacing, farther from 0.5.
    twin = code_for(n + 6).replace("acc_", "total_").replace("item", "elem").replace("    ", "  ")
    rows[R.NEAR_DUPLICATE] = make_row(n + 7, code=twin, message=rows["kept"]["message"], pass_rate=0.25, correct=8)
    rows[R.WEAK_TESTS] = make_row(n + 8, mutation_score=0.2, mutants_caught=2, surviving_mutants=["constant"] * 8)
    rows[R.GUESSABLE] = make_row(n + 9, chance_rate=0.5, chance_strategies=["coin"])  # at the default maximum
    return rows


REFERENCE = (
    "the quick brown fox jumps over the lazy dog while counting every prime number below one thousand and printing each"
)


@pytest.fixture()
def reference_file(tmp_path: Path) -> Path:
    path = tmp_path / "refs.jsonl"
    path.write_text(
        json.dumps({"task_id": "X/0", "text": REFERENCE})
        + "\n"
        + json.dumps({"task_id": "X/1", "text": "unrelated words only"})
        + "\n"
    )
    return path


def test_every_reason_from_a_crafted_row(tmp_path, reference_file):
    run = tmp_path / "run"
    rows = crafted_rows("# " + REFERENCE)
    write_generate(run, list(rows.values()))
    argv = ["filter", "--run-dir", str(run), "--contamination-references", str(reference_file)]
    rc = _main([*argv, "--min-mutation-score", "0.5"])
    assert rc == 0
    got = dict(rejects_of(run).select("turn_id", "reject_reason").iter_rows())
    expected = {row["turn_id"]: reason for reason, row in rows.items() if reason != "kept"}
    assert got == expected
    assert set(got.values()) == set(R.GENERATION) | set(R.FILTER)
    kept = kept_of(run)
    assert kept["turn_id"].to_list() == [rows["kept"]["turn_id"]]
    stats = json.loads((run / "filter" / "stats.json").read_text())
    assert stats["kept"] == 1 and stats["rejected"] == len(rows) - 1
    assert all(stats["reasons"][code] == 1 for code in R.GENERATION + R.FILTER)
    # Generation reasons keep the row's own detail; the others explain themselves.
    details = dict(rejects_of(run).select("reject_reason", "reject_detail").iter_rows())
    assert details[R.TRIVIAL] == "why trivial"
    assert "X/0" not in details[R.CONTAMINATED] and "refs.jsonl row 0" in details[R.CONTAMINATED]
    assert rows["kept"]["problem_id"] in details[R.NEAR_DUPLICATE]


def test_kept_rows_pass_through_unchanged_with_metadata(tmp_path):
    run = tmp_path / "run"
    rows = [make_row(i, pass_rate=(i + 1) / 33, correct=i + 1) for i in range(6)]
    write_generate(run, rows)
    settings = FilterSettings(run_dir=run)
    stage.run(settings)
    kept = pq.read_table(run / "filter" / "kept.part-00000.parquet")
    assert kept.schema.remove_metadata() == PROBLEMS
    assert kept.to_pylist() == table_from_rows(rows, PROBLEMS).to_pylist()
    meta = read_metadata(run / "filter" / "kept.part-00000.parquet")
    assert meta["schema_version"] == SCHEMA_VERSION and meta["settings_hash"] == settings.settings_hash()
    assert meta["stage"] == "filter"


def test_rejects_schema_and_metadata(tmp_path):
    run = tmp_path / "run"
    write_generate(run, [make_row(0, pass_rate=0.0, correct=0), make_row(1)])
    settings = FilterSettings(run_dir=run)
    stage.run(settings)
    path = run / "filter" / "rejects" / "rejects.part-00000.parquet"
    table = pq.read_table(path)
    assert table.schema.remove_metadata() == with_fields(PROBLEMS, REJECTS_EXTRA)
    assert read_metadata(path)["settings_hash"] == settings.settings_hash()
    assert (
        _main(["filter", "--run-dir", str(tmp_path / "r2"), "--input-dir", str(run / "generate"), "--no-rejects"]) == 0
    )
    assert not (tmp_path / "r2" / "filter" / "rejects").exists()


@pytest.mark.parametrize("p,kept", [(0.01, True), (0.97, True), (0.0099, False), (0.9701, False)])
def test_band_is_closed(tmp_path, p, kept):
    run = tmp_path / "run"
    write_generate(run, [make_row(0, pass_rate=p, correct=1)])
    stats = stage.run(FilterSettings(run_dir=run))
    assert stats["kept"] == (1 if kept else 0)
    if not kept:
        assert stats["reasons"][R.OUT_OF_BAND] == 1


def test_band_low_zero_keeps_never_solved(tmp_path):
    run = tmp_path / "run"
    write_generate(run, [make_row(0, pass_rate=0.0, correct=0)])
    assert stage.run(FilterSettings(run_dir=run, band_low=0.0))["kept"] == 1


def test_dedup_keeps_pass_rate_closest_to_half_then_earliest(tmp_path):
    run = tmp_path / "run"
    base = code_for(1)
    rows = [
        make_row(1, code=base, pass_rate=0.2, turn=1, message="m"),
        make_row(2, code=base.replace("values", "xs"), pass_rate=0.6, turn=3, message="m"),
        make_row(3, code=base.replace("item", "it"), pass_rate=0.4, turn=2, message="m"),
        make_row(4, code=base.replace("index", "j"), pass_rate=0.4, turn=2, message="m"),
        make_row(5, code=code_for(5), pass_rate=0.9),
        make_row(6, code=base, pass_rate=0.5, env="deduction", message="m"),  # other env: its own cluster
    ]
    write_generate(run, rows)
    stage.run(FilterSettings(run_dir=run))
    # 0.6 and 0.4 are equally close to 0.5; turn 2 beats turn 3; seed003 < seed004 breaks the last tie.
    assert sorted(kept_of(run)["turn_id"].to_list()) == sorted(
        [rows[2]["turn_id"], rows[4]["turn_id"], rows[5]["turn_id"]]
    )
    assert set(rejects_of(run)["reject_reason"]) == {R.NEAR_DUPLICATE}


def test_dedup_against_an_earlier_run(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_generate(first, [make_row(1), make_row(2)])
    assert _main(["filter", "--run-dir", str(first)]) == 0
    renamed = code_for(1).replace("values", "numbers").replace("index", "position")
    write_generate(second, [make_row(7, code=renamed, message="hint 1"), make_row(8)])
    assert _main(["filter", "--run-dir", str(second), "--dedup-against", str(first)]) == 0
    assert kept_of(second)["turn_id"].to_list() == [make_row(8)["turn_id"]]
    detail = rejects_of(second)["reject_detail"][0]
    assert "earlier-run" in detail and make_row(1)["problem_id"] in detail
    stats = json.loads((second / "filter" / "stats.json").read_text())
    assert stats["dedup"]["of_earlier_runs"] == 1 and stats["dedup"]["earlier_run_problems"] == 2


def test_signature_kind_is_recorded_and_runs_never_mix_kinds(tmp_path, capsys):
    run = tmp_path / "run"
    base = code_for(1)
    rows = [make_row(1, code=base), make_row(2, code=base.replace("values", "xs")), make_row(3)]
    write_generate(run, rows)
    assert _main(["filter", "--run-dir", str(run)]) == 0
    meta = read_metadata(run / "filter" / "kept.part-00000.parquet")
    assert json.loads(meta["settings"])["dedup"]["signature"] == "token_hashes"
    assert json.loads((run / "filter" / "stats.json").read_text())["dedup"]["signature"] == "token_hashes"
    kept = kept_of(run)["turn_id"].to_list()
    assert len(kept) == 2
    capsys.readouterr()
    # The other kind over the same output is other settings: refused without --force.
    assert _main(["filter", "--run-dir", str(run), "--dedup-signature", "shingle_bytes"]) == 2
    line = _one_line(capsys)
    assert 'filter was made with other settings (dedup.signature: "token_hashes" -> "shingle_bytes")' in line, line
    assert "request cache" not in line and "another --run-dir" in line, line  # filter asks no LLM
    assert _main(["filter", "--run-dir", str(run), "--dedup-signature", "shingle_bytes", "--force"]) == 0
    meta = read_metadata(run / "filter" / "kept.part-00000.parquet")
    assert json.loads(meta["settings"])["dedup"]["signature"] == "shingle_bytes"
    assert kept_of(run)["turn_id"].to_list() == kept  # the same near-duplicate found either way


def test_contamination_reference_parquet_and_columns(tmp_path):
    run = tmp_path / "run"
    ref = tmp_path / "refs.parquet"
    pl.DataFrame({"prompt": ["nothing here"], "canonical_solution": [REFERENCE]}).write_parquet(ref)
    write_generate(run, [make_row(0, message=REFERENCE), make_row(1)])
    assert (
        _main(
            [
                "filter",
                "--run-dir",
                str(run),
                "--contamination-references",
                str(ref),
                "--contamination-columns",
                "prompt",
                "--contamination-columns",
                "canonical_solution",
            ]
        )
        == 0
    )
    assert rejects_of(run)["reject_reason"].to_list() == [R.CONTAMINATED]


def test_rerun_skips_same_settings_and_refuses_others(tmp_path, capsys):
    run = tmp_path / "run"
    write_generate(run, [make_row(0), make_row(1)])
    assert _main(["filter", "--run-dir", str(run)]) == 0
    mtime = (run / "filter" / "kept.part-00000.parquet").stat().st_mtime_ns
    assert _main(["filter", "--run-dir", str(run)]) == 0
    assert (run / "filter" / "kept.part-00000.parquet").stat().st_mtime_ns == mtime
    capsys.readouterr()
    assert _main(["filter", "--run-dir", str(run), "--band-high", "0.9"]) == 2
    assert "other settings" in _one_line(capsys)
    assert _main(["filter", "--run-dir", str(run), "--band-high", "0.9", "--force"]) == 0
    # New input with the same settings is filtered again (the shard was re-made with one more row).
    write_generate(run, [make_row(0), make_row(1), make_row(5)])
    assert _main(["filter", "--run-dir", str(run), "--band-high", "0.9"]) == 0
    assert kept_of(run).height == 3


def _main(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    return exc.value.code


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_missing_input_is_exit_2(tmp_path, capsys):
    assert _main(["filter", "--run-dir", str(tmp_path / "nothing")]) == 2
    assert "no generated problems" in _one_line(capsys)


def test_corrupt_parquet_is_exit_2(tmp_path, capsys):
    gen = tmp_path / "run" / "generate"
    gen.mkdir(parents=True)
    (gen / "shard-00000-of-00001.part-00000.parquet").write_bytes(b"not parquet at all")
    assert _main(["filter", "--run-dir", str(tmp_path / "run")]) == 2
    assert "not finished" in _one_line(capsys)  # no marker: still being written
    StageDir(tmp_path / "run", "generate").mark_done(SHARD, {"settings_hash": "gen0"})
    assert _main(["filter", "--run-dir", str(tmp_path / "run")]) == 2
    assert "cannot read Parquet" in _one_line(capsys)


def test_wrong_table_is_exit_2(tmp_path, capsys):
    gen = tmp_path / "run" / "generate"
    gen.mkdir(parents=True)
    pl.DataFrame({"a": [1]}).write_parquet(gen / "x.parquet")
    assert _main(["filter", "--run-dir", str(tmp_path / "run")]) == 2
    assert "not a synthgen problems table" in _one_line(capsys)


@pytest.mark.parametrize(
    "config,words",
    [
        ("filter: {band_low: 0.9, band_high: 0.1}\n", "--band-low (0.9) exceeds --band-high"),
        ("filter: {dedup: {threshold: 1.5}}\n", "filter.dedup.threshold"),
        ("filter: {dedup: {hash: sha1}}\n", "is for signature shingle_bytes"),
        ("filter: {colour: red}\n", "colour"),
    ],
)
def test_bad_config_is_exit_2(tmp_path, capsys, config, words):
    write_generate(tmp_path / "run", [make_row(0)])
    path = tmp_path / "cfg.yaml"
    path.write_text(config)
    assert _main(["--config", str(path), "filter", "--run-dir", str(tmp_path / "run")]) == 2
    assert words in _one_line(capsys)


def test_bad_reference_is_exit_2(tmp_path, capsys, reference_file):
    write_generate(tmp_path / "run", [make_row(0)])
    assert (
        _main(
            ["filter", "--run-dir", str(tmp_path / "run"), "--contamination-references", str(tmp_path / "nope.jsonl")]
        )
        == 2
    )
    assert "reference file not found" in _one_line(capsys)
    assert (
        _main(
            [
                "filter",
                "--run-dir",
                str(tmp_path / "run"),
                "--contamination-references",
                str(reference_file),
                "--contamination-columns",
                "solution",
            ]
        )
        == 2
    )
    assert "none of the columns solution" in _one_line(capsys)


def test_invalid_row_with_unknown_reason_is_exit_2(tmp_path, capsys):
    write_generate(tmp_path / "run", [make_row(0, valid=False, reason="mystery")])
    assert _main(["filter", "--run-dir", str(tmp_path / "run")]) == 2
    assert "mystery" in _one_line(capsys)


def test_contamination_against_a_humaneval_style_jsonl_gz(tmp_path):
    import gzip

    solution = (
        "    for idx, elem in enumerate(numbers):\n        for idx2, elem2 in enumerate(numbers):\n"
        "            if idx != idx2:\n                distance = abs(elem - elem2)\n"
        "                if distance < threshold:\n                    return True\n    return False\n"
    )
    ref = tmp_path / "HumanEval.jsonl.gz"
    with gzip.open(ref, "wt") as fh:
        fh.write(
            json.dumps(
                {
                    "task_id": "HumanEval/0",
                    "prompt": "def has_close_elements(numbers, threshold):\n",
                    "canonical_solution": solution,
                }
            )
            + "\n"
        )
    run = tmp_path / "run"
    copied = "def f(numbers, threshold):\n" + solution
    write_generate(run, [make_row(0, code=copied), make_row(1)])
    settings = FilterSettings(
        run_dir=run, contamination={"references": [str(ref)], "columns": ["prompt", "canonical_solution"]}
    )
    stats = stage.run(settings)
    assert stats["reasons"][R.CONTAMINATED] == 1 and stats["kept"] == 1
    assert "HumanEval.jsonl.gz row 0" in rejects_of(run)["reject_detail"][0]
