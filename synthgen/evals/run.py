"""`synthgen eval`: sample a served model on the benchmarks, score every sample, report pass@k.

    synthgen eval --model-url http://gpu01:8000/v1 --model-name my-model --run-dir data/runs/exp1
    synthgen eval --checkpoints outputs/qwen3-8b-reverse-medium --benchmarks lcb,math500 \
        --serve-command "vllm serve {checkpoint} --port {port} --served-model-name {model}"

Layout (`--output`, default RUN_DIR/eval):
    <tag>/<benchmark>/shard-00000-of-00001.part-00000.parquet   every scored sample (records.EVAL_SAMPLES)
    <tag>/<benchmark>/shard-00000-of-00001.done                 the unit is finished (its settings hash)
    <tag>/serve.log                                             a served checkpoint's log
    cache/llm.sqlite                                            the request cache: a re-run pays nothing twice
    summary.json, summary.md, pass_at_k.png                     pass@k per tag, benchmark, split and k

Sampling goes through the LLM client and scoring through the sandbox and the environments, as in
generation and training. A sample whose request or scoring failed on infrastructure is never a
wrong answer: it is not written, its unit gets no marker, and the command ends with exit 3 after
the other units are saved; a re-run redoes that unit from the cache. A re-run with the same
settings skips a finished unit; `--force` redoes it.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import defaultdict
from pathlib import Path

from synthgen.errors import InfraIncomplete, UserError
from synthgen.evals.data import EvalItem, benchmark_rows, choose, env_scorer
from synthgen.evals.serve import Target, served, targets
from synthgen.store import records
from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.paths import output_folder
from synthgen.store.readiness import check_finished

PROGRESS_S = 10.0


def benchmark_items(name: str, bench, data_dir: Path | None, pool, sandbox, verifier, skipped=None, seed=0) -> list:
    """The EvalItems of benchmark `name`, for `synthgen eval` and `train --eval-benchmarks` alike;
    lcb's unreadable problems go to `skipped` as (id, reason). `heldout`: a run's held-out synthetic
    problems (in-domain), read like training data (synthgen.train.data.load_problem_rows) and scored
    by their own environments; one split per environment and bin (`induction/medium`), each at most
    `--heldout-max-problems` (a seeded choice)."""
    from synthgen.evals import humaneval, lcb, mathbench

    if name == "lcb":
        return lcb.items(benchmark_rows(name, bench, data_dir, lcb.COLUMNS), bench, pool, sandbox, skipped)
    if name == "humaneval":
        limited = sandbox.model_copy(update={"timeout_s": bench.timeout_s})
        return humaneval.items(humaneval.rows(data_dir), pool, limited)
    if name != "heldout":
        return mathbench.items(name, benchmark_rows(name, bench, data_dir, mathbench.COLUMNS), verifier)
    from synthgen.envs import get_env
    from synthgen.envs.problem import Problem
    from synthgen.train.data import load_problem_rows

    by_split: dict[str, list[EvalItem]] = defaultdict(list)
    rows = load_problem_rows(bench.paths)
    envs = {env: get_env(env) for env in {row["env"] for row in rows}}
    for row in rows:
        env, problem = envs[row["env"]], Problem.from_fields(row)
        split = f"{row['env']}/{row.get('difficulty') or 'all'}"
        scorer = env_scorer(env, problem, pool, sandbox)
        by_split[split].append(EvalItem(name, str(row["problem_id"]), (split,), env.student_messages(problem), scorer))
    return [item for split in sorted(by_split) for item in choose(by_split[split], bench.max_problems, seed)]


def unit_hash(settings, benchmark: str) -> str:
    """What shapes one unit's samples: the sampling settings, the benchmark's settings, the tests' limits."""
    sampling = settings.model.sampling() | {"model": settings.model.model}
    sandbox = {"timeout_s": settings.sandbox.timeout_s, "memory_mb": settings.sandbox.memory_mb}
    bench = settings.bench(benchmark).model_dump(mode="json")
    return records.content_hash("eval", sampling, bench, sandbox, settings.seed, str(settings.data_dir or ""))


