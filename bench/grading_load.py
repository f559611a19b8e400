"""Verdicts under load: the parity corpus graded by synthgen on a quiet machine and with a CPU hog
on every core, and the share of verdicts that flip (target 0).

    python bench/grading_load.py [--rounds 2] [--official]

The corpus is tests/helpers/parity_corpus.py (LiveCodeBench-shaped and HumanEval candidates: right,
wrong, looping, threaded, numpy, ...). Each round grades it once quiet and once while one busy
loop per core runs beside it at the same priority (so every sandbox process waits for a core
about half the time). synthgen's limits are CPU time per test plus a wall clock that leaves out
the time spent waiting for a core, so a flip means the load decided a verdict. With --official,
LiveCodeBench's grader (wall-clock alarms) is measured the same way, for comparison only.
Exit status 1 when any synthgen verdict flips. Figures for bench/paired.py: flips (target 0), and
official_flips with --official (no target).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import TREE, judge, report_figures  # noqa: E402

sys.path.insert(0, TREE)

from synthgen.sandbox import SandboxPool  # noqa: E402
from tests.helpers import parity_corpus as corpus  # noqa: E402

LCB_LIMIT_S, HUMANEVAL_LIMIT_S = 2, 3.0


def _spin() -> None:
    while True:
        pass


class Hog:
    """One busy process per core for the length of a `with` block."""

    def __enter__(self):
        self.procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 1)]
        for proc in self.procs:
            proc.start()
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.join()


def grade(pool, lcb, humaneval) -> list[bool]:
    return corpus.synthgen_lcb(lcb, pool, float(LCB_LIMIT_S)) + corpus.synthgen_humaneval(
        humaneval, pool, HUMANEVAL_LIMIT_S
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="quiet/loaded pairs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="sandbox zygotes")
    parser.add_argument("--official", action="store_true", help="also measure LiveCodeBench's grader's flips")
    args = parser.parse_args()
    lcb = [case for _, case in corpus.lcb_cases()]
    humaneval = [case for _, case in corpus.humaneval_cases()]
    flips = total = official_flips = official_total = 0
    print(f"load average {os.getloadavg()[0]:.1f}; {len(lcb) + len(humaneval)} samples; {args.workers} workers")
    with SandboxPool(workers=args.workers) as pool:
        for round_ in range(args.rounds):
            t0 = time.perf_counter()
            quiet = grade(pool, lcb, humaneval)
            t1 = time.perf_counter()
            with Hog():
                loaded = grade(pool, lcb, humaneval)
            t2 = time.perf_counter()
            changed = sum(a != b for a, b in zip(quiet, loaded))
            flips, total = flips + changed, total + len(quiet)
            print(
                f"round {round_ + 1}: synthgen quiet {t1 - t0:.1f} s, loaded {t2 - t1:.1f} s, "
                f"{changed}/{len(quiet)} verdicts flipped",
                flush=True,
            )
            if args.official:
                quiet_o = corpus.official_lcb(lcb, LCB_LIMIT_S)
                with Hog():
                    loaded_o = corpus.official_lcb(lcb, LCB_LIMIT_S)
                changed_o = sum(a != b for a, b in zip(quiet_o, loaded_o))
                official_flips, official_total = official_flips + changed_o, official_total + len(quiet_o)
                print(f"round {round_ + 1}: LiveCodeBench's grader {changed_o}/{len(quiet_o)} verdicts flipped")
    if args.official:
        print(f"LiveCodeBench's grader flip rate {official_flips / max(1, official_total):.4f}")
    figures, targets = {"flips": flips}, {"flips": ("==", 0)}
    if args.official:
        figures["official_flips"] = official_flips
    report_figures(figures, targets)
    print(f"flip rate {flips / max(1, total):.4f} ({flips}/{total}; target 0)")
    return 1 if judge(figures, targets) else 0


if __name__ == "__main__":
    sys.exit(main())
