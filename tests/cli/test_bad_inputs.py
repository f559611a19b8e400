"""Bad input through the CLI: exit 2, one line naming the file and the column, no traceback,
nothing marked finished.

One case per line: (name, setup, argv, words expected in the error). `setup(run)` builds the run
directory from the helpers below (each writes a finished stage from a good table with `changes`
applied); `argv` may use {run}, {tmp} (the test's folder) and {url} (a scripted server, for the
stages that talk to one). To add a case, add a line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import CHAIN_LINKS, PROBLEMS, SEEDS, problem_id, table_from_rows
from tests.helpers.problem_rows import problem_row

Change = Callable[[pa.Table], pa.Table]


# -- good tables ------------------------------------------------------------------------------------
def problems(n: int = 3) -> pa.Table:
    rows = []
    for i in range(n):
        code = f"def f(x):\n    return x * {i + 2} - {i}\n"
        rows.append(
            problem_row(
                turn_id=f"s{i}/induction/l{i}/1",
                problem_id=problem_id("induction", code, ["1"], None),
                seed_id=f"s{i}",
                lineage_id=f"l{i}",
                env="induction",
                code=code,
                inputs=["1"],
                outputs=["2"],
                pass_rate=0.125 * (i + 1),
                attempts=8,
                scored=8,
                correct=i + 1,
            )
        )
    return table_from_rows(rows, PROBLEMS)


def seeds_table() -> pa.Table:
    return table_from_rows(
        [
            dict(
                seed_id=f"s{i}",
                source="dir",
                origin="o",
                start_line=1,
                end_line=30,
                num_lines=30,
                text=f"x = {i}\n" * 30,
            )
            for i in range(3)
        ],
        SEEDS,
    )


def links_table() -> pa.Table:
    return table_from_rows(
        [
            dict(
                link_id=f"c:{i}",
                chain_id="c",
                level=level,
                position=i,
                problem_id=f"p{i}",
                pass_rate=0.5,
                env="induction",
            )
            for i, level in enumerate(("hard", "medium", "easy"))
        ],
        CHAIN_LINKS,
    )


# -- changes ----------------------------------------------------------------------------------------
def put(name: str, value, row: int = 0) -> Change:
    """Column `name` with `value` in `row` (keeps the column's type)."""

    def change(t: pa.Table) -> pa.Table:
        values = t.column(name).to_pylist()
        values[row] = value
        return t.set_column(t.column_names.index(name), name, pa.array(values, t.schema.field(name).type))

    return change


def retype(name: str, values: list, type_: pa.DataType) -> Change:
    """Column `name` replaced by `values` of another type (cycled to the table's length)."""

    def change(t: pa.Table) -> pa.Table:
        column = pa.array([values[i % len(values)] for i in range(t.num_rows)], type_)
        return t.set_column(t.column_names.index(name), name, column)

    return change


def drop(name: str) -> Change:
    return lambda t: t.drop_columns([name])


def apply(table: pa.Table, changes) -> pa.Table:
    for change in changes:
        table = change(table)
    return table


# -- setups: each writes a finished stage (unless it says otherwise) --------------------------------
def stage_part(
    stage: str,
    shard: str,
    table: pa.Table,
    *,
    index: int = 0,
    digest: str = "g",
    done: bool = True,
    meta: dict | None = None,
) -> Callable[[Path], None]:
    def setup(run: Path) -> None:
        target = StageDir(run, stage)
        target.write_part(shard, index, table, meta or file_metadata(stage, digest))
        if done:
            target.mark_done(shard, {"settings_hash": digest})

    return setup


GEN = StageDir.shard_name(0, 1)


def generate(*changes: Change, **kw) -> Callable[[Path], None]:
    return stage_part("generate", GEN, apply(problems(), changes), **kw)


def kept(*changes: Change, **kw) -> Callable[[Path], None]:
    return stage_part("filter", "kept", apply(problems(), changes), **kw)


def seeds(*changes: Change, **kw) -> Callable[[Path], None]:
    return stage_part("seeds", GEN, apply(seeds_table(), changes), **kw)


def links(*changes: Change) -> Callable[[Path], None]:
    return stage_part("chain/links", GEN, apply(links_table(), changes))


def both(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(run: Path) -> None:
        for s in setups:
            s(run)

    return setup


def file_at(relative: str, table: pa.Table | None = None) -> Callable[[Path], None]:
    """A file at run/../relative: a Parquet table, or (no table) plain text."""

    def setup(run: Path) -> None:
        path = run.parent / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path) if table is not None else path.write_text("not a folder")

    return setup


def config(text: str | bytes, name: str = "run.yaml") -> Callable[[Path], None]:
    """A config file beside the run directory ({tmp}/run.yaml), with a finished seeds stage."""

    def setup(run: Path) -> None:
        seeds()(run)
        path = run.parent / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())

    return setup


