"""`synthgen stats RUN_DIR`: numbers from partial and full runs, JSON output, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthgen.cli import app as cli
from synthgen.stages.bin import run as bin_stage
from synthgen.stages.bin.settings import BinSettings
from synthgen.stages.filter import run as filter_stage
from synthgen.stages.filter.settings import FilterSettings
from synthgen.stages.stats import run as stage
from synthgen.stages.stats.settings import StatsSettings
from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS, SEEDS, problem_id, table_from_rows
from tests.helpers.problem_rows import problem_row


def make_row(
    seed: int, turn: int, mode: str, p: float | None, *, valid: bool = True, reason: str = "ok", env: str = "induction"
) -> dict:
    code = (
        f"def f(x):\n    total = x * {seed * 13 + turn}\n    for i in range({turn + 2}):\n"
        f"        total += i ** {seed % 3 + 1} - {mode == 'single'}\n    return total % {seed + 7 * turn + 3}\n"
    )
    lineage = f"{mode}{seed}"
    return problem_row(
        turn_id=f"s{seed}/{env}/{lineage}/{turn}",
        problem_id=problem_id(env, code, ["1"], None),
        seed_id=f"s{seed}",
        lineage_id=lineage,
        env=env,
        mode=mode,
        turn=turn,
        code=code,
        inputs=["1"],
        outputs=["1"],
        valid=valid,
        reason=reason,
        pass_rate=p,
        scored=0 if p is None else 32,
        correct=0 if p is None else round(p * 32),
        teacher_tokens_in=1000,
        teacher_tokens_out=500,
        student_tokens_in=200,
        student_tokens_out=100,
    )


def generate_rows() -> list[dict]:
    rows = []
    for seed in range(3):
        # multi-turn lineage of 3 turns: turn 1 too hard, turn 2 medium, turn 3 invalid
        rows.append(make_row(seed, 1, "multi", 0.0))
        rows.append(make_row(seed, 2, "multi", 0.5, env="deduction"))
        rows.append(make_row(seed, 3, "multi", None, valid=False, reason="format_error"))
        # single-turn baseline: one valid (kept for seed 0 only), one invalid
        rows.append(make_row(seed, 1, "single", 0.4 if seed == 0 else 1.0))
    return rows


def write_generate(run: Path, rows: list[dict]) -> None:
    gen = StageDir(run, "generate")
    gen.write_part("shard-00000-of-00001", 0, table_from_rows(rows, PROBLEMS), file_metadata("generate", "g"))
    gen.mark_done("shard-00000-of-00001", {"settings_hash": "g"})


def _main(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    return exc.value.code


def test_generate_only(tmp_path):
    run = tmp_path / "run"
    write_generate(run, generate_rows())
    data = stage.collect(StatsSettings(run_dir=run))
    assert data["stages"]["generate"] == {
        "rows": 12,
        "valid": 9,
        "invalid": 3,
        "seeds": 3,
        "lineages": 6,
        "shards_done": 1,
    }
    assert data["stages"]["filter"] is None and data["stages"]["bin"] is None and data["stages"]["seeds"] is None
    turns = {(t["mode"], t["turn"]): t for t in data["turns"]}
    assert turns[("multi", 2)] == {
        "mode": "multi",
        "turn": 2,
        "generated": 3,
        "valid": 3,
        "kept": None,
        "mean_pass_rate": 0.5,
    }
    assert turns[("multi", 3)]["valid"] == 0 and turns[("multi", 3)]["mean_pass_rate"] is None
    assert data["reasons"]["generation"] == {"format_error": 3}
    assert data["tokens"]["teacher"] == {"in": 12000, "out": 6000, "total": 18000, "per_kept": None}
    assert data["pass_rate_histograms"]["generated_valid"]["deduction"][5] == 3


def test_full_run_numbers(tmp_path, capsys):
    run = tmp_path / "run"
    StageDir(run, "seeds").write_part(
        "shard-00000-of-00001",
        0,
        table_from_rows(
            [dict(seed_id="a", source="dir", origin="x", start_line=1, end_line=25, num_lines=25, text="x")], SEEDS
        ),
        file_metadata("seeds", "s"),
    )
    write_generate(run, generate_rows())
    filter_stage.run(FilterSettings(run_dir=run))
    bin_stage.run(BinSettings(run_dir=run))
    capsys.readouterr()
    assert _main(["stats", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["stages"]["seeds"] == {"rows": 1}
    assert data["stages"]["filter"] == {"kept": 4, "rejected": 8, "input_rows": 12}
    assert data["stages"]["bin"]["medium"] == 4
    turns = {(t["mode"], t["turn"]): t["kept"] for t in data["turns"]}
    assert turns == {("multi", 1): 0, ("multi", 2): 3, ("multi", 3): 0, ("single", 1): 1}
    assert data["reasons"]["filter"] == {"never_solved": 3, "always_solved": 2}
    modes = data["modes"]
    assert modes["multi"]["kept_per_seed"] == 1.0 and modes["single"]["kept_per_seed"] == round(1 / 3, 4)
    assert modes["multi_over_single"] == 3.0
    assert data["tokens"]["kept_problems"] == 4
    assert data["tokens"]["student"]["per_kept"] == 12 * 300 / 4
    assert sum(data["pass_rate_histograms"]["kept"]["deduction"]) == 3
    # The sets a run offers to `train --data`, each a folder the training loader reads as listed.
    from synthgen.train.data import bin_counts, load_problem_rows

    sets = {t["name"]: t for t in data["sets"]}
    assert list(sets) == ["filter", "bin", "bin/medium"]
    assert sets["filter"]["splits"] == {"kept": 4} and sets["bin"]["splits"] == {"medium": 4}
    for t in sets.values():
        assert bin_counts(load_problem_rows([t["data"]])) == t["splits"] and t["finished"]
    # The terminal view shows the same sections.
    assert _main(["stats", str(run)]) == 0
    out = capsys.readouterr().out
    for words in ("yield per turn", "reject reasons", "multi-turn vs single-turn", "tokens", "never_solved"):
        assert words in out
    assert "sets to train on" in out and "bin/medium" in out


def test_missing_and_empty_run_dirs_are_exit_2(tmp_path, capsys):
    assert _main(["stats", str(tmp_path / "nope")]) == 2
    assert "run directory not found" in capsys.readouterr().err
    assert _main(["stats", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds no stage output" in err


def test_corrupt_stage_file_is_exit_2(tmp_path, capsys):
    gen = tmp_path / "generate"
    gen.mkdir()
    (gen / "shard-00000-of-00001.part-00000.parquet").write_bytes(b"PAR1 nope")
    assert _main(["stats", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot read Parquet" in err


def test_bad_config_is_exit_2(tmp_path, capsys):
    write_generate(tmp_path / "run", generate_rows())
    cfg = tmp_path / "c.toml"
    cfg.write_text("[stats]\nbuckets = 1\n")
    assert _main(["--config", str(cfg), "stats", str(tmp_path / "run")]) == 2
    assert "stats.buckets" in capsys.readouterr().err


def test_chain_stage_counts_and_tokens(tmp_path):
    from synthgen.store.records import CHAIN_LINKS

    run = tmp_path / "run"
    write_generate(run, generate_rows())
    chain = run / "chain"
    tried = [make_row(9, 1, "chain", 0.5), make_row(9, 2, "chain", 0.85)]
    StageDir(chain, "tries").write_part(
        "shard-00000-of-00001", 0, table_from_rows(tried, PROBLEMS), file_metadata("chain", "c")
    )
    # problems/ holds the three levels, the hard start included: its tokens were spent by generate.
    StageDir(chain, "problems").write_part(
        "shard-00000-of-00001",
        0,
        table_from_rows([make_row(8, 4, "multi", 0.1), *tried], PROBLEMS),
        file_metadata("chain", "c"),
    )
    links = [
        dict(
            link_id=f"c1-{i}",
            chain_id="c1",
            level=level,
            position=i,
            problem_id=f"p{i}",
            pass_rate=0.5,
            env="induction",
        )
        for i, level in enumerate(("hard", "medium", "easy"))
    ]
    StageDir(chain, "links").write_part(
        "shard-00000-of-00001", 0, table_from_rows(links, CHAIN_LINKS), file_metadata("chain", "c")
    )
    data = stage.collect(StatsSettings(run_dir=run))
    assert data["stages"]["chain"] == {"files": 3, "links": 3, "chains": 1, "problems": 3, "tries": 2}
    assert data["tokens"]["chain"] == {"teacher": {"in": 2000, "out": 1000}, "student": {"in": 400, "out": 200}}
    assert "once per request" in data["tokens"]["counting"]
    assert [(t["name"], t["splits"]) for t in data["sets"]][-1] == ("chain", {"easy": 1, "hard": 1, "medium": 1})
