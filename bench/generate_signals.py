"""bench/generate.py's signal part: SIGTERM at many points of a generate run, exit 143 within 10 s.

A small generate run (scripted server in its own process, real sandbox, `synthgen generate` as a
subprocess) runs once uninterrupted: the reference. Then one run directory is worked through by
a chain of runs, each stopped with SIGTERM at its own point: the first ones during start-up (a
fixed delay after synthgen installed its handler), the others once the server has answered a
given share of the reference's requests (spread over the whole run; the last one after every
request: the run's tail, scoring and writing). Each run resumes what the previous ones saved. A
run that finished before its signal starts a new chain. Every signal must end its run with exit
143 within STOP_TARGET_S, nothing marked finished; every finished chain must hold exactly the
reference's rows.

bench/generate.py's memory part adds its own two stops (a million seeds, thousands of requests
queued) to the exit latencies reported here.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from synthgen.demo.scripted import start_scripted_server
from synthgen.store.layout import StageDir

STOP_TARGET_S = 10.0  # SIGTERM to exit (Slurm preemption gives a grace period; the README promises seconds)
# What an interrupted-then-resumed run must reproduce of the uninterrupted one, row for row.
COMPARED = ["turn_id", "problem_id", "parent_id", "env", "turn", "code", "inputs", "outputs", "valid", "reason"]
COMPARED += ["pass_rate", "scored", "correct", "strategy", "summary"]
START_UP_DELAYS_S = (0.0, 0.5, 1.5)  # after synthgen's SIGTERM handler is in: imports, preflight, planning


@dataclass
class SignalFigures:
    exits: list[tuple[str, int, float]] = field(default_factory=list)  # (where, exit code, seconds to exit)
    failures: list[str] = field(default_factory=list)
    reference_s: float = 0.0
    chains: int = 0


def _handler_installed(pid: int, deadline_s: float = 60.0) -> bool:
    """Has the process installed its SIGTERM handler (synthgen's first line)? Before that the
    interpreter is still starting and a signal ends it as it would any program."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/status") as fh:
                caught = next(int(line.split()[1], 16) for line in fh if line.startswith("SigCgt:"))
        except (OSError, StopIteration):
            return False
        if caught & (1 << (signal.SIGTERM - 1)):
            return True
        time.sleep(0.005)
    return False


def served(server) -> int:
    """Requests the scripted server has answered; -1 when it is too busy to say within its timeout
    (a loaded machine: the caller asks again)."""
    try:
        return server.stats()["requests"]
    except OSError:  # (TimeoutError included)
        return -1


def stop_once(cmd: list[str], server, *, delay_s: float | None = None, requests: int | None = None):
    """Run `cmd`; SIGTERM it `delay_s` after its handler is in, or once the server's request count
    reaches `requests`. Returns (exit code, seconds from the signal to the exit or None if it
    finished first, last stderr line)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)  # a full pipe would stall it
    reader.start()
    sent = None
    try:
        if _handler_installed(proc.pid):
            start = time.monotonic()
            while proc.poll() is None:
                if delay_s is not None and time.monotonic() - start >= delay_s:
                    break
                if requests is not None and served(server) >= requests:
                    break
                time.sleep(0.02)
            if proc.poll() is None:
                sent = time.monotonic()
                proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join(timeout=10)
    waited = time.monotonic() - sent if sent is not None else None
    last = "".join(err).strip().splitlines()[-1:] or [""]
    return proc.returncode, waited, last[0]


def _rows(run_dir: Path):
    return StageDir(run_dir, "generate").read().sort("turn_id").select(COMPARED)


def signal_part(seeds_dir: Path, work: Path, args, stop_points: int) -> SignalFigures:
    """SIGTERM at `stop_points` points of a generate run over the seeds in `seeds_dir`."""
    figures = SignalFigures()
    with start_scripted_server(
        "bank", mode="process", seed=args.seed, latency="fixed", latency_s=args.signal_latency_s
    ) as server:

        def command(run_dir: Path) -> list[str]:
            cmd = [sys.executable, "-m", "synthgen", "generate", "--run-dir", str(run_dir), "--base-url", server.url]
            cmd += ["--attempts", "4", "--turns", "3", "--lineages-per-seed", "4", "--max-in-flight", "8"]
            return cmd + ["--no-progress"]

        def fresh(name: str) -> Path:
            run_dir = work / name
            shutil.copytree(seeds_dir, run_dir / "seeds", symlinks=True)
            return run_dir

        reference_dir = fresh("reference")
        t0 = time.monotonic()
        done = subprocess.run(command(reference_dir), capture_output=True, text=True, timeout=1800)
        figures.reference_s = time.monotonic() - t0
        if done.returncode != 0:
            figures.failures.append(f"signals: the reference run exited {done.returncode}: {done.stderr[-300:]}")
            return figures
        reference = _rows(reference_dir)
        total = server.stats()["requests"]  # (the reference's own requests: the server is fresh)
        by_requests = stop_points - len(START_UP_DELAYS_S)
        points = [("start-up", {"delay_s": d}) for d in START_UP_DELAYS_S[:stop_points]]
        shares = [(i + 1) / by_requests for i in range(by_requests)]
        points += [(f"{share:.0%} of requests", {"share": share}) for share in shares]

        run_dir, chain_start = None, 0
        for where, point in points:
            if run_dir is None:
                figures.chains += 1
                run_dir, chain_start = fresh(f"chain-{figures.chains}"), server.stats()["requests"]
            how = {"delay_s": point["delay_s"]} if "delay_s" in point else {}
            if "share" in point:  # this chain's requests so far: a resumed run asks only for what is missing
                how = {"requests": chain_start + max(1, round(point["share"] * total))}
            code, waited, last = stop_once(command(run_dir), server, **how)
            stage = StageDir(run_dir, "generate")
            if waited is None or (code == -signal.SIGTERM and stage.done_shards()):
                # It finished before the signal (or was exiting when it came: nothing was lost).
                if code not in (0, -signal.SIGTERM):
                    figures.failures.append(f"signals: a run exited {code} ({where}): {last}")
                elif not _rows(run_dir).equals(reference):
                    figures.failures.append(f"signals: chain {figures.chains} differs from the uninterrupted run")
                run_dir = None
                continue
            figures.exits.append((where, code, waited))
            if code != 143 or waited > STOP_TARGET_S:
                figures.failures.append(f"signals: SIGTERM at {where}: exit {code} after {waited:.1f} s ({last})")
            if stage.done_shards():
                figures.failures.append(f"signals: a run stopped at {where} marked its shard finished")
        if run_dir is not None:  # finish the last chain and compare it
            done = subprocess.run(command(run_dir), capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                figures.failures.append(f"signals: the last re-run exited {done.returncode}: {done.stderr[-300:]}")
            elif not _rows(run_dir).equals(reference):
                figures.failures.append(f"signals: chain {figures.chains} differs from the uninterrupted run")
    return figures
