"""Benchmark: does an online pool stay at the policy's frontier while an offline pool drifts out of it?

    python bench/online.py                 # about 5-8 minutes on 2 cores
    python bench/online.py --steps 60 --gain 3

Against the scripted server (a bank of problems, NOT a model), whose student follows a learning
curve (it gains `--gain` bank levels per 100 policy steps; synthgen.demo.scripted.bank), and a tiny
random model as the policy being trained (GRPO on TRL, CPU), the reward being the same curve
(CurveScorer), so the pass rates move as if the policy learned and the bench needs no real
learning:
  1. offline: seeds -> generate -> filter -> bin against the scripted server at step 0 (the paper's
     fixed student), then `synthgen train` with the paper's uniform sampling over those bins;
  2. online: `synthgen train --online` starting from the same bins, the scripted server as teacher
     and as the policy-student (each request names the policy's step), Frontier buffer, SvS band.
The figure is the share of sampled problems whose pass rate under the policy *at the step they
were trained* is inside SvS's band [12.5%, 62.5%], over the first and the last third of training.
It prints both runs' figures and, on the last line, the ratio online / offline over the last
third; exit 1 when online's last-third share is below 50% or the ratio below 1.5.

Measured on this 2-core machine (defaults: 80 steps, gain 2, buffer of 8): offline 26% in band
over the first third, 2% over the last; online 78% and 81%, the pool's mean bank level rising
from 2.9 to 4.9 as the policy improves; ratio 42x, about 5 minutes. The scripted teacher cannot
write past the bank's level 5: with gain 2.5 the policy outgrows it in the last third (online
46% there, offline 0%), a limit of the stand-in, not of the loop.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from synthgen.demo.scripted.launch import start_scripted_server  # noqa: E402
from synthgen.stages.bin.settings import BinSettings  # noqa: E402
from synthgen.stages.filter.settings import FilterSettings  # noqa: E402
from synthgen.stages.generate.settings import GenerateSettings  # noqa: E402
from synthgen.stages.seeds.settings import SeedsSettings  # noqa: E402
from synthgen.train.settings import TrainSettings  # noqa: E402
from tests.helpers.curve import CurveScorer  # noqa: E402

BAND = (0.125, 0.625)
ONLINE_TARGET, RATIO_TARGET = 0.5, 1.5


def offline_pool(run_dir: Path, url: str, seeds: int) -> Path:
    """The paper's pipeline against the scripted student at step 0: RUN_DIR/bin."""
    from synthgen.stages.bin import run as bin_stage
    from synthgen.stages.filter import run as filter_stage
    from synthgen.stages.generate import run as generate
    from synthgen.stages.seeds import run as seeds_stage

    quiet = Console(stderr=True, quiet=True)
    roles = {"teacher": {"base_url": url}, "student": {"base_url": url}}
    seeds_stage.run(SeedsSettings(run_dir=run_dir, n=seeds, seed=3), console=quiet)
    gen = GenerateSettings(run_dir=run_dir, turns=4, attempts=16, progress=False, **roles)
    generate.run(gen, console=quiet)
    filter_stage.run(FilterSettings(run_dir=run_dir), console=quiet)
    bin_stage.run(BinSettings(run_dir=run_dir), console=quiet, out_console=quiet)
    return run_dir / "bin"


def band_shares(groups, steps: int) -> tuple[float, float, int]:
    """(share in band over the first third, over the last third, groups scored)."""
    third = steps / 3

    def share(rows):
        return sum(BAND[0] <= p <= BAND[1] for *_, p in rows) / len(rows) if rows else 0.0

    early = [g for g in groups if g[0] < third]
    late = [g for g in groups if g[0] >= steps - third]
    return share(early), share(late), len(groups)


def pool_figures(log_dir: Path) -> tuple[int, int]:
    """(problems the worker admitted, problems retired) from the online run's Parquet log."""
    import polars as pl

    problems = pl.read_parquet(log_dir / "problems" / "*.parquet")
    events = pl.read_parquet(log_dir / "events" / "*.parquet")
    return problems.filter(pl.col("origin") != "data").height, events.filter(pl.col("event") == "retire").height


def train(settings: TrainSettings, gain: float, online: bool):
    from synthgen.online.run import run_online
    from synthgen.train.run import run

    scorer = CurveScorer(gain)
    (run_online if online else run)(settings, scorer=scorer, callbacks=[scorer.callback()])
    return scorer.groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=80, help="GRPO steps of each run")
    parser.add_argument("--gain", type=float, default=2.0, help="bank levels the policy gains per 100 steps")
    parser.add_argument("--seeds", type=int, default=40, help="seed snippets of the offline pool")
    parser.add_argument("--capacity", type=int, default=8, help="problems the online buffer holds")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (its path is printed)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from synthgen.train.quiet import quiet_libraries
    from synthgen.train.tiny import make_tiny_model

    quiet_libraries()
    work = Path(tempfile.mkdtemp(prefix="bench-online-"))
    started = time.monotonic()
    try:
        model = make_tiny_model(work / "model")
        with start_scripted_server(seed=0, learning_curve=args.gain, mode="process") as server:
            data = offline_pool(work / "run", server.url, args.seeds)
            common = {
                "run_dir": work / "run",
                "data": [str(data)],
                "model": str(model),
                "recipe": "tiny-cpu",
                "max_steps": args.steps,
                "save_steps": args.steps,
                "report_to": ["none"],
            }
            offline = train(TrainSettings(**common, output=str(work / "offline")), args.gain, online=False)
            online_settings = {
                "enabled": True,
                "teacher": {"base_url": server.url},
                "student": {
                    "backend": "server",
                    "base_url": server.url,
                    "model": "openai/gpt-oss-120b",
                    "max_tokens": 4096,
                },
                "buffer": {"capacity": args.capacity},
                "worker": {"budget": 4, "log_every": args.steps},
            }
            online = train(
                TrainSettings(**common, output=str(work / "online"), online=online_settings), args.gain, online=True
            )
        figures = {"offline": band_shares(offline, args.steps), "online": band_shares(online, args.steps)}
        admitted, retired = pool_figures(work / "online" / "online")
    finally:
        if args.keep:
            print(f"work folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"policy gains {args.gain} bank levels per 100 steps; {args.steps} steps; band {BAND}")
    for name, (early, late, n) in figures.items():
        print(f"{name:>8}: in band {early:.0%} over the first third, {late:.0%} over the last ({n} groups)")
    print(
        f"online pool: {admitted} problems admitted by the worker, {retired} retired; "
        f"took {time.monotonic() - started:.0f} s"
    )
    online_late, offline_late = figures["online"][1], figures["offline"][1]
    ratio = online_late / offline_late if offline_late else float("inf")
    missed = online_late < ONLINE_TARGET or ratio < RATIO_TARGET
    print(
        f"ratio online / offline in band over the last third: {ratio:.2f}x "
        f"(targets: online >= {ONLINE_TARGET:.0%}, ratio >= {RATIO_TARGET})" + (" MISSED" if missed else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
