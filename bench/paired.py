"""Paired benchmark: one bench script of this tree, run against this tree's synthgen and a git ref's.

    python bench/paired.py [--baseline-ref main] [--rounds 3] [--within NAME=FRACTION ...] bench/X.py [ARGS...]

The ref is exported (`git archive REF | tar -x`) into a temporary folder, removed afterwards. Each
round runs the same bench script (this tree's) once per side, with PYTHONPATH and
SYNTHGEN_BENCH_TREE set to that side's root, so `synthgen` and the test helpers (`tests.helpers`)
come from that side; which side goes first alternates from round to round. Each run writes its
figures to the JSON file named by SYNTHGEN_BENCH_FIGURES (`report_figures` below):
{"figures": {name: number}, "targets": {name: [op, number]}}, op one of ">=", "<=", "==".

It prints per figure the median of both sides and their ratio (this / ref), judges this tree's
medians against the bench's targets and, for each `--within NAME=FRACTION`, this tree's median
against the ref's: it may be at most FRACTION worse (lower for a figure with a ">=" target,
higher otherwise); `--no-targets` leaves the bench's own targets out of the verdict. Its last line
holds the ratios; exit status 1 when a target or a --within is missed or a run crashed (no
figures, or an exit status other than 0 and 1), else 0.

Benches import from here (they run as scripts, so bench/ is on sys.path):
    from paired import TREE, judge, report_figures
TREE is the root whose synthgen the bench measures (put first on sys.path); `report_figures` does
nothing when SYNTHGEN_BENCH_FIGURES is unset.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = os.environ.get("SYNTHGEN_BENCH_TREE") or str(HERE.parent)
OPS = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b}


def judge(figures: dict[str, float], targets: dict[str, tuple[str, float]]) -> list[str]:
    """The targets `figures` miss, as lines (a missing figure misses its target)."""
    misses = []
    for name, (op, target) in targets.items():
        value = figures.get(name)
        if value is None or (isinstance(value, float) and math.isnan(value)) or not OPS[op](value, target):
            misses.append(f"{name} {'missing' if value is None else format(value, '.4g')} not {op} {target:g}")
    return misses


def report_figures(figures: dict[str, float], targets: dict[str, tuple[str, float]]) -> None:
    """Write the run's figures and targets to $SYNTHGEN_BENCH_FIGURES, if set."""
    path = os.environ.get("SYNTHGEN_BENCH_FIGURES")
    if path:
        Path(path).write_text(json.dumps({"figures": figures, "targets": {k: list(v) for k, v in targets.items()}}))


def export_ref(ref: str, into: Path) -> None:
    """The tree of `ref` in `into`, from this repository."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE, capture_output=True, text=True, check=True)
    root = root.stdout.strip()
    if subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=root).returncode:
        raise SystemExit(f"no such git ref: {ref}")
    archive = subprocess.Popen(["git", "archive", ref], cwd=root, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(into)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {ref} failed")


def run_side(root: str, script: str, args: list[str], figures_file: Path) -> tuple[int, dict | None]:
    """One run of the bench against the synthgen in `root`: (exit status, its figures or None)."""
    figures_file.unlink(missing_ok=True)
    env = dict(os.environ, SYNTHGEN_BENCH_TREE=root, SYNTHGEN_BENCH_FIGURES=str(figures_file))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    code = subprocess.run([sys.executable, script, *args], env=env).returncode
    figures = json.loads(figures_file.read_text()) if figures_file.exists() else None
    return code, figures


def within_arg(text: str) -> tuple[str, float]:
    name, _, fraction = text.partition("=")
    if not name or not fraction:
        raise argparse.ArgumentTypeError(f"expected NAME=FRACTION, got {text!r}")
    return name, float(fraction)


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-ref", default="main", help="git ref to compare against")
    parser.add_argument("--rounds", type=int, default=3, help="runs per side; medians are compared")
    parser.add_argument("--within", type=within_arg, action="append", default=[], help="NAME=FRACTION of the ref")
    parser.add_argument("--no-targets", action="store_true", help="judge only the --within figures (and crashes)")
    parser.add_argument("script", help="the bench script, e.g. bench/grading.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the bench's own arguments")
    args = parser.parse_args(argv)
    script = str(Path(args.script).resolve())
    this = str(HERE.parent)
    runs: dict[str, list[dict]] = {"this": [], "ref": []}
    crashes, targets = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-paired-") as tmp:
        ref_root = Path(tmp) / "ref"
        ref_root.mkdir()
        export_ref(args.baseline_ref, ref_root)
        sides = {"this": this, "ref": str(ref_root)}
        for round_ in range(args.rounds):
            order = ["this", "ref"] if round_ % 2 == 0 else ["ref", "this"]
            for side in order:
                label = "this tree" if side == "this" else f"{args.baseline_ref} ({ref_root})"
                print(f"== paired round {round_ + 1}/{args.rounds}: {label}", flush=True)
                code, out = run_side(sides[side], script, args.args, Path(tmp) / "figures.json")
                print(f"== exit {code}", flush=True)
                if out is None or code not in (0, 1):
                    crashes.append(f"round {round_ + 1} {side}: exit {code}{'' if out else ', no figures'}")
                if out:
                    runs[side].append(out["figures"])
                    targets.update({k: tuple(v) for k, v in out["targets"].items()})
    medians = {}
    for side, figures in runs.items():
        values: dict[str, list[float]] = {}
        for run in figures:
            for name, value in run.items():
                if value is not None:
                    values.setdefault(name, []).append(value)
        medians[side] = {name: statistics.median(v) for name, v in values.items()}
    names = sorted(set(medians["this"]) | set(medians["ref"]))
    ratios = {}
    print(f"\nmedians of {args.rounds} rounds: this tree against {args.baseline_ref}")
    for name in names:
        mine, theirs = medians["this"].get(name), medians["ref"].get(name)
        if mine is not None and theirs:
            ratios[name] = mine / theirs
        target = f"target {targets[name][0]} {targets[name][1]:g}" if name in targets else ""
        ratio = f"{ratios[name]:.3f}x" if name in ratios else "-"
        print(f"  {name:>28}: this {fmt(mine):>10}  {args.baseline_ref} {fmt(theirs):>10}  ratio {ratio:>8}  {target}")
    misses = [] if args.no_targets else judge(medians["this"], targets)
    for name, fraction in args.within:
        mine, theirs = medians["this"].get(name), medians["ref"].get(name)
        lower_is_worse = targets.get(name, ("<=",))[0] == ">="
        if mine is None or theirs is None:
            misses.append(f"--within {name}: no figure")
        elif (mine < theirs * (1 - fraction)) if lower_is_worse else (mine > theirs * (1 + fraction)):
            misses.append(f"--within {name}: {mine:.4g} more than {fraction:.0%} worse than {theirs:.4g}")
    for line in crashes + misses:
        print(f"missed: {line}")
    print("all targets met" if not crashes + misses else f"{len(crashes)} crashed run(s), {len(misses)} miss(es)")
    listed = ", ".join(f"{n} {r:.3f}x" for n, r in ratios.items()) or "none (no figure of the ref is nonzero)"
    print(f"ratios this/{args.baseline_ref}: {listed}")
    return 1 if crashes or misses else 0


if __name__ == "__main__":
    sys.exit(main())
