"""Benchmark: what the mutation score costs in the sandbox, against a generate run's own sandbox time.

    python bench/mutation.py                      # about 3 minutes on 2 cores
    python bench/mutation.py --seeds 8 --repeats 1   # a quick look

The same generate run (a seeds stage of standard-library snippets, the scripted server in its own
process: its problem bank answering, NOT a model; the real sandbox) runs with and without
`--mutation-score`, alternating (without, with, without, with, ...) so that a change of machine
load hits both sides alike. Both runs make the same problems and the same student answers (the
scripted server is deterministic), so their sandbox work differs by the mutation jobs only. From
each run's stats file (`sandbox_busy_s`: worker-seconds with a job running; `mutation_sandbox_s`:
the mutation jobs' own wall time) it prints

  - valid problems, sandbox seconds of the run per valid problem, mutation seconds per problem;
  - the overhead: busy(with) / busy(without) - 1, from the medians over the repeats (the verdict);
  - the in-run share: mutation_sandbox_s / (busy(with) - mutation_sandbox_s), for comparison.

Target (exit 1 on a miss): the overhead is at most 20% at M = 32 attempts (the paper's M). The
last line prints the ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import polars as pl  # noqa: E402

from synthgen.cli.app import app, run_guarded  # noqa: E402
from synthgen.demo.scripted import start_scripted_server  # noqa: E402
from synthgen.stages import seeds  # noqa: E402
from synthgen.stages.seeds.settings import SeedsSettings  # noqa: E402
from synthgen.store.layout import StageDir  # noqa: E402

TARGET = 0.20


def generate(run: Path, url: str, args: argparse.Namespace, mutation: bool) -> dict:
    argv = ["generate", "--run-dir", str(run), "--base-url", url, "--attempts", str(args.attempts)]
    argv += ["--turns", str(args.turns), "--lineages-per-seed", "2", "--no-progress", "--force"]
    argv += ["--sandbox-workers", str(args.workers)]
    argv += ["--mutation-score" if mutation else "--no-mutation-score"]
    rc = run_guarded(app, argv)
    if rc != 0:
        raise SystemExit(f"generate exited {rc}")
    stats = json.loads(next((run / "generate").glob("stats-*.json")).read_text())
    rows = StageDir(run, "generate").read(["valid", "mutation_score"])
    stats["valid_rows"] = int(rows["valid"].sum())
    stats["scored_rows"] = int(rows.filter(pl.col("valid"))["mutation_score"].is_not_null().sum())
    return stats


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--attempts", type=int, default=32)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-mutation-"))
    server = start_scripted_server(seed=0, mode="process")
    try:
        seeds.run(SeedsSettings(run_dir=base / "seeds-run", n=args.seeds, seed=7))
        runs: dict[bool, list[dict]] = {False: [], True: []}
        for r in range(args.repeats):
            for mutation in (False, True):
                run = base / f"run-{r}-{int(mutation)}"
                shutil.copytree(base / "seeds-run" / "seeds", run / "seeds")
                runs[mutation].append(generate(run, server.url, args, mutation))
                shutil.rmtree(run)
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)

    without = statistics.median(s["sandbox_busy_s"] for s in runs[False])
    with_ = statistics.median(s["sandbox_busy_s"] for s in runs[True])
    mutation_s = statistics.median(s["mutation_sandbox_s"] for s in runs[True])
    valid = runs[True][0]["valid_rows"]
    scored = runs[True][0]["scored_rows"]
    print(f"runs: {args.repeats} x 2, {args.seeds} seeds x 2 lineages x {args.turns} turns, M = {args.attempts}")
    print(f"valid problems: {valid} ({scored} with a mutation score)")
    for label, busy in (("without mutation score", without), ("with mutation score", with_)):
        print(f"sandbox busy {label}: {busy:.2f} s ({busy / max(1, valid) * 1000:.1f} ms per valid problem)")
    print(f"mutation jobs' own wall time: {mutation_s:.2f} s ({mutation_s / max(1, scored) * 1000:.1f} ms per problem)")
    in_run = mutation_s / max(1e-9, with_ - mutation_s)
    overhead = with_ / max(1e-9, without) - 1
    print(f"in-run share of the mutation jobs: {in_run:.1%}")
    ok = overhead <= TARGET and scored == valid > 0
    print(
        f"mutation score overhead on the sandbox time: {overhead:+.1%} (target <= {TARGET:.0%}); "
        f"ratio with/without {with_ / max(1e-9, without):.3f}" + ("" if ok else "  MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