def load_items(settings, pool, verifier, skipped: dict) -> dict[str, list[EvalItem]]:
    """Every benchmark's items (this shard's share), loaded once for all targets; the problems
    that could not be read go to `skipped` (benchmark -> [(id, reason)]) and are said on stderr."""
    out: dict[str, list[EvalItem]] = {}
    for name in settings.benchmarks:
        bench, left = settings.bench(name), skipped.setdefault(name, [])
        found = benchmark_items(name, bench, settings.data_dir, pool, settings.sandbox, verifier, left, settings.seed)
        for ident, why in left:
            print(f"eval {name}: skipped problem {ident}: {why}", file=sys.stderr)
        if name != "heldout":  # (heldout chooses per split)
            found = choose(found, bench.max_problems, settings.seed)
        out[name] = [item for i, item in enumerate(found) if i % settings.num_shards == settings.shard]
    return out


def run(settings, force: bool = False) -> None:
    from synthgen.evals.summary import report
    from synthgen.sandbox import SandboxPool, SandboxUnavailable

    out = output_folder(settings.output_dir(), "--output" if settings.output else "--run-dir")
    shard = StageDir.shard_name(settings.shard, settings.num_shards)
    todo = targets(settings)
    try:
        pool = SandboxPool.from_settings(settings.sandbox)
    except SandboxUnavailable as exc:
        raise UserError(f"sandbox unavailable: {str(exc).splitlines()[0]}") from None
    verifier = None
    infra = 0
    causes: dict[str, str] = {}  # the first cause of each kind of infra failure, for the last line
    try:
        if {"math500", "aime2024"} & set(settings.benchmarks):
            from synthgen.evals.mathbench import MathVerifier

            verifier = MathVerifier()
        skipped: dict[str, list] = {}
        items = load_items(settings, pool, verifier, skipped)
        for target in todo:
            units = [b for b in settings.benchmarks if not _finished(settings, out, target, b, shard, force)]
            if not units:
                print(f"eval {target.tag}: finished earlier, nothing to do", file=sys.stderr)
                continue
            with served(target, settings, out / target.tag) as model:
                infra += asyncio.run(_evaluate(settings, model, target, units, items, out, shard, causes, skipped))
    finally:
        pool.close()
        if verifier is not None:
            verifier.close()
    report(settings, out)
    if infra:
        raise InfraIncomplete(
            f"{infra} samples failed on infrastructure ({'; '.join(causes.values()) or 'server or sandbox'}); "
            "their units are not marked finished, re-run to retry them (answers already received come from the cache)"
        )


def _finished(settings, out: Path, target: Target, benchmark: str, shard: str, force: bool) -> bool:
    unit = StageDir.at(out / target.tag / benchmark, "eval")
    return check_finished(unit, shard, unit_hash(settings, benchmark), force, elsewhere="--output / --tag", cached=True)


async def _evaluate(
    settings, model, target: Target, units, items, out: Path, shard: str, causes: dict, skipped: dict
) -> int:
    from synthgen.llm.client import LLMClient

    cache = out / "cache" / "llm.sqlite"
    infra = 0
    labels = {"teacher": "model", "student": "model"}  # eval's one role: flags --model-*, lines "model: ..."
    async with LLMClient(
        model, model, settings.llm, max_in_flight=settings.max_in_flight, cache_path=cache, labels=labels
    ) as llm:
        samples = max(settings.bench(b).samples for b in units) if units else 1
        await llm.preflight(settings.llm.wait_ready_s, {"teacher": samples})
        for benchmark in units:
            unit = StageDir.at(out / target.tag / benchmark, "eval")
            with unit.lock(shard):
                rows, failed = await _sample_and_score(llm, settings, target, benchmark, items[benchmark], causes)
                infra += failed
                if failed:
                    continue
                digest = unit_hash(settings, benchmark)
                meta = file_metadata("eval", digest, {"tag": target.tag, "benchmark": benchmark})
                unit.clear_shard(shard)
                unit.write_part(shard, 0, records.table_from_rows(rows, records.EVAL_SAMPLES), meta)
                unit.mark_done(
                    shard,
                    {
                        "rows": len(rows),
                        "settings_hash": digest,
                        "tag": target.tag,
                        "step": target.step,
                        "benchmark": benchmark,
                        "problems": len(items[benchmark]),
                        "timeouts": sum(bool(r["timed_out"]) for r in rows),
                        "skipped": [list(pair) for pair in skipped.get(benchmark, [])],
                    },
                )
    return infra


