"""`synthgen chain` measures its steps as its start problems were measured (issue 38, item 1).

The bug: generate ran with `attempts: 8` from the config against one server, `chain --base-url B`
measured its steps with its own default M = 32 against another, and the chains held a hard level
at M = 8 and medium and easy levels at M = 32 without a word. Now chain takes M (and the student's
effort and temperature) from the starts where not set, refuses another value set on purpose with
exit 2 before anything is asked or written, refuses a step the server measured otherwise (another
served model) at the first one, and measures anew only with --remeasure, which its markers record.
"""

from __future__ import annotations

import json
import re
import shutil

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.store.files import read_metadata
from synthgen.store.layout import StageDir

SHARD = "shard-00000-of-00001"
# A wide start band and few tries: at M = 8 the paper's 0.05-0.16 holds only 1/8.
SMALL = ("--no-progress", "--start-band", "0.05:0.40", "--max-chains", "6", "--tries", "2")


@pytest.fixture(scope="module")
def generated(tmp_path_factory, seeds_run):
    """seeds -> generate (M = 8, from the config's generate section, on server A) -> filter; and
    the config file, which has no chain section."""
    from synthgen.cli.app import app, run_guarded
    from synthgen.demo.scripted.launch import start_scripted_server

    base = tmp_path_factory.mktemp("chain-measure")
    run_dir = base / "run"
    shutil.copytree(seeds_run / "seeds", run_dir / "seeds")
    config = base / "exp.yaml"
    config.write_text("generate:\n  attempts: 8\n")
    with start_scripted_server(seed=3, mode="process") as server_a:
        rc = run_guarded(
            app,
            [
                *("--config", str(config), "generate", "--run-dir", str(run_dir), "--base-url", server_a.url),
                *("--no-progress", "--turns", "4", "--lineages-per-seed", "4", "--max-in-flight", "32"),
            ],
        )
    assert rc == 0
    assert run_guarded(app, ["filter", "--run-dir", str(run_dir)]) == 0
    return run_dir, config


