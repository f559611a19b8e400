"""Periodic evaluation during training: held-out splits, pass@k, a file and the trackers.

`PeriodicEval` is a TrainerCallback. Every `--eval-every` optimizer steps (and at the last step)
it samples `--eval-samples` completions per held-out problem from the policy being trained,
in-process (the trainer's own model, at `--eval-temperature`, 0.2 as the paper evaluated), scores
them with the training reward's scorer (the sandboxed environment verifiers), and computes pass@k
per split with the unbiased estimator 1 - C(n-c, k) / C(n, k) (n scored samples, c correct; a
sandbox infrastructure failure is left out of n, never counted wrong). Results go to
`<output>/eval_pass_at_k.csv` (step, suite, split, problems, samples, k, pass_at_k) and to every
`report_to` tracker as `eval/<suite>/<split>/pass@<k>`.

An evaluation suite is anything with a `name` and `evaluate(generate, step) -> {split: [(n, c), ...]}`
(`Evaluator`): `HeldOutEvaluator` (held-out problems per difficulty bin), the benchmarks of
`synthgen eval` (synthgen.evals.train_hook), or any passed as `run(settings, evaluators=[...])`.
`generate` is the policy in-process, or a server holding the current weights (`train --async`).

Under several processes every evaluator runs on every process and the counts of all processes
are gathered, so all processes log the same figures; only the main one writes the file. An
evaluator therefore does its share only (`HeldOutEvaluator` takes every `world`-th problem of
each split), or returns counts on one process and nothing on the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from transformers import TrainerCallback

from synthgen.evals.summary import split_pass_at_k  # one estimator for train and eval
from synthgen.train.solve_rates import append_csv, truncate_csv

log = logging.getLogger(__name__)

EVAL_FILE = "eval_pass_at_k.csv"
EVAL_FIELDS = ["step", "suite", "split", "problems", "samples", "k", "pass_at_k"]

# (prompts as chat messages, completions per prompt) -> per prompt, n (text, truncated) pairs
Generate = Callable[[Sequence[list], int], list[list[tuple[str, bool]]]]
Counts = dict[str, list[tuple[int, int]]]  # split -> (scored samples, correct samples) per problem


class Evaluator(Protocol):
    name: str

    def evaluate(self, generate: Generate, step: int) -> Counts: ...


def _resolve(result):
    return asyncio.run(result) if inspect.isawaitable(result) else result


class HeldOutEvaluator:
    """Held-out synthetic problems, one split per difficulty bin, scored by the training scorer."""

    def __init__(
        self,
        splits: Mapping[str, Sequence[dict]],
        scorer,
        prompt_fn,
        samples: int,
        *,
        name: str = "heldout",
        rank: int = 0,
        world: int = 1,
    ):
        self.name = name
        self.splits = {b: list(rows)[rank::world] for b, rows in sorted(splits.items())}
        self.scorer, self.prompt_fn, self.samples = scorer, prompt_fn, samples

    def evaluate(self, generate: Generate, step: int) -> Counts:
        order = [(b, row) for b, rows in self.splits.items() for row in rows]
        out: Counts = {b: [] for b in self.splits}
        if not order:
            return out
        outputs = generate([self.prompt_fn(row) for _, row in order], self.samples)
        rows = [row for _, row in order for _ in range(self.samples)]
        texts = [text for per in outputs for text, _ in per]
        truncated = [cut for per in outputs for _, cut in per]
        rewards = list(_resolve(self.scorer(rows, texts, truncated)))
        for i, (b, _) in enumerate(order):
            mine = [r for r in rewards[i * self.samples : (i + 1) * self.samples] if r is not None]
            out[b].append((len(mine), sum(1 for r in mine if float(r) >= 0.5)))
        return out


@contextlib.contextmanager
def policy_sampler(trainer, *, temperature: float, max_new_tokens: int, batch: int, seed: int | None = None):
    """`generate` (as in_process_generate) on the trainer's current weights, in eval mode, inside a
    forked RNG (seeded with `seed` when given): sampling never moves the training run's own
    random stream, and the model goes back to training mode after."""
    import torch
    from trl.models import unwrap_model_for_generation

    devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
    with (
        torch.random.fork_rng(devices=devices),
        unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model,
    ):
        if seed is not None:
            torch.manual_seed(seed)
        was_training = model.training
        model.eval()
        try:
            yield in_process_generate(
                model,
                trainer.processing_class,
                trainer.eos_token_ids,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                batch_completions=batch,
            )
        finally:
            model.train(was_training)


def in_process_generate(
    model, tokenizer, eos_token_ids: Sequence[int], *, temperature: float, max_new_tokens: int, batch_completions: int
) -> Generate:
    """`Generate` with the policy's own `generate` (sampling, no top-k / top-p cut), left-padded batches."""
    import torch
    from transformers import GenerationConfig

    def config(n: int):
        return GenerationConfig(
            do_sample=True,
            temperature=temperature,
            top_p=1.0,
            top_k=0,
            num_return_sequences=n,
            max_new_tokens=max_new_tokens,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=list(eos_token_ids),
            disable_compile=True,
        )

    eos = set(eos_token_ids)

    def generate(prompts: Sequence[list], n: int) -> list[list[tuple[str, bool]]]:
        texts = [tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts]
        per_batch = max(1, batch_completions // n)
        out: list[list[tuple[str, bool]]] = []
        device = next(model.parameters()).device
        for i in range(0, len(texts), per_batch):
            enc = tokenizer(
                texts[i : i + per_batch],
                return_tensors="pt",
                padding=True,
                padding_side="left",
                add_special_tokens=False,
            ).to(device)
            with torch.no_grad():
                ids = model.generate(**enc, generation_config=config(n))
            for j, seq in enumerate(ids[:, enc["input_ids"].shape[1] :].tolist()):
                end = next((t for t, tok in enumerate(seq) if tok in eos), None)
                body = seq if end is None else seq[:end]
                if j % n == 0:
                    out.append([])
                out[-1].append(
                    (tokenizer.decode(body, skip_special_tokens=True), end is None and len(seq) >= max_new_tokens)
                )
        return out

    return generate


class PeriodicEval(TrainerCallback):
    """Runs the evaluators every `every` steps and at the end; see the module docstring."""

    def __init__(
        self,
        trainer,
        evaluators: Sequence[Evaluator],
        *,
        every: int,
        ks: Sequence[int],
        temperature: float,
        max_new_tokens: int,
        generate: Generate | None = None,
    ):
        self.trainer, self.evaluators, self.every, self.ks = trainer, list(evaluators), every, list(ks)
        self.by_name = {ev.name: ev for ev in self.evaluators}
        self.temperature, self.max_new_tokens = temperature, max_new_tokens
        # A server holding the current weights (train --async: its vLLM server) instead of the policy in-process.
        self.generate = generate
        self.done_steps: set[int] = set()

    def on_train_begin(self, args, state, control, **kwargs):
        if self.trainer.accelerator.is_main_process:  # a resumed run redoes the steps after its checkpoint
            truncate_csv(Path(args.output_dir) / EVAL_FILE, state.global_step + 1)

    def on_step_end(self, args, state, control, **kwargs):
        step = state.global_step
        if step in self.done_steps or not (step % self.every == 0 or step >= state.max_steps):
            return control
        self.done_steps.add(step)
        figures = self.evaluate(step)
        metrics = self.trainer._metrics["train"]
        for (suite, split, k), (value, _) in figures.items():
            if value is not None:
                metrics[f"eval/{suite}/{split}/pass@{k}"].append(value)
        control.should_log = True  # so the trackers get the figures at this step
        if self.trainer.accelerator.is_main_process:
            self._write(Path(args.output_dir), step, figures)
        return control

    def evaluate(self, step: int) -> dict[tuple[str, str, int], tuple[float | None, int]]:
        from accelerate.utils import gather_object

        t = self.trainer
        batch = max(t.args.per_device_train_batch_size, 1)
        sampler = (
            contextlib.nullcontext(self.generate)
            if self.generate is not None
            else policy_sampler(t, temperature=self.temperature, max_new_tokens=self.max_new_tokens, batch=batch)
        )
        with sampler as generate:
            local = [
                (ev.name, split, n, c)
                for ev in self.evaluators
                for split, counts in ev.evaluate(generate, step).items()
                for n, c in counts
            ]
        counts: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for suite, split, n, c in gather_object(local):
            counts.setdefault((suite, split), []).append((n, c))
        return {
            (suite, split, k): split_pass_at_k(v, k)
            for (suite, split), v in sorted(counts.items())
            # a suite's own k (a benchmark's, e.g. math500 1 and 5), else the trainer's
            for k in getattr(self.by_name[suite], "ks", None) or self.ks
        }

    def on_train_end(self, args, state, control, **kwargs):
        for ev in self.evaluators:  # worker pools (the math verifier) end with the run
            if hasattr(ev, "close"):
                ev.close()
        return control

    def _write(self, out: Path, step: int, figures) -> None:
        out.mkdir(parents=True, exist_ok=True)
        rows = [
            {
                "step": step,
                "suite": suite,
                "split": split,
                "problems": problems,
                "samples": getattr(self.by_name[suite], "samples", ""),
                "k": k,
                "pass_at_k": "" if value is None else round(value, 6),
            }
            for (suite, split, k), (value, problems) in figures.items()
        ]
        append_csv(out / EVAL_FILE, EVAL_FIELDS, rows)
        summary = ", ".join(
            f"{suite}/{split} pass@{k}={value:.3f}"
            for (suite, split, k), (value, _) in figures.items()
            if value is not None
        )
        log.info("eval at step %d: %s", step, summary or "no problem had enough scored samples")


def add_periodic_eval(trainer, settings, args, scorer, prompt_fn, evaluators, heldout, generate=None) -> None:
    """`PeriodicEval` over the held-out splits, `evaluators` and the `--eval-benchmarks` (LiveCodeBench,
    HumanEval, ... scored as `synthgen eval` scores them), when `--eval-every` is set; `generate`: a
    server holding the current weights, instead of the policy in-process."""
    ev = settings.eval
    if not ev.steps:
        return
    acc = trainer.accelerator
    max_tokens = ev.max_completion_length or args.max_completion_length
    suites = list(evaluators)
    if ev.benchmarks:
        from synthgen.evals.train_hook import benchmark_evaluators

        suites += benchmark_evaluators(
            ev, settings.sandbox, max_tokens=max_tokens, rank=acc.process_index, world=acc.num_processes
        )
    if heldout:
        held = HeldOutEvaluator(heldout, scorer, prompt_fn, ev.samples, rank=acc.process_index, world=acc.num_processes)
        suites.insert(0, held)
    every = dict(every=ev.steps, ks=ev.k, temperature=ev.temperature, max_new_tokens=max_tokens, generate=generate)
    trainer.add_callback(PeriodicEval(trainer, suites, **every))