async def _sample_and_score(llm, settings, target: Target, benchmark: str, items: list[EvalItem], causes: dict):
    bench = settings.bench(benchmark)
    digest = unit_hash(settings, benchmark)
    rows: list[dict] = []
    state = {"done": 0, "infra": 0, "correct": 0, "scored": 0, "timeouts": 0}
    started = time.monotonic()

    async def one(item: EvalItem) -> None:
        key = f"{target.tag}/{benchmark}/{item.problem_id}"
        completions = await llm.complete("student", item.messages, n=bench.samples, key=key)

        async def judge(index: int, completion) -> None:
            infra = completion.status == "infra"
            reward = None if infra else await item.score(completion.content, completion.status == "truncated")
            if reward is None or reward.value is None:  # the server's or the sandbox's failure
                state["infra"] += 1
                cause = (completion.error or "server: unknown") if infra else f"sandbox: {reward.detail or 'unknown'}"
                causes.setdefault(cause.split(":", 1)[0], cause)
                return
            correct = reward.value >= 0.5
            timed_out = not correct and bool(reward.calls) and str(reward.calls[-1].status) == "timeout"
            state["scored"] += 1
            state["correct"] += correct
            state["timeouts"] += timed_out
            rows.append(
                {
                    "tag": target.tag,
                    "step": target.step,
                    "benchmark": benchmark,
                    "problem_id": item.problem_id,
                    "splits": list(item.splits),
                    "sample": index,
                    "correct": correct,
                    "timed_out": timed_out,
                    "status": reward.status,
                    "detail": reward.detail or None,
                    "completion": completion.content,
                    "finish_reason": completion.finish_reason,
                    "model": completion.model or llm.roles["student"].model,
                    "prompt_tokens": completion.prompt_tokens,
                    "completion_tokens": completion.completion_tokens,
                    "settings_hash": digest,
                }
            )

        await asyncio.gather(*(judge(i, c) for i, c in enumerate(completions)))
        state["done"] += 1

    def say(final: bool = False) -> None:
        elapsed, done, total = time.monotonic() - started, state["done"], len(items)
        eta = "" if final or not done else f", ETA {_duration(elapsed / done * (total - done))}"
        rate = f", {state['correct']}/{state['scored']} correct" if state["scored"] else ""
        infra = f", {state['infra']} infra" if state["infra"] else ""
        infra += f", {state['timeouts']} cut by a time limit" if state["timeouts"] else ""
        word = "done in" if final else "elapsed"
        line = f"eval {target.tag} {benchmark}: {done}/{total} problems{rate}{infra}, {word} {_duration(elapsed)}{eta}"
        print(line, file=sys.stderr, flush=True)

    async def tick() -> None:
        while True:
            await asyncio.sleep(PROGRESS_S)
            say()

    ticker = asyncio.create_task(tick())
    try:
        await asyncio.gather(*(one(item) for item in items))
    finally:
        ticker.cancel()
    say(final=True)
    rows.sort(key=lambda r: (r["problem_id"], r["sample"]))
    return rows, state["infra"]


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{(seconds % 3600) // 60:02d}m"
