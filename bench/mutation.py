"""Benchmark: what the mutation score and the chance probes cost in the sandbox, against generate's own sandbox time.

    python bench/mutation.py                      # about 2 minutes on 2 cores
    python bench/mutation.py --seeds 8 --repeats 1   # a quick look

The mutation score: the same generate run (a seeds stage of standard-library snippets, the
scripted server in its own process: its problem bank answering, NOT a model; the real sandbox)
runs with and without `--mutation-score` (both `--no-chance-probes`), alternating (without, with,
without, ...) so that a change of machine load hits both sides alike. Both runs make the same
problems and the same student answers (the scripted server is deterministic), so their sandbox
work differs by the mutation jobs only. From each run's stats file (`sandbox_busy_s`:
worker-seconds with a job running; `mutation_sandbox_s`: the mutation jobs' own wall time) it
prints the valid problems, sandbox seconds per valid problem, and the overhead busy(with) /
busy(without) - 1 from the medians over the repeats (target: at most 20% at M = 32 attempts, the
paper's M).

The chance probes run inside the mutation jobs (one job per problem either way) and cost about a
hundredth of a run's sandbox time, far below what two runs on a shared machine differ by (their
busy time moved by 20-40% from run to run here), so two whole runs cannot resolve them. Instead
the mutation jobs of the run's own valid problems are run again, with and without the probes,
alternating over `--pair-repeats` rounds; the probes' time is the difference of the medians of
the rounds' job time, and their overhead that time over the busy time of the run with the mutation
score (target: at most 10% per valid problem). The last line prints that ratio; exit 1 on a miss.
"""

from __future__ import annotations

import argparse
import asyncio
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
from synthgen.stages.seeds import run as seeds  # noqa: E402
from synthgen.stages.seeds.settings import SeedsSettings  # noqa: E402
from synthgen.store.layout import StageDir  # noqa: E402
from synthgen.store.records import PROBLEM_COLUMNS  # noqa: E402

TARGET = 0.20  # the mutation score's overhead at most
PROBES_TARGET = 0.10  # the chance probes' overhead on top of it at most


def generate(run: Path, url: str, args: argparse.Namespace, mutation: bool) -> dict:
    argv = ["generate", "--run-dir", str(run), "--base-url", url, "--attempts", str(args.attempts)]
    argv += ["--turns", str(args.turns), "--lineages-per-seed", "2", "--no-progress", "--force"]
    argv += ["--sandbox-workers", str(args.workers)]
    argv += ["--mutation-score" if mutation else "--no-mutation-score"]
    argv += ["--no-chance-probes"]
    rc = run_guarded(app, argv)
    if rc != 0:
        raise SystemExit(f"generate exited {rc}")
    stats = json.loads(next((run / "generate").glob("stats-*.json")).read_text())
    rows = StageDir(run, "generate").read(["valid", "mutation_score", *PROBLEM_COLUMNS])
    stats["valid_rows"] = int(rows["valid"].sum())
    stats["scored_rows"] = int(rows.filter(pl.col("valid"))["mutation_score"].is_not_null().sum())
    stats["problems"] = rows.filter(pl.col("valid"))
    return stats


async def paired(problems: pl.DataFrame, args: argparse.Namespace) -> dict[bool, list[float]]:
    """The mutation jobs of `problems` again, without and with the chance probes, alternating over
    the rounds: each round's summed job time (and how many chance rates the probes gave)."""
    from synthgen.envs import get_env
    from synthgen.envs.problem import Problem
    from synthgen.sandbox import SandboxPool
    from synthgen.sandbox.settings import SandboxSettings

    sandbox = SandboxSettings()
    items = [(get_env(row["env"]), Problem.from_fields(row)) for row in problems.iter_rows(named=True)]
    out: dict[bool, list[float]] = {False: [], True: []}
    measured = 0
    with SandboxPool(workers=args.workers) as pool:
        for r in range(args.pair_repeats):
            for probes in (False, True) if r % 2 == 0 else (True, False):
                results = await asyncio.gather(
                    *(env.mutation_score(problem, pool, sandbox, 32, probes=probes) for env, problem in items)
                )
                if any(x.infra for x in results):
                    raise SystemExit("the sandbox failed during the paired runs")
                out[probes].append(sum(x.sandbox_s for x in results))
                if probes:
                    measured = sum(1 for x in results if x.chance is not None and x.chance.rate is not None)
    out["measured"] = measured  # type: ignore[index]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--attempts", type=int, default=32)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pair-repeats", type=int, default=6, help="rounds of the paired mutation jobs")
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
    problems = runs[True][0]["problems"]
    rounds = asyncio.run(paired(problems, args))

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
    mutation_ok = overhead <= TARGET and scored == valid > 0
    print(
        f"mutation score overhead on the sandbox time: {overhead:+.1%} (target <= {TARGET:.0%}); "
        f"ratio with/without {with_ / max(1e-9, without):.3f}" + ("" if mutation_ok else "  MISSED")
    )
    plain, probed = statistics.median(rounds[False]), statistics.median(rounds[True])
    extra = probed - plain
    print(
        f"mutation jobs of the {problems.height} valid problems again, {args.pair_repeats} rounds alternating: "
        f"{plain:.2f} s without the chance probes, {probed:.2f} s with (medians); the probes' own time "
        f"{extra:.2f} s ({extra / max(1, valid) * 1000:+.2f} ms per valid problem); "
        f"{rounds['measured']} chance rates"
    )
    ratio = (with_ + extra) / max(1e-9, with_)
    probes_ok = ratio - 1 <= PROBES_TARGET and rounds["measured"] == problems.height > 0
    print(
        f"chance probes overhead on the sandbox time per valid problem: {ratio - 1:+.1%} "
        f"(target <= {PROBES_TARGET:.0%}); ratio with/without {ratio:.3f}" + ("" if probes_ok else "  MISSED")
    )
    return 0 if mutation_ok and probes_ok else 1


if __name__ == "__main__":
    sys.exit(main())