def _copy(generated, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(generated[0], run_dir, ignore=shutil.ignore_patterns("chain", "cache"))
    return run_dir


def _chain(cli, config, run_dir, url, *extra):
    return cli("--config", config, "chain", "--run-dir", run_dir, "--base-url", url, *SMALL, *extra)


def _starts(run_dir) -> pl.DataFrame:
    kept = StageDir(run_dir, "filter").read().filter(pl.col("valid"))
    return kept.filter(pl.col("pass_rate").is_between(0.05, 0.40))


def _measured(rows: pl.DataFrame) -> pl.DataFrame:
    return rows.filter(pl.col("valid") & pl.col("measured_by").is_not_null())


def test_chain_takes_the_start_problems_m_rather_than_its_own_default(cli, generated, tmp_path, scripted_server):
    run_dir = _copy(generated, tmp_path)
    starts = _starts(run_dir)
    assert starts.height > 0 and set(starts["attempts"]) == {8} and starts["measured_by"].n_unique() == 1
    (start_measurement,) = starts["measured_by"].unique().to_list()
    rc, _, err = _chain(cli, generated[1], run_dir, scripted_server(seed=3).url)  # server B
    assert rc == 0, err
    tries = _measured(StageDir(run_dir / "chain", "tries").read())
    assert tries.height > 0
    assert set(tries["attempts"]) == {8}, tries["attempts"].to_list()  # M = 32 before the fix
    assert set(tries["measured_by"]) == {start_measurement}
    assert err.count("attempts 8 taken from them") == 1, err  # said once, in one line
    problems = StageDir(run_dir / "chain", "problems").read()
    assert problems.height == 0 or set(problems["measured_by"]) == {start_measurement}
    marker = StageDir(run_dir / "chain", "links").done_info(SHARD)["measurement"]
    assert marker["taken"] == {"attempts": 8} and marker["remeasure"] is False
    assert [m["measured_by"] for m in marker["starts"]] == [start_measurement]
    assert marker["same_as_starts"] is (True if problems.height else None)
    # The taken M is a setting like any other: the tries were written under the hash of `--attempts 8`.
    rc, out, _ = cli(
        "--config", generated[1], "config", "show", "chain", "--run-dir", run_dir, *SMALL, "--attempts", "8"
    )
    assert rc == 0
    hashes = {read_metadata(p)["settings_hash"] for p in StageDir(run_dir / "chain", "tries").shard_parts(SHARD)}
    assert hashes == set(re.findall(r"settings hash: (\w+)", out))


def test_every_level_of_an_accepted_chain_shares_the_start_problems_measurement(
    cli, demo_run, tmp_path, scripted_server
):
    """The demo run was generated with M = 8 too; with more tries some chains are accepted."""
    run_dir = tmp_path / "run"
    shutil.copytree(demo_run, run_dir, ignore=shutil.ignore_patterns("chain", "cache"))
    rc, _, err = cli(
        *("chain", "--run-dir", run_dir, "--base-url", scripted_server(seed=3).url),
        *("--no-progress", "--start-band", "0.05:0.40", "--tries", "6"),
    )
    assert rc == 0, err
    chain = run_dir / "chain"
    links, problems = StageDir(chain, "links").read(), StageDir(chain, "problems").read()
    assert set(links["level"]) == {"hard", "medium", "easy"}
    assert set(problems["attempts"]) == {8} and problems["measured_by"].n_unique() == 1
    recorded = StageDir(chain, "links").done_info(SHARD)["measurement"]
    assert recorded["same_as_starts"] is True and recorded["taken"] == {"attempts": 8}
    assert [m["measured_by"] for m in recorded["steps"]] == problems["measured_by"].unique().to_list()


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (("--attempts", "32"), ["attempts: 8 (the start problems) -> 32 (chain)", "drop --attempts"]),
        (("--student-effort", "high"), ["student effort: low (the start problems) -> high (chain)"]),
        (("--student-max-tokens", "999"), ["max_tokens 999", "--student-max-tokens"]),
        ("config", ["attempts: 8 (the start problems) -> 32 (chain)"]),
    ],
    ids=["attempts-flag", "effort-flag", "max-tokens", "attempts-in-config"],
)
def test_a_measurement_set_otherwise_is_refused_before_anything_is_asked_or_written(
    cli, generated, tmp_path, scripted_server, given, named
):
    run_dir = _copy(generated, tmp_path)
    config = generated[1]
    if given == "config":  # the config's chain section sets it as explicitly as a flag
        config = tmp_path / "chain.yaml"
        config.write_text("generate:\n  attempts: 8\nchain:\n  attempts: 32\n")
        given = ()
    server = scripted_server(seed=3)
    rc, _, err = _chain(cli, config, run_dir, server.url, *given)
    assert rc == 2 and err.count("\n") == 1, err
    for text in [*named, "--remeasure"]:
        assert text in err, err
    assert not (run_dir / "chain").exists() and not (run_dir / "cache").exists()
    assert server.stats()["requests"] == 0


def test_remeasure_measures_anew_and_the_markers_say_so(cli, generated, tmp_path, scripted_server):
    run_dir = _copy(generated, tmp_path)
    (start_measurement,) = _starts(run_dir)["measured_by"].unique().to_list()
    rc, _, err = _chain(cli, generated[1], run_dir, scripted_server(seed=3).url, "--attempts", "32", "--remeasure")
    assert rc == 0, err
    assert "measuring the steps anew (--remeasure): attempts: 8 (the start problems) -> 32 (chain)" in err
    tries = _measured(StageDir(run_dir / "chain", "tries").read())
    assert tries.height > 0 and set(tries["attempts"]) == {32}
    assert start_measurement not in set(tries["measured_by"])
    chain = run_dir / "chain"
    problems = StageDir(chain, "problems").read()
    for name in ("tries", "problems", "links"):
        recorded = StageDir(chain, name).done_info(SHARD)["measurement"]
        assert recorded["remeasure"] is True and recorded["taken"] == {}, name
        assert [m["measured_by"] for m in recorded["starts"]] == [start_measurement]
    recorded = StageDir(chain, "links").done_info(SHARD)["measurement"]
    assert recorded["same_as_starts"] is (False if problems.height else None)
    if problems.height:
        assert all("M=32" in m["described"] for m in recorded["steps"])
    # The part metadata carries it too (what run_info and the card read).
    (part,) = StageDir(chain, "problems").shard_parts(SHARD)
    assert json.loads(read_metadata(part)["measurement"])["remeasure"] is True


