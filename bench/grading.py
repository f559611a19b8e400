"""Grading benchmark: synthgen's contest scorer against LiveCodeBench's official grader, same samples.

    python bench/grading.py [--samples 200] [--timeout-share 0.01] [--workers 2]

It builds its own data: LiveCodeBench-shaped problems (stdin/stdout and call-based, half each)
with 1, 10 and 50 tests a sample, and one candidate program per sample (most right, some wrong,
some raising, a share looping until the time limit). Each test count is graded twice: by
synthgen (the LCB loader, then the contest environment's scorer on a sandbox pool of `--workers`
zygotes, every sample in flight at once: what `synthgen eval` does) and by LiveCodeBench's grader
(vendored in tests/evals/vendor/lcb_grader: its `codegen_metrics`, a process and a manager per
sample, `--workers` processes). Both use a 1 s limit per test (LiveCodeBench's alarm counts whole
seconds). The verdicts must be equal, sample by sample. It prints samples/s of both and the
ratio per test count, the ratios last. Speed is measured on the samples that do not loop (a loop
costs either grader its whole limit, so a few of them would set both rates); the looping samples
are graded afterwards by both, untimed, and every verdict, theirs included, must be equal. Exit
status 1 when a ratio is under 5x or a verdict differs. Figures for bench/paired.py: speedup_1,
speedup_10, speedup_50, verdicts_equal (1 or 0).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import TREE, judge, report_figures  # noqa: E402

sys.path.insert(0, TREE)

from synthgen.sandbox import SandboxPool  # noqa: E402
from tests.helpers import parity_corpus as corpus  # noqa: E402

TARGET = 5.0
TEST_COUNTS = (1, 10, 50)
STDIN = {
    "right": "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs) * n)\n",
    "wrong": "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs) * n + (n % 3 == 1))\n",
    "raises": "n = int(input())\nxs = list(map(int, input().split()))\nprint(xs[n])\n",
    "loops": "n = int(input())\nwhile n:\n    pass\n",
}
CALL = {
    "right": "class Solution:\n    def score(self, nums: List[int], k: int) -> int:\n        return sum(nums) * k\n",
    "wrong": "class Solution:\n    def score(self, nums, k):\n        return sum(nums) * k + (k % 3 == 1)\n",
    "raises": "class Solution:\n    def score(self, nums, k):\n        return nums[k]\n",
    "loops": "class Solution:\n    def score(self, nums, k):\n        while k:\n            pass\n",
}


def problem(index: int, tests: int, rng: random.Random) -> tuple[str | None, list[tuple[str, str]]]:
    cases = []
    for _ in range(tests):
        n = rng.randint(1, 9)
        xs = [rng.randint(-1000, 1000) for _ in range(n)]
        if index % 2 == 0:
            cases.append((f"{n}\n{' '.join(map(str, xs))}\n", f"{sum(xs) * n}\n"))
        else:
            cases.append((f"{xs}\n{n}", str(sum(xs) * n)))
    return (None if index % 2 == 0 else "score"), cases


def samples(count: int, tests: int, timeout_share: float, seed: int) -> list[tuple[str, tuple[dict, str]]]:
    rng = random.Random(seed + tests)
    loops = max(1, round(count * timeout_share)) if timeout_share > 0 else 0
    kinds = ["loops"] * loops + rng.choices(["right", "wrong", "raises"], [0.8, 0.15, 0.05], k=count - loops)
    rng.shuffle(kinds)
    out = []
    for i, kind in enumerate(kinds):
        func, cases = problem(i, tests, rng)
        if kind == "wrong" and not any(
            int(i.split("\n")[0] if func is None else i.split("\n")[1]) % 3 == 1 for i, _ in cases
        ):
            kind = "raises"  # a "wrong" program no test catches would be right
        name = f"p{tests}_{i}"
        corpus.PROBLEMS[name] = (func, cases)
        out.append((kind, corpus.lcb_case(name, (STDIN if func is None else CALL)[kind])))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="samples per test count (halved at 50 tests)")
    parser.add_argument("--timeout-share", type=float, default=0.01, help="share of samples that loop forever")
    parser.add_argument("--workers", type=int, default=2, help="sandbox zygotes, and the grader's processes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    figures, targets = {}, {"verdicts_equal": ("==", 1)}
    equal = True
    print(f"load average {os.getloadavg()[0]:.1f}; {args.workers} workers; timeout share {args.timeout_share:g}")
    with SandboxPool(workers=args.workers) as pool:
        corpus.synthgen_lcb([corpus.lcb_case("sum", corpus.SUM_OK)], pool, 1.0)  # warm: the workers are up
        for tests in TEST_COUNTS:
            count = args.samples if tests < 50 else args.samples // 2
            batch = samples(count, tests, args.timeout_share, args.seed)
            timed = [case for kind, case in batch if kind != "loops"]
            loops = [case for kind, case in batch if kind == "loops"]
            t0 = time.perf_counter()
            ours = corpus.synthgen_lcb(timed, pool, 1.0)
            t1 = time.perf_counter()
            theirs = corpus.official_lcb(timed, timeout=1, processes=args.workers)
            t2 = time.perf_counter()
            ours_loops = corpus.synthgen_lcb(loops, pool, 1.0) if loops else []
            theirs_loops = corpus.official_lcb(loops, timeout=1, processes=args.workers) if loops else []
            same = sum(a == b for a, b in zip(ours + ours_loops, theirs + theirs_loops))
            ours_rate, their_rate = len(timed) / (t1 - t0), len(timed) / (t2 - t1)
            ratio = ours_rate / their_rate
            figures[f"speedup_{tests}"] = ratio
            targets[f"speedup_{tests}"] = (">=", TARGET)
            equal &= same == count
            print(
                f"{tests:>2} tests a sample, {count} samples ({sum(ours) + sum(ours_loops)} pass, {len(loops)} loop): "
                f"timed on the {len(timed)} that do not loop: synthgen {ours_rate:.1f} samples/s, "
                f"LiveCodeBench {their_rate:.1f} samples/s, {ratio:.2f}x; verdicts equal {same}/{count}",
                flush=True,
            )
    figures["verdicts_equal"] = int(equal)
    report_figures(figures, targets)
    misses = judge(figures, targets)
    print("targets missed: " + "; ".join(misses) if misses else "all targets met")
    ratios = " ".join(f"{t} tests: {figures[f'speedup_{t}']:.2f}x" for t in TEST_COUNTS)
    print(f"ratio (samples that do not loop) {ratios} (target >= {TARGET}x); verdicts equal: {bool(equal)}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
