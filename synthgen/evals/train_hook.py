"""Every benchmark of `synthgen eval` as `train --eval-every` suites: the Evaluator of synthgen.train.evaluation.

    synthgen train ... --eval-every 500 --eval-benchmarks lcb,math500,aime2024 --eval-benchmark-data-dir data/bench
    synthgen train ... --eval-every 500 --eval-benchmarks lcb --eval-benchmark-url http://gpu07:8000/v1

Each benchmark is loaded and scored by the code of `synthgen eval`, with its sample count and k
(the paper's: LCB 20 samples, pass@1 and @10; Math500 10 and AIME2024 64, pass@1 and @5) unless
`--eval-benchmark-samples math500=2,...` sets a smaller budget (the k that fit are kept);
`--eval-max-problems` bounds each benchmark's problems (a seeded choice). The prompts are sampled
from the policy being trained, in-process through the trainer's `generate`, or through the LLM
client from a server that holds the current weights (`--eval-benchmark-url`); the counts come back
per split, logged as `eval/lcb/<split>/pass@k`. Each process takes every world-th problem.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from synthgen.evals.data import EvalItem

MATH_BENCHMARKS = ("math500", "aime2024")


class BenchmarkEvaluator:
    """An evaluation suite over eval items: `evaluate(generate, step) -> {split: [(n, c), ...]}`;
    `ks`, the k of pass@k this suite reports, default to the trainer's."""

    def __init__(self, name: str, items: Sequence[EvalItem], samples: int, *, ks=None, generate=None, closer=None):
        self.name, self.samples, self.ks = name, samples, ks
        self.items = list(items)
        self._generate, self._closer = generate, closer

    def close(self) -> None:
        """Free what this suite owns: the shared verifier pool, for the suite given its `closer`."""
        if self._closer is not None:
            self._closer()

    def evaluate(self, generate, step: int) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {s: [] for item in self.items for s in item.splits}
        if not self.items:
            return out
        outputs = (self._generate or generate)([item.messages for item in self.items], self.samples)

        async def score_all():
            jobs = [asyncio.gather(*(item.score(t, cut) for t, cut in per)) for item, per in zip(self.items, outputs)]
            return await asyncio.gather(*jobs)

        for item, rewards in zip(self.items, asyncio.run(score_all())):
            scored = [r for r in rewards if r.value is not None]  # infra: left out, never wrong
            for split in item.splits:
                out[split].append((len(scored), sum(1 for r in scored if r.value >= 0.5)))
        return out


def server_generate(url: str, model: str, temperature: float, max_tokens: int):
    """A `Generate` that samples from an OpenAI-compatible server (the policy's weights served there)."""
    from synthgen.evals.settings import EvalModelSettings
    from synthgen.llm.client import LLMClient

    role = EvalModelSettings(base_url=url, model=model, temperature=temperature, max_tokens=max_tokens)

    def generate(prompts: Sequence[list], n: int) -> list[list[tuple[str, bool]]]:
        async def run():
            async with LLMClient(role, role, max_in_flight=64) as llm:
                done = await asyncio.gather(*(llm.complete("student", p, n=n) for p in prompts))
            return [[(c.content, c.status == "truncated") for c in per] for per in done]

        return asyncio.run(run())

    return generate


def budget(name: str, ev) -> tuple[int, list[int]]:
    """(completions per problem, k of pass@k) of benchmark `name` in training: eval's, or the user's budget."""
    from synthgen.evals.settings import EvalSettings

    bench = EvalSettings.model_fields[name].default_factory()
    samples = int(ev.benchmark_samples.get(name, bench.samples))
    return samples, [k for k in bench.k if k <= samples] or [1]


def benchmark_evaluators(ev, sandbox, *, max_tokens: int, rank: int = 0, world: int = 1) -> list[BenchmarkEvaluator]:
    """The suites `train`'s eval settings ask for (`ev`: synthgen.train.settings.PeriodicEvalSettings).

    The math suites share one Math-Verify pool: the first math suite owns it and closes it."""
    from synthgen.evals.data import choose
    from synthgen.evals.mathbench import MathVerifier
    from synthgen.evals.run import benchmark_items
    from synthgen.evals.settings import EvalSettings
    from synthgen.sandbox import SandboxPool

    pool = SandboxPool.from_settings(sandbox)
    verifier = MathVerifier() if set(MATH_BENCHMARKS) & set(ev.benchmarks) else None
    generate = None
    if ev.benchmark_url:
        generate = server_generate(ev.benchmark_url, ev.benchmark_model, ev.temperature, max_tokens)
    out = []
    for name in ev.benchmarks:
        bench = EvalSettings.model_fields[name].default_factory()
        items = benchmark_items(name, bench, ev.benchmark_data_dir, pool, sandbox, verifier)
        samples, ks = budget(name, ev)
        items = choose(items, ev.max_problems, 0)[rank::world]
        owner = verifier is not None and name in MATH_BENCHMARKS and all(e.name not in MATH_BENCHMARKS for e in out)
        closer = verifier.close if owner else None
        out.append(BenchmarkEvaluator(name, items, samples, ks=ks, generate=generate, closer=closer))
    return out
