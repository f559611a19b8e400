"""Benchmark: does LLMClient keep a server full when answers take heavy-tailed time?

    python bench/llm.py            # about 60 s; --default-gc, --http-backend httpx to compare
    python bench/llm.py --requests 2560 --median-s 0.5

Against the scripted server (in a subprocess, lognormal latency), the same requests run twice on
fresh servers with the same seed (so every request takes the same time both runs):
  1. pipelined: LLMClient with an in-flight bound of 256, every request submitted at once;
  2. baseline: the same client driven batch by batch (asyncio.gather per 256), as many
     pipelines do, so each batch waits for its slowest request.
It prints three figures and exits 1 when one misses its target:
  - average requests in flight while requests were still waiting for a slot (>= 95% of bound),
  - baseline wall / pipelined wall (>= 1.5),
  - pipelined wall time / ideal, ideal = sum of server latencies / bound (<= 1.15), on the last line.
The defaults (20 waves of 256, median 1.2 s, sigma 0.6, capped at 2x the median like a
max_tokens limit; real high-reasoning answers take far longer) still leave the wall-time target
little room. Where the rest goes is printed too:
  - the run's tail: a client with zero overhead, the same bound and the same order, replayed on
    the latencies the server drew (in the order they came), still needs ~1.06x the ideal, since
    at the end fewer requests remain than slots;
  - this client against that replay: its start-up (building the first 256 requests takes ~0.8 s
    of CPU here, ~2 ms a request in the openai client) and its per-request overhead (mean latency
    seen by the client beyond the server's, printed first).
The openai client costs about 2 ms of CPU a request with aiohttp (`openai[aiohttp]`, a core
dependency) and more with httpx; with a 0.4 s median the client's CPU becomes the bottleneck.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthgen.demo.scripted import start_scripted_server  # noqa: E402
from synthgen.llm.client import LLMClient  # noqa: E402
from synthgen.llm.settings import LLMSettings, StudentSettings  # noqa: E402
from synthgen.turns.collector import quiet_collector  # noqa: E402

IN_FLIGHT_TARGET = 0.95
WALL_TARGET = 1.15
SPEEDUP_TARGET = 1.5


HTTP_BACKEND = "auto"


def _client(url: str, bound: int) -> LLMClient:
    role = StudentSettings(base_url=url, model="openai/gpt-oss-120b", timeout_s=120)
    return LLMClient(role, role, LLMSettings(backoff_initial_s=0.05, http_backend=HTTP_BACKEND), max_in_flight=bound)


def _messages(count: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"benchmark request {i}"}] for i in range(count)]


async def run_pipelined(url: str, prompts: list, bound: int) -> tuple[float, float]:
    """All requests submitted at once; returns (wall seconds, mean in-flight while work waited)."""
    async with _client(url, bound) as llm:
        await llm.preflight(wait_s=30)
        done = 0
        saturated_until: list[tuple[float, float]] = []

        async def one(messages: list[dict]) -> None:
            nonlocal done
            await llm.complete("student", messages)
            done += 1

        async def watch(t0: float, area0: float) -> None:
            # "work remains" until every request has been dispatched (none waits for a slot).
            while done + llm.in_flight < len(prompts) or llm.queued:
                await asyncio.sleep(0.005)
            saturated_until.append((time.monotonic() - t0, llm.in_flight_area() - area0))

        t0, area0 = time.monotonic(), llm.in_flight_area()
        watcher = asyncio.create_task(watch(t0, area0))
        await asyncio.gather(*(one(m) for m in prompts))
        wall = time.monotonic() - t0
        await watcher
        failures = llm.usage.total().samples_infra
        if failures:
            print(f"warning: {failures} infra failures in the pipelined run", file=sys.stderr)
        window, area = saturated_until[0]
        total = llm.usage.total()
        client_latency = total.latency_s / max(1, total.requests)
        return wall, (area / window if window > 0 else float(bound)), client_latency


async def run_batched(url: str, prompts: list, bound: int) -> float:
    async with _client(url, bound) as llm:
        await llm.preflight(wait_s=30)
        t0 = time.monotonic()
        for start in range(0, len(prompts), bound):
            await asyncio.gather(*(llm.complete("student", m) for m in prompts[start : start + bound]))
        return time.monotonic() - t0


def zero_overhead_wall(latencies: list[float], bound: int) -> float:
    """Wall time of a client with no overhead at all: each request, in the order the server got
    them, starts the moment one of `bound` slots frees (list scheduling)."""
    free_at = [0.0] * min(bound, max(1, len(latencies)))
    for latency in latencies:
        heapq.heapreplace(free_at, free_at[0] + latency)
    return max(free_at)


def _timed(coro, tuned: bool):
    """Run one timed phase; with `tuned`, under the collector settings a turn loop runs with
    (synthgen.turns.collector: what is alive frozen, young collections every 50,000 allocations)."""
    with quiet_collector() if tuned else contextlib.nullcontext():
        return asyncio.run(coro)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=20 * 256)
    p.add_argument("--bound", type=int, default=256, help="requests in flight")
    p.add_argument("--median-s", type=float, default=1.2, help="lognormal median latency")
    p.add_argument("--sigma", type=float, default=0.6, help="lognormal sigma of log-latency")
    p.add_argument("--cap-x", type=float, default=2.0, help="latency cap as a multiple of the median")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--http-backend", choices=["auto", "aiohttp", "httpx"], default="auto")
    p.add_argument("--default-gc", action="store_true", help="leave the garbage collector as it is")
    args = p.parse_args(argv)
    global HTTP_BACKEND
    HTTP_BACKEND = args.http_backend

    faults = dict(
        latency="lognormal", latency_s=args.median_s, latency_sigma=args.sigma, latency_max_s=args.cap_x * args.median_s
    )
    prompts = _messages(args.requests)
    print(
        f"{args.requests} requests, bound {args.bound}, latency lognormal median {args.median_s} s "
        f"sigma {args.sigma} capped at {args.cap_x * args.median_s:g} s (scripted server, seed {args.seed}), "
        f"http backend {args.http_backend}, collector {'default' if args.default_gc else 'tuned as in a turn loop'}"
    )
    with start_scripted_server("echo", mode="process", seed=args.seed, **faults) as server:
        wall, mean_in_flight, client_latency = _timed(
            run_pipelined(server.url, prompts, args.bound), not args.default_gc
        )
        stats = server.stats()
        latency_sum = stats["latency_sum_s"]
        replay = zero_overhead_wall(stats["latencies_s"][-len(prompts) :], args.bound)
    print(f"mean latency: server {latency_sum / len(prompts):.3f} s, seen by the client {client_latency:.3f} s")
    with start_scripted_server("echo", mode="process", seed=args.seed, **faults) as server:
        base_wall = _timed(run_batched(server.url, prompts, args.bound), not args.default_gc)
        base_latency_sum = server.stats()["latency_sum_s"]
    if abs(base_latency_sum - latency_sum) > 1e-6 * max(1.0, latency_sum):
        print(f"warning: the two runs saw different latencies ({latency_sum:.3f} vs {base_latency_sum:.3f} s)")

    ideal = latency_sum / args.bound
    in_flight_share = mean_in_flight / args.bound
    wall_ratio = wall / ideal
    speedup = base_wall / wall
    print(
        f"ideal (sum of latencies / bound): {ideal:.2f} s; pipelined wall {wall:.2f} s; baseline wall {base_wall:.2f} s"
    )
    print(
        f"average in flight while work remained: {mean_in_flight:.1f} = {in_flight_share:.1%} of bound "
        f"(target >= {IN_FLIGHT_TARGET:.0%})"
    )
    print(
        f"a zero-overhead client on the same latencies: {replay:.2f} s = {replay / ideal:.3f}x ideal (the tail); "
        f"this client {wall / replay:.3f}x that (its start-up and per-request overhead)"
    )
    print(f"speedup over batch-barrier baseline: {speedup:.2f}x (target >= {SPEEDUP_TARGET}x)")
    missed = in_flight_share < IN_FLIGHT_TARGET or wall_ratio > WALL_TARGET or speedup < SPEEDUP_TARGET
    print(f"pipelined wall / ideal: {wall_ratio:.3f}x (target <= {WALL_TARGET}x)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
