"""kill -9 at every LLM cache commit of a small `generate` run and of a small `chain` run, then a
re-run: the rows equal those of an uninterrupted run, at every kill point.

The kill is tests/helpers/commit_kill's wrapper of the request cache (SYNTHGEN_TEST_KILL_AFTER_COMMITS=k):
the process sends itself SIGKILL right after its k-th commit (a commit is one answer, all its samples), so kill point
k is the state after k committed answers, for every k from 1 to the number of commits of the
uninterrupted run. The rows are compared whole, token counts included. Two processes per
point (the killed run and its re-run), over a hundred points: an interpreter that imports the CLI
costs seconds of CPU, so the runs are forks of one launcher that imported it and built its command
tree once (what every `python -m synthgen` does first); each fork then runs `synthgen.cli.app.main`
with its command line, as `python -m synthgen` does, in a process of its own that really dies
of the SIGKILL. The uninterrupted reference runs are plain `python -m synthgen` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from contextlib import closing

import pytest

from synthgen.llm.cache import RequestCache
from synthgen.store.layout import StageDir
from tests.helpers.commit_kill import KILL_AFTER_COMMITS_ENV, kill_path

# Small runs: 8 seeds x 4 turns x (a teacher answer + a student answer of M = 2 samples), about 60
# commits (one per answer) in generate; up to 8 chains x 2 steps x up to 3 tries x 2 answers in chain.
COMMON = ["--no-progress", "--no-llm-probe", "--sandbox-workers", "1", "--max-in-flight", "4"]
COMMON += ["--wait-ready", "2m"]  # a server slow to answer on a busy machine is not a failed start
GENERATE = ["--max-seeds", "8", "--lineages-per-seed", "1", "--turns", "4", "--attempts", "2", "--no-mutation-score"]
CHAIN = ["--start-band", "0.05:0.55", "--attempts", "2", "--tries", "3", "--max-chains", "8"]
# What each stage writes, compared table for table (the rows hold no wall-clock columns).
OUTPUTS = {"generate": {"generate": "turn_id"}}
OUTPUTS["chain"] = {"chain/tries": "turn_id", "chain/problems": "problem_id", "chain/links": "link_id"}
PARALLEL = 6  # runs at once: they mostly wait on the server and the sandbox
MIN_POINTS = 100

# Reads batches of runs as JSON lines ({"jobs": [{argv, env, log}], "parallel": P}) and answers
# each batch with one JSON list of [exit code (negative: the signal that ended the run), CPU seconds].
LAUNCHER = textwrap.dedent("""
    import gc, json, os, sys
    import synthgen.cli.app
    import synthgen.llm.client, synthgen.sandbox, synthgen.stages.chain.run, synthgen.stages.generate.run  # noqa: F401
    import pandas  # noqa: F401  (pyarrow imports it at a run's first write)

    tree = synthgen.cli.app.command_tree(synthgen.cli.app.app)
    synthgen.cli.app.command_tree = lambda app: tree
    gc.collect()
    gc.freeze()  # the forks share the imported modules' pages instead of copying them on collection

    def run(job):
        os.environ.update(job["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.argv = ["synthgen", *job["argv"]]
        code = 1
        try:
            synthgen.cli.app.main(job["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    for line in sys.stdin:
        batch = json.loads(line)
        pending, running, codes = list(enumerate(batch["jobs"])), {}, {}
        while pending or running:
            while pending and len(running) < batch["parallel"]:
                index, job = pending.pop(0)
                pid = os.fork()
                if pid == 0:
                    run(job)
                running[pid] = index
            pid, status, usage = os.wait4(-1, 0)
            codes[running.pop(pid)] = [os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime]
        print(json.dumps([codes[i] for i in range(len(codes))]), flush=True)
""")


class Launcher:
    """The forking launcher, as a context manager; `run(jobs)` runs a batch and returns exit codes."""

    def __enter__(self) -> Launcher:
        self.cpu_s = 0.0
        self.proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": kill_path()},  # each fork sets its own kill point
        )
        return self

    def run(self, jobs: list[dict]) -> list[int]:
        """Exit codes of the runs, in order; their CPU time (the sandbox's included) adds to `cpu_s`."""
        self.proc.stdin.write(json.dumps({"jobs": jobs, "parallel": PARALLEL}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the launcher died (exit {self.proc.poll()})"
        answers = json.loads(line)
        self.cpu_s += sum(cpu for _, cpu in answers)
        return [code for code, _ in answers]

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def _argv(stage: str, run_dir, url: str) -> list[str]:
    extra = GENERATE if stage == "generate" else CHAIN
    return [stage, "--run-dir", str(run_dir), "--base-url", url, *COMMON, *extra]


def _commits(run_dir, stage: str) -> int:
    """Commits made so far to the stage's request cache: one per answer, its samples stamped with
    one time (RequestCache.put_many)."""
    [path] = (run_dir / "cache").glob(f"{stage}-*.sqlite")
    RequestCache(path).close()  # recovers what the killed process left in the write-ahead log
    with closing(sqlite3.connect(path)) as db:
        return db.execute("SELECT COUNT(DISTINCT created) FROM samples").fetchone()[0]


def _outputs(run_dir, stage: str) -> dict:
    return {name: StageDir(run_dir, name).read().sort(key) for name, key in OUTPUTS[stage].items()}


def _python_m_synthgen(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "synthgen", *argv], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_kill_9_at_every_cache_commit_of_generate_and_chain_then_a_rerun_equals_an_uninterrupted_run(
    seeds_run, tmp_path, scripted_server, cli
):
    started = time.monotonic()
    url = scripted_server().url
    base = {"generate": tmp_path / "generate-base", "chain": tmp_path / "chain-base"}
    shutil.copytree(seeds_run / "seeds", base["generate"] / "seeds")

    # The references: one uninterrupted run of each stage; chain's input is the finished
    # generate reference, filtered and binned.
    reference = {"generate": tmp_path / "generate-ref", "chain": tmp_path / "chain-ref"}
    shutil.copytree(base["generate"], reference["generate"])
    _python_m_synthgen(_argv("generate", reference["generate"], url))
    shutil.copytree(reference["generate"], base["chain"], ignore=shutil.ignore_patterns("cache"))
    for stage in ("filter", "bin"):
        rc, _, err = cli(stage, "--run-dir", base["chain"])
        assert rc == 0, err
    shutil.copytree(base["chain"], reference["chain"])
    _python_m_synthgen(_argv("chain", reference["chain"], url))
    expected = {stage: _outputs(run_dir, stage) for stage, run_dir in reference.items()}
    assert expected["generate"]["generate"].height == 32
    assert expected["chain"]["chain/tries"].height > 0
    total = {stage: _commits(run_dir, stage) for stage, run_dir in reference.items()}

    # Point k of a stage: a fresh copy of its input, killed right after its k-th commit.
    points = [(stage, k) for stage in total for k in range(1, total[stage] + 1)]
    run_dirs = {}
    for stage, k in points:
        run_dirs[stage, k] = tmp_path / f"{stage}-k{k:03d}"
        shutil.copytree(base[stage], run_dirs[stage, k])

    def jobs(phase: str, env) -> list[dict]:  # env: kill point -> environment of its run
        return [
            {
                "argv": _argv(stage, run_dirs[stage, k], url),
                "env": env(k),
                "log": str(tmp_path / f"{stage}-k{k:03d}.{phase}.log"),
            }
            for stage, k in points
        ]

    with Launcher() as launcher:
        killed = launcher.run(jobs("killed", lambda k: {KILL_AFTER_COMMITS_ENV: str(k)}))
        exercised = {
            point
            for point, code in zip(points, killed)
            if code == -signal.SIGKILL and _commits(run_dirs[point], point[0]) == point[1]
        }
        rerun = launcher.run(jobs("rerun", lambda k: {}))

    failed_reruns = [point for point, code in zip(points, rerun) if code != 0]
    assert not failed_reruns, (failed_reruns, (tmp_path / "{}-k{:03d}.rerun.log".format(*failed_reruns[0])).read_text())
    differ = [point for point in points if not _equal(_outputs(run_dirs[point], point[0]), expected[point[0]])]
    counts = {stage: sum(1 for s, _ in exercised if s == stage) for stage in total}
    took = f"{time.monotonic() - started:.0f} s, {launcher.cpu_s:.0f} CPU-s in the kill points' runs"
    print(f"kill points {counts} of commits {total}; differing {differ}; {took}")
    assert exercised == set(points), sorted(set(points) - exercised)  # each killed right after its commit
    assert not differ
    assert sum(counts.values()) >= MIN_POINTS and min(counts.values()) > 0


def _equal(tables: dict, expected: dict) -> bool:
    return all(tables[name].equals(expected[name]) for name in expected)
