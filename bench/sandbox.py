"""Sandbox benchmark: the zygote pool against a fresh `python -c` per job, measured in the same run.

    python bench/sandbox.py [--jobs 20000] [--baseline-jobs 400] [--workers N]

Every job is a small function with 10 calls (20 kinds, a few raising). The baseline runs the same
jobs the way many evaluation harnesses do: one new interpreter per job (`python3 -c`, the same
interpreter the sandbox uses, no isolation at all), as many at a time as the pool has workers.
It prints throughput of both, checks that both give identical verdicts (status and value of every
call), samples the resident memory of the host process and of every zygote over the whole run,
and ends with the ratio. Exit status 1 when a target is missed: >= 350 jobs/s with full (bwrap)
isolation, >= 5x the baseline, identical verdicts, memory flat (host growth under 8 MiB from the
first 1000-job chunk to the last and under 4 MiB over the second half; under 2 MiB per worker tree).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthgen.sandbox import Job, SandboxPool  # noqa: E402
from synthgen.sandbox.isolation import default_python  # noqa: E402

TARGET_JOBS_PER_S, TARGET_RATIO = 350.0, 5.0
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


def tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except OSError:
            pass
    return out


def zygote_rss(pool: SandboxPool) -> list[float]:
    """Resident MiB of each worker's whole process tree (bwrap, its init, the shim, the zygote)."""
    return [sum(rss_mib(p) for p in tree(w)) for w in pool.worker_pids("main")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=20_000, help="pool jobs (throughput and memory)")
    ap.add_argument("--baseline-jobs", type=int, default=400, help="jobs for the fresh-interpreter baseline")
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args(argv)

    jobs = make_jobs(args.jobs)
    failures = []
    with SandboxPool(args.workers) as pool:
        print(f"isolation: {pool.isolation}; workers: {pool.workers}; usable cores: {len(os.sched_getaffinity(0))}")
        pool.run_many(make_jobs(200))  # warm-up
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
            samples.append((rss_mib(os.getpid()), zygote_rss(pool)))  # after each chunk, same high-water mark
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
    if isolation != "bwrap":
        failures.append(f"isolation is {isolation}, not bwrap")
    if rate < TARGET_JOBS_PER_S:
        failures.append(f"{rate:.0f} jobs/s < {TARGET_JOBS_PER_S:.0f}")
    if ratio < TARGET_RATIO:
        failures.append(f"ratio {ratio:.1f}x < {TARGET_RATIO:.0f}x")
    if same != nb or infra:
        failures.append("verdicts differ from the baseline" if same != nb else f"{infra} infra results")
    growth = [b - a for a, b in zip(zyg0, zyg1)] + [b - a for a, b in zip(zyg_mid, zyg1)]
    if host1 - host0 > HOST_GROWTH_MIB or host1 - host_mid > HOST_GROWTH_MIB / 2 or max(growth) > WORKER_GROWTH_MIB:
        failures.append("resident memory grew")
    print("targets missed: " + "; ".join(failures) if failures else "all targets met")
    print(f"ratio pool/baseline: {ratio:.1f}x ({rate:.0f} vs {base_rate:.1f} jobs/s; target >= {TARGET_RATIO:.0f}x)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