def test_a_step_the_server_measures_otherwise_stops_the_run_and_remeasure_resumes_it(
    cli, generated, tmp_path, scripted_server
):
    run_dir = _copy(generated, tmp_path)
    other = scripted_server(seed=3, response_model="another-student")  # answers under another name
    rc, _, err = _chain(cli, generated[1], run_dir, other.url)
    lines = err.strip().splitlines()
    assert rc == 2 and lines[-1].startswith("synthgen: error: chain measured step"), err
    assert "student model: scripted (the start problems) -> another-student (chain)" in lines[-1]
    assert "Traceback" not in err and "retrying" not in err and "--remeasure" in lines[-1]
    # One turn at a time until a step confirmed the measurement: the refused step is the only measured row.
    tries = StageDir(run_dir / "chain", "tries")
    assert _measured(tries.read()).height == 1 and not StageDir(run_dir / "chain", "links").done_shards()
    rc, _, err = _chain(cli, generated[1], run_dir, other.url, "--remeasure")
    assert rc == 0 and "resuming" in err, err
    recorded = StageDir(run_dir / "chain", "links").done_info(SHARD)["measurement"]
    assert recorded["remeasure"] is True and recorded["taken"] == {"attempts": 8}
    assert set(_measured(tries.read())["student_model"]) == {"another-student"}


def test_starts_measured_two_ways_or_not_recorded_are_refused_unless_remeasure(
    cli, generated, tmp_path, scripted_server
):
    run_dir = _copy(generated, tmp_path)
    server = scripted_server(seed=3)
    parts = StageDir(run_dir, "filter").parts()

    def rewrite(measured_by):
        for part in parts:
            table = pq.read_table(part)
            column = table.schema.get_field_index("measured_by")
            values = [measured_by(i, v) for i, v in enumerate(table.column("measured_by").to_pylist())]
            table = table.set_column(column, table.schema.field(column), pa.array(values, pa.string()))
            pq.write_table(table, part)

    rewrite(lambda i, v: v if i % 2 else "0123456789abcdef")
    rc, _, err = _chain(cli, generated[1], run_dir, server.url)
    assert rc == 2 and err.count("\n") == 1 and "measured 2 ways" in err and "--remeasure" in err, err
    assert not (run_dir / "chain").exists() and server.stats()["requests"] == 0
    rewrite(lambda i, v: None)
    rc, _, err = _chain(cli, generated[1], run_dir, server.url)
    assert rc == 2 and err.count("\n") == 1 and "do not say how they were measured" in err, err
    rc, _, err = _chain(cli, generated[1], run_dir, server.url, "--remeasure")
    assert rc == 0 and "measuring the steps anew (--remeasure)" in err, err
    recorded = StageDir(run_dir / "chain", "links").done_info(SHARD)["measurement"]
    assert recorded["remeasure"] is True and recorded["taken"] == {}
    # Nothing taken from starts that do not say: chain's own M.
    assert set(_measured(StageDir(run_dir / "chain", "tries").read())["attempts"]) == {32}


def test_a_rerun_of_the_same_command_resumes_under_the_same_settings_hash(cli, generated, tmp_path, scripted_server):
    run_dir = _copy(generated, tmp_path)
    cfg = tmp_path / "no-retry.yaml"
    cfg.write_text("generate:\n  attempts: 8\nchain:\n  llm: {max_attempts: 1}\n")
    flaky = scripted_server(seed=3, error_rate=0.5)
    tries, on_disk, resumed = StageDir(run_dir / "chain", "tries"), False, 0
    for _ in range(15):  # each run keeps the turns that got through; the last one finishes
        rc, _, err = _chain(cli, cfg, run_dir, flaky.url)
        assert rc in (0, 3) and "other settings" not in err, err
        assert err.count("attempts 8 taken from them") == 1
        assert ("resuming" in err) is on_disk, err  # the rows of the run before, under the same hash
        resumed += on_disk
        on_disk = bool(tries.shard_parts(SHARD))
        if rc == 0:
            break
    assert rc == 0 and resumed, err
    hashes = {read_metadata(p)["settings_hash"] for p in tries.shard_parts(SHARD)}
    assert len(hashes) == 1
    assert StageDir(run_dir / "chain", "links").done_info(SHARD)["settings_hash"] in hashes
    rc, _, err = _chain(cli, cfg, run_dir, flaky.url)
    assert rc == 0 and "already finished" in err, err
