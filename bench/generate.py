"""Benchmark: does `synthgen generate` keep the LLM server full end to end, and stay small on a million seeds?

    python bench/generate.py                  # about 15 minutes on 2 cores
    python bench/generate.py --no-baseline --skip-memory --lineages 100   # a quick look
    python bench/generate.py --only signals   # SIGTERM at 18 points of a small run (a few minutes)

Part 1, throughput. Synthetic seeds (made here, the same on every machine) go through the real
generate stage in this process: the LLM client, the turn loop, the real sandbox (bubblewrap where it
works), against the scripted server in its own process (the problem bank answering: scripted, NOT
a model). Two latency models, each with a request's latency growing with its n (a student request
asks for n = M samples): fixed, and lognormal with a heavy tail (sigma 1.5, capped at 20x the
median as max_tokens caps a real answer). Per run it reports
  - requests in flight as a share of the bound, averaged over the whole run (first request to last
    lineage finished), and the share of that time the request queue held work;
  - wall time against the ideal, ideal = the server's summed latencies / the bound;
  - the sandbox's busy share (worker-seconds with a job running / workers x wall) and turns/s.
Each model also runs as the baseline, the wave-1 behaviour: as many lineages active as request
slots (`--max-active` = `--max-in-flight`), so a lineage in the sandbox or between turns holds a
slot it does not use. Both runs see the same latencies (fresh servers, same seed, same requests).

Part 2, memory. A seeds stage of 1,000,000 synthetic seeds is written directly (Parquet, 64Ki-row
row groups); `synthgen generate` runs on it as a subprocess against a zero-latency server and is
stopped with SIGTERM after a bounded number of requests, then resumed (the resume reads what is on
disk) and stopped again. The peak resident memory (VmHWM) of each process must stay under 1 GiB.

Part 3, signals (bench/generate_signals.py). SIGTERM at 18 points of a small generate run (3
during start-up, 15 spread over its requests, the last in its tail), each run resuming what the
one before saved; the re-runs must end with exactly the rows of an uninterrupted run. With the
memory part's two stops that is 20 points; the worst and median exit latencies are reported.

Targets (exit 1 on a miss): >= 95% of the bound in flight and <= 1.10x the ideal for both latency
models; peak RSS < 1024 MiB in both memory runs; every SIGTERM (memory runs included) ends its
run with exit 143 within 10 s, and the re-runs equal the uninterrupted run. The last line holds
the ratios. Figures for bench/paired.py (each of a part that ran): wall_over_ideal and
in_flight_share (fixed latency), lognormal_wall_over_ideal, lognormal_in_flight_share,
rss_fresh_mib, rss_resumed_mib, sigterm_worst_s, signals_ok (1 or 0); e.g.

    python bench/paired.py --within wall_over_ideal=0.05 bench/generate.py --no-baseline --skip-memory \
        --skip-signals --lineages 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import hashlib
import io
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import TREE, report_figures  # noqa: E402

sys.path.insert(0, TREE)
# The generate runs started as subprocesses import the same synthgen.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (TREE, os.environ.get("PYTHONPATH")) if p)

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from generate_signals import STOP_TARGET_S, served, signal_part  # noqa: E402
from rich.console import Console  # noqa: E402

from synthgen.demo.scripted import start_scripted_server  # noqa: E402
from synthgen.stages.generate.run import GenerateStage  # noqa: E402
from synthgen.stages.generate.settings import GenerateSettings  # noqa: E402
from synthgen.store.files import file_metadata  # noqa: E402
from synthgen.store.layout import StageDir  # noqa: E402
from synthgen.store.records import SEEDS, seed_id  # noqa: E402
from synthgen.turns.loop import TurnLoop  # noqa: E402

IN_FLIGHT_TARGET, WALL_TARGET, RSS_TARGET_MIB = 0.95, 1.10, 1024.0
SHARD = StageDir.shard_name(0, 1)

# Seed snippets: a few shapes of 25-50 lines, numbered so that every seed is distinct.
_BODY = [
    "    total = 0",
    "    for i, value in enumerate(values):",
    "        if value %% %(m)d == %(r)d:",
    "            total += value * i",
    "        elif value > %(k)d:",
    "            total -= value // %(m)d",
    "        else:",
    "            total ^= i",
    "    seen = {}",
    "    for value in values:",
    "        seen[value %% %(m)d] = seen.get(value %% %(m)d, 0) + 1",
    "    best = max(seen.items(), key=lambda kv: (kv[1], -kv[0])) if seen else (0, 0)",
    "    window = values[: %(k)d]",
    "    if window:",
    "        total += sum(window) // len(window)",
    "    text = ','.join(str(v) for v in values[:%(r)d])",
    "    total += len(text)",
    "    while total > %(k)d * 1000:",
    "        total //= 2",
    "    result = []",
    "    for a, b in zip(values, values[1:]):",
    "        result.append(a - b if a > b else b - a)",
    "    total += sum(result[:%(m)d])",
    "    if best[1] > 1:",
    "        total += best[0]",
]


@functools.cache
def _template(lines: int, doubled: bool) -> str:
    head = ["def step_%(i)d(values, k=%(k)d):", '    """Shape %(shape)d of the benchmark seeds."""']
    return "\n".join(head + _BODY[:lines] * (1 + doubled) + ["    return total"])


def seed_text(i: int) -> str:
    """Seed i: 25-50 lines, distinct for every i, the same on every machine."""
    params = {"i": i, "shape": i % 7, "m": 2 + i % 11, "r": i % 13, "k": 3 + i % 17}
    return _template(21 + i % 5, i % 7 == 0) % params


def write_seeds(run_dir: Path, count: int, chunk: int = 65536) -> None:
    """A finished seeds stage of `count` synthetic seeds, as `synthgen seeds` lays it out."""
    stage = StageDir(run_dir, "seeds")
    digest = hashlib.sha256(f"bench-seeds-{count}".encode()).hexdigest()[:16]
    meta = {k.encode(): v.encode() for k, v in file_metadata("seeds", digest, {"shard": SHARD}).items()}
    schema = SEEDS.with_metadata(meta)
    stage.path.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(stage.part_path(SHARD, 0), schema, compression="zstd") as writer:
        for start in range(0, count, chunk):
            texts = [seed_text(i) for i in range(start, min(count, start + chunk))]
            lines = [t.count("\n") + 1 for t in texts]
            cols = {
                "seed_id": [seed_id(t) for t in texts],
                "source": ["dir"] * len(texts),
                "origin": [f"bench/{start + j}.py" for j in range(len(texts))],
                "repo": [None] * len(texts),
                "path": [f"{start + j}.py" for j in range(len(texts))],
                "start_line": [1] * len(texts),
                "end_line": lines,
                "num_lines": lines,
                "text": texts,
            }
            writer.write_table(pa.table(cols, schema=schema))
    stage.mark_done(SHARD, {"rows": count, "settings_hash": digest, "total_seeds": count})


# -- part 1: throughput ---------------------------------------------------------------------------
class TimedLoop(TurnLoop):
    """The turn loop, with the moments its units started and finished (setup and bookkeeping excluded)."""

    async def _keep_running(self, pending, max_active, stop):
        self.t0 = time.monotonic()
        self.area0, self.busy0 = self.runner.llm.in_flight_area(), self.runner.pool.busy_seconds()
        self.queued_time = 0.0
        watcher = asyncio.create_task(self._watch())
        try:
            await super()._keep_running(pending, max_active, stop)
        finally:
            self.t1 = time.monotonic()
            self.area1, self.busy1 = self.runner.llm.in_flight_area(), self.runner.pool.busy_seconds()
            watcher.cancel()

    async def _watch(self) -> None:
        """How much of the run the request queue held work (sampled every 5 ms)."""
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.005)
            now = time.monotonic()
            if self.runner.llm.queued:
                self.queued_time += now - last
            last = now


@dataclass
class Figures:
    label: str
    wall: float
    ideal: float
    in_flight_share: float
    queued_share: float
    sandbox_share: float
    turns: int
    requests: int

    @property
    def ratio(self) -> float:
        return self.wall / self.ideal

    def line(self) -> str:
        return (
            f"{self.label:>26}: wall {self.wall:6.1f} s, ideal {self.ideal:6.1f} s, {self.ratio:.3f}x ideal; "
            f"in flight {self.in_flight_share:6.1%} of bound (queue held work {self.queued_share:5.1%} of the run); "
            f"sandbox busy {self.sandbox_share:5.1%}; {self.turns / self.wall:5.2f} turns/s ({self.turns} turns, "
            f"{self.requests} requests)"
        )


def run_once(label: str, seeds_dir: Path, latency: dict, args, max_active: int | None) -> Figures:
    with (
        tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp,
        start_scripted_server("bank", mode="process", seed=args.seed, **latency) as server,
    ):
        run_dir = Path(tmp)
        os.symlink(seeds_dir, run_dir / "seeds")
        role = {"base_url": server.url, "timeout_s": 600}
        settings = GenerateSettings(
            run_dir=run_dir,
            teacher=role,
            student=role,
            attempts=args.attempts,
            turns=args.turns,
            max_in_flight=args.bound,
            max_active=max_active,
            progress=False,
            sandbox={"workers": args.sandbox_workers},
        )
        loop = TimedLoop(GenerateStage(settings), console=Console(file=io.StringIO()))
        loop.run()
        stats = server.stats()
    wall = loop.t1 - loop.t0
    workers = loop.runner.pool.workers
    return Figures(
        label,
        wall,
        stats["latency_sum_s"] / args.bound,
        (loop.area1 - loop.area0) / wall / args.bound,
        loop.queued_time / wall,
        (loop.busy1 - loop.busy0) / (workers * wall),
        loop.writer.written,
        stats["requests"],
    )


# -- part 2: memory -------------------------------------------------------------------------------
def peak_rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def stopped_run(cmd: list[str], server, requests: int, timeout_s: float) -> tuple[float, int, float, float]:
    """Start generate, SIGTERM it once the server answered `requests` more.

    Returns (peak RSS MiB, exit code, seconds in all, seconds from the signal to the exit). Its
    stderr is read as it comes (a full pipe would stall the child, which is not what is measured)."""
    start = server.stats()["requests"]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(proc.stderr), daemon=True)
    reader.start()
    peak, signalled = 0.0, None
    try:
        while proc.poll() is None and time.monotonic() - t0 < timeout_s:
            peak = max(peak, peak_rss_mib(proc.pid))
            if served(server) - start >= requests:
                peak = max(peak, peak_rss_mib(proc.pid))
                signalled = time.monotonic()
                proc.send_signal(signal.SIGTERM)
                break
            time.sleep(0.05)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:  # flushing rows on the way out
            peak = max(peak, peak_rss_mib(proc.pid))
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(timeout=10)
    stop_s = time.monotonic() - signalled if signalled is not None else float("nan")
    if proc.returncode not in (143, 0):
        print(f"warning: generate exited {proc.returncode}: {''.join(err).strip().splitlines()[-1:]}", file=sys.stderr)
    return peak, proc.returncode, time.monotonic() - t0, stop_s


def memory_part(args) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory(prefix="bench-generate-1m-") as tmp:
        run_dir = Path(tmp)
        t0 = time.monotonic()
        write_seeds(run_dir, args.big_seeds)
        size = sum(p.stat().st_size for p in (run_dir / "seeds").glob("*.parquet")) / 2**20
        print(f"memory: wrote {args.big_seeds:,} seeds ({size:.0f} MiB of Parquet) in {time.monotonic() - t0:.0f} s")
        out = []
        with start_scripted_server("bank", mode="process", seed=args.seed) as server:
            cmd = [sys.executable, "-m", "synthgen", "generate", "--run-dir", str(run_dir), "--base-url", server.url]
            cmd += ["--attempts", "2", "--turns", "6", "--max-in-flight", "256", "--no-progress"]
            for phase in ("fresh", "resumed"):
                peak, code, secs, stop_s = stopped_run(cmd, server, args.big_requests, timeout_s=900)
                rows = sum(pq.ParquetFile(p).metadata.num_rows for p in StageDir(run_dir, "generate").parts())
                print(
                    f"memory: {phase} run over {args.big_seeds:,} seeds stopped after {args.big_requests} requests "
                    f"(exit {code} {stop_s:.1f} s after SIGTERM, {secs:.0f} s, {rows} rows on disk): "
                    f"peak RSS {peak:.0f} MiB"
                )
                out.append((phase, peak, code, stop_s))
        return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lineages", type=int, default=200, help="seeds (one lineage each) of the throughput runs")
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--attempts", type=int, default=8, help="student attempts M (n of a student request)")
    p.add_argument("--bound", type=int, default=16, help="--max-in-flight: LLM requests in flight at most")
    p.add_argument("--fixed-s", type=float, default=0.5, help="the fixed latency of one request with n = 1")
    p.add_argument("--median-s", type=float, default=0.1, help="lognormal median latency with n = 1")
    p.add_argument("--sigma", type=float, default=1.5, help="lognormal sigma")
    p.add_argument("--cap-x", type=float, default=20.0, help="latency cap as a multiple of the median")
    p.add_argument("--per-choice", type=float, default=0.05, help="latency growth per extra sample of a request")
    p.add_argument("--sandbox-workers", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-baseline", action="store_true", help="skip the wave-1 baseline runs")
    p.add_argument("--only", choices=["fixed", "lognormal", "signals", "memory"], default=None, help="one part only")
    p.add_argument("--skip-signals", action="store_true", help="skip the SIGTERM part")
    p.add_argument("--stop-points", type=int, default=18, help="SIGTERMs of the signal part")
    p.add_argument("--signal-seeds", type=int, default=12, help="seeds of the signal part's run (4 lineages each)")
    p.add_argument("--signal-latency-s", type=float, default=0.05, help="fixed request latency of the signal part")
    p.add_argument("--skip-memory", action="store_true", help="skip the million-seed memory part")
    p.add_argument("--big-seeds", type=int, default=1_000_000)
    p.add_argument("--big-requests", type=int, default=3000, help="requests before each memory run is stopped")
    args = p.parse_args(argv)

    models = {
        "fixed": {"latency": "fixed", "latency_s": args.fixed_s, "latency_per_choice": args.per_choice},
        "lognormal": {
            "latency": "lognormal",
            "latency_s": args.median_s,
            "latency_sigma": args.sigma,
            "latency_max_s": args.cap_x * args.median_s,
            "latency_per_choice": args.per_choice,
        },
    }
    if args.only:
        models = {k: v for k, v in models.items() if k == args.only}
    exits: list[tuple[str, int, float]] = []  # (where, exit code, seconds from SIGTERM to the exit)
    cores = len(os.sched_getaffinity(0))
    print(
        f"generate: {args.lineages} lineages x {args.turns} turns, M = {args.attempts}, bound {args.bound} requests, "
        f"default max-active ({GenerateSettings(max_in_flight=args.bound).active_bound()}); {cores} usable cores; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    failures, summary = [], []
    figures: dict[str, float] = {}
    targets: dict[str, tuple[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-seeds-") as seeds_tmp:
        write_seeds(Path(seeds_tmp), args.lineages)
        seeds_dir = Path(seeds_tmp) / "seeds"
        for name, latency in models.items():
            print(f"{name}: {json.dumps(latency)}")
            new = run_once(f"{name}, pipelined", seeds_dir, latency, args, None)
            print(new.line(), flush=True)
            if not args.no_baseline:
                old = run_once(f"{name}, baseline (wave 1)", seeds_dir, latency, args, args.bound)
                print(old.line(), flush=True)
                print(f"{'':>26}  speed-up over the baseline: {old.wall / new.wall:.2f}x")
            if new.in_flight_share < IN_FLIGHT_TARGET:
                failures.append(f"{name}: {new.in_flight_share:.1%} in flight < {IN_FLIGHT_TARGET:.0%}")
            if new.ratio > WALL_TARGET:
                failures.append(f"{name}: {new.ratio:.3f}x ideal > {WALL_TARGET}x")
            summary.append(f"{name} {new.ratio:.3f}x ideal, {new.in_flight_share:.1%} in flight")
            prefix = "" if name == "fixed" else f"{name}_"
            figures |= {f"{prefix}wall_over_ideal": new.ratio, f"{prefix}in_flight_share": new.in_flight_share}
            targets |= {
                f"{prefix}wall_over_ideal": ("<=", WALL_TARGET),
                f"{prefix}in_flight_share": (">=", IN_FLIGHT_TARGET),
            }
        if models:
            print(f"load average after part 1: {os.getloadavg()[0]:.1f}")
        if not args.skip_signals and args.only in (None, "signals"):
            with tempfile.TemporaryDirectory(prefix="bench-signals-") as work:
                write_seeds(Path(work) / "seeds-src", args.signal_seeds)
                sig = signal_part(Path(work) / "seeds-src" / "seeds", Path(work), args, args.stop_points)
            for where, code, waited in sig.exits:
                print(f"signals: SIGTERM at {where}: exit {code} {waited:.1f} s later")
            print(
                f"signals: reference run {sig.reference_s:.0f} s; {len(sig.exits)} runs stopped, "
                f"{sig.chains} chain(s) re-run to the end; load average {os.getloadavg()[0]:.1f}"
            )
            exits += sig.exits
            failures += sig.failures
            figures["signals_ok"], targets["signals_ok"] = int(not sig.failures), ("==", 1)
    if not args.skip_memory and args.only in (None, "memory"):
        for phase, peak, code, stop_s in memory_part(args):
            if peak >= RSS_TARGET_MIB:
                failures.append(f"memory: {phase} run peaked at {peak:.0f} MiB >= {RSS_TARGET_MIB:.0f}")
            if code != 143 or not stop_s <= STOP_TARGET_S:
                failures.append(f"memory: {phase} run exited {code} {stop_s:.1f} s after SIGTERM (143 within 10 s)")
            exits.append((f"memory, {phase}", code, stop_s))
            summary.append(f"{phase} 1M-seed RSS {peak:.0f} MiB")
            figures[f"rss_{phase}_mib"], targets[f"rss_{phase}_mib"] = peak, ("<=", RSS_TARGET_MIB)
    if exits:
        waits = sorted(w for _, _, w in exits)
        worst = max(exits, key=lambda e: e[2])
        print(
            f"SIGTERM at {len(exits)} points: exit 143 in {sum(c == 143 for _, c, _ in exits)}; seconds to exit "
            f"median {statistics.median(waits):.1f}, worst {worst[2]:.1f} ({worst[0]}); target {STOP_TARGET_S:g} s"
        )
        summary.append(f"SIGTERM worst {worst[2]:.1f} s, median {statistics.median(waits):.1f} s over {len(exits)}")
        figures["sigterm_worst_s"], targets["sigterm_worst_s"] = worst[2], ("<=", STOP_TARGET_S)
    report_figures(figures, targets)
    print("targets missed: " + "; ".join(failures) if failures else "all targets met")
    print("; ".join(summary))
    return 1 if failures else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