def corrupt_kept(run: Path) -> None:
    StageDir(run, "filter").path.mkdir(parents=True)
    (run / "filter" / "kept.part-00000.parquet").write_bytes(b"PAR1 garbage")
    StageDir(run, "filter").mark_done("kept", {"settings_hash": "g"})


FILTER = ("filter", "--run-dir", "{run}")
BIN = ("bin", "--run-dir", "{run}")
STATS = ("stats", "{run}")
GENERATE = ("generate", "--run-dir", "{run}", "--base-url", "{url}", "--no-progress")
CHAIN = ("chain", "--run-dir", "{run}", "--base-url", "{url}", "--no-progress")
SEEDS_TABLE = seeds_table()

CASES = [
    # filter reads generate
    (
        "pass rate as text",
        generate(retype("pass_rate", ["0.5"], pa.string())),
        FILTER,
        "column 'pass_rate' is string, expected double",
    ),
    ("pass rate NaN", generate(put("pass_rate", float("nan"), 1)), FILTER, "column 'pass_rate' is NaN in row 1"),
    ("pass rate above 1", generate(put("pass_rate", 1.5)), FILTER, "column 'pass_rate' is 1.5 in row 0, outside"),
    ("no pass rate column", generate(drop("pass_rate")), FILTER, "has no column 'pass_rate'"),
    ("no valid column", generate(drop("valid")), FILTER, "has no column 'valid'"),
    ("turn as text", generate(retype("turn", ["1"], pa.string())), FILTER, "column 'turn' is string, expected int16"),
    ("turn beyond int16", generate(retype("turn", [70000], pa.int64())), FILTER, "column 'turn' does not fit int16"),
    ("inputs as text", generate(retype("inputs", ["1"], pa.string())), FILTER, "column 'inputs' is string"),
    ("unknown env", generate(put("env", "cooking", 2)), FILTER, "column 'env' holds unknown value 'cooking' in row 2"),
    ("null turn id", generate(put("turn_id", None)), FILTER, "column 'turn_id' is null in row 0"),
    ("valid as int", generate(retype("valid", [1], pa.int8())), FILTER, "column 'valid' is int8, expected bool"),
    (
        "second part of another schema",
        both(generate(), generate(retype("pass_rate", ["x"], pa.string()), index=1)),
        FILTER,
        f"{GEN}.part-00001.parquet: column 'pass_rate' is string",
    ),
    (
        "second part a seeds table",
        both(generate(), stage_part("generate", GEN, SEEDS_TABLE, index=1)),
        FILTER,
        f"{GEN}.part-00001.parquet has no column",
    ),
    ("unfinished generate shard", generate(done=False), FILTER, f"have no completion marker ({GEN})"),
    (
        "part of other settings",
        both(generate(), stage_part("generate", GEN, problems(), index=1, digest="other", done=False)),
        FILTER,
        "was written with settings other",
    ),
    (
        "shards of two splits",
        both(generate(), stage_part("generate", StageDir.shard_name(1, 2), problems())),
        FILTER,
        "1-way and 2-way splits",
    ),
    (
        "markers of two settings",
        both(
            stage_part("generate", StageDir.shard_name(0, 2), problems()),
            stage_part("generate", StageDir.shard_name(1, 2), problems(), digest="h2"),
        ),
        FILTER,
        "mixes shards made with different settings",
    ),
    (
        "schema version from the future",
        generate(meta={**file_metadata("generate", "g"), "synthgen.schema_version": "99"}),
        FILTER,
        "has schema version 99",
    ),
    ("filter run dir is a file", file_at("run"), FILTER, "is a file, not a folder"),
    # bin reads filter
    ("kept: unknown env", kept(put("env", "knitting")), BIN, "column 'env' holds unknown value 'knitting'"),
    ("kept: no code column", kept(drop("code")), BIN, "has no column 'code'"),
    ("kept: corrupt part", corrupt_kept, BIN, "cannot read Parquet file"),
    ("kept: no marker", kept(done=False), BIN, "have no completion marker (kept)"),
    ("kept: pass rate as text", kept(retype("pass_rate", ["half"], pa.string())), BIN, "column 'pass_rate' is string"),
    ("bin run dir is a file", file_at("run"), BIN, "is a file, not a folder"),
    # stats reads every stage
    (
        "stats: pass rate as text",
        generate(retype("pass_rate", ["0.5"], pa.string())),
        STATS,
        "column 'pass_rate' is string",
    ),
    ("stats: seeds text as int", seeds(retype("text", [5], pa.int64())), STATS, "column 'text' is int64"),
    (
        "stats: chain position as text",
        both(generate(), links(retype("position", ["0"], pa.string()))),
        STATS,
        "column 'position' is string, expected int16",
    ),
    ("stats: kept without turn id", both(generate(), kept(drop("turn_id"))), STATS, "has no column 'turn_id'"),
    ("stats: run dir is a file", file_at("run"), STATS, "is a file, not a folder"),
    # generate reads seeds, chain reads bin
    ("seeds text as int", seeds(retype("text", [5], pa.int64())), GENERATE, "column 'text' is int64, expected string"),
    ("seeds without text", seeds(drop("text")), GENERATE, "has no column 'text'"),
    ("unfinished seeds shard", seeds(done=False), GENERATE, f"have no completion marker ({GEN})"),
    ("chain: NaN pass rate", kept(put("pass_rate", float("nan"))), CHAIN, "column 'pass_rate' is NaN"),
    ("chain: unknown env", kept(put("env", "astrology")), CHAIN, "column 'env' holds unknown value 'astrology'"),
    # config files and flags: at any depth, for every stage
    (
        "config not UTF-8",
        config(b"generate: {turns: 6}\n# \xff\xfe\n"),
        ("--config", "{tmp}/run.yaml", *GENERATE),
        "not UTF-8",
    ),
    (
        "config nested wrong type",
        config("generate:\n  teacher: {max_tokens: lots}\n"),
        ("--config", "{tmp}/run.yaml", *GENERATE),
        "generate.teacher.max_tokens",
    ),
    (
        "config unknown nested key",
        config("chain:\n  sandbox: {timeout: 3}\n"),
        ("--config", "{tmp}/run.yaml", *CHAIN),
        "unknown setting 'chain.sandbox.timeout'",
    ),
    (
        "config section not a mapping",
        config("filter: [1, 2]\n"),
        ("--config", "{tmp}/run.yaml", *FILTER),
        "must be a mapping",
    ),
    (
        "config list where a number goes",
        config("bin:\n  seed: [1]\n"),
        ("--config", "{tmp}/run.yaml", *BIN),
        "bin.seed",
    ),
    (
        "config TOML syntax error",
        config("[generate\nturns = 6\n", "run.toml"),
        ("--config", "{tmp}/run.toml", *GENERATE),
        "not valid TOML",
    ),
    ("attempts beyond the bound", seeds(), (*GENERATE, "--attempts", "100000000"), "generate.attempts"),
    ("unknown environment flag", seeds(), (*GENERATE, "--envs", "induction,golf"), "unknown environment 'golf'"),
    ("in-flight zero", seeds(), (*GENERATE, "--max-in-flight", "0"), "generate.max_in_flight"),
    ("outage not a duration", seeds(), (*GENERATE, "--max-outage", "soon"), "not a duration"),
    ("shard out of range", seeds(), (*GENERATE, "--shard", "4", "--num-shards", "2"), "out of range"),
    ("bin bands overlap", kept(), (*BIN, "--scheme", "custom", "--bins", "a=0:0.6,b=0.5:1"), "overlap"),
    (
        "filter band reversed",
        generate(),
        (*FILTER, "--band-low", "0.9", "--band-high", "0.1"),
        "--band-low (0.9) exceeds --band-high (0.1)",
    ),
    (
        "train model path missing",
        kept(),
        ("train", "--data", "{run}/filter", "--model", "{tmp}/no-model", "--learning-rate", "1e-6"),
        "no-model",
    ),
    ("seeds min above max", seeds(), ("seeds", "--run-dir", "{run}", "--min-lines", "60"), "exceeds --max-lines"),
    # seeds reads source files
    (
        "starcoder content as int",
        file_at("sc.parquet", pa.table({"content": [1, 2]})),
        ("seeds", "starcoder", "{tmp}/sc.parquet", "--run-dir", "{run}"),
        "column 'content' is int64, expected string",
    ),
]


@pytest.fixture(scope="module")
def url():
    from synthgen.demo.scripted.launch import start_scripted_server

    with start_scripted_server(seed=0) as server:
        yield server.url


def markers(root: Path) -> set[Path]:
    return set(root.rglob("*.done"))


@pytest.mark.parametrize("setup,argv,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_nothing_finished(setup, argv, words, tmp_path, cli, url):
    run = tmp_path / "run"
    setup(run)
    before = markers(tmp_path)
    rc, _, err = cli(*[a.format(run=run, tmp=tmp_path, url=url) for a in argv])
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert words in err
    assert markers(tmp_path) == before
