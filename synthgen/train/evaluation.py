"""Periodic evaluation during training: held-out splits, pass@k, a file and the trackers.

`PeriodicEval` (a TrainerCallback), every `--eval-every` optimizer steps and at the last, samples
`--eval-samples` completions per problem of each suite from the policy being trained (in-process,
at `--eval-temperature`, 0.2 as the paper evaluated), scores them and computes pass@k per split
with the unbiased estimator (synthgen.evals.summary; an infrastructure failure is left out,
never counted wrong). Results go to `<output>/eval_pass_at_k.csv` and to every `report_to`
tracker as `eval/<suite>/<split>/pass@<k>`.

A suite (`Evaluator`) has a `name` and `evaluate(generate, step) -> {split: [(n, c), ...]}`:
`HeldOutEvaluator`, the benchmarks of `synthgen eval` (synthgen.evals.train_hook), or any passed
as `run(settings, evaluators=[...])`; `generate` is the policy in-process, or a server holding the
current weights (`train --async`). Every process runs every suite on its share of the problems
and the counts are gathered, so all log the same figures; only the main one writes the file.
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


class HeldOutEvaluator:
    """Held-out synthetic problems, one split per difficulty bin, scored by the training scorer;
    this process takes every `world`-th problem of each split."""

    name = "heldout"

    def __init__(self, splits: Mapping[str, Sequence[dict]], scorer, prompt_fn, samples: int, rank: int, world: int):
        self.splits = {b: list(rows)[rank::world] for b, rows in sorted(splits.items())}
        self.scorer, self.prompt_fn, self.samples = scorer, prompt_fn, samples

    def evaluate(self, generate: Generate, step: int) -> Counts:
        order = [(b, row) for b, rows in self.splits.items() for row in rows]
        if not order:
            return {b: [] for b in self.splits}
        outputs = generate([self.prompt_fn(row) for _, row in order], self.samples)
        rows = [row for _, row in order for _ in range(self.samples)]
        texts = [text for per in outputs for text, _ in per]
        truncated = [cut for per in outputs for _, cut in per]
        rewards = self.scorer(rows, texts, truncated)
        rewards = list(asyncio.run(rewards) if inspect.isawaitable(rewards) else rewards)
        out: Counts = {b: [] for b in self.splits}
        for i, (b, _) in enumerate(order):
            mine = [r for r in rewards[i * self.samples : (i + 1) * self.samples] if r is not None]
            out[b].append((len(mine), sum(1 for r in mine if float(r) >= 0.5)))
        return out


@contextlib.contextmanager
def policy_sampler(trainer, *, temperature: float, max_new_tokens: int, batch: int, seed: int | None = None):
    """A `Generate` on the trainer's current weights: the policy's own `generate` (sampling, no top-k /
    top-p cut, left-padded batches of about `batch` completions) in eval mode, inside a forked RNG
    (seeded with `seed` when given): sampling never moves the training run's own random stream,
    and the model goes back to training mode after."""
    import torch
    from transformers import GenerationConfig
    from trl.models import unwrap_model_for_generation

    tokenizer, eos = trainer.processing_class, list(trainer.eos_token_ids)

    def generate(prompts: Sequence[list], n: int) -> list[list[tuple[str, bool]]]:
        config = GenerationConfig(
            do_sample=True,
            temperature=temperature,
            top_p=1.0,
            top_k=0,
            num_return_sequences=n,
            max_new_tokens=max_new_tokens,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=eos,
            disable_compile=True,
        )
        texts = [tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts]
        per_batch = max(1, batch // n)
        out: list[list[tuple[str, bool]]] = []
        for i in range(0, len(texts), per_batch):
            enc = tokenizer(
                texts[i : i + per_batch],
                return_tensors="pt",
                padding=True,
                padding_side="left",
                add_special_tokens=False,
            ).to(next(model.parameters()).device)
            with torch.no_grad():
                ids = model.generate(**enc, generation_config=config)
            for j, seq in enumerate(ids[:, enc["input_ids"].shape[1] :].tolist()):
                end = next((t for t, tok in enumerate(seq) if tok in eos), None)
                body = seq if end is None else seq[:end]
                if j % n == 0:
                    out.append([])
                out[-1].append(
                    (tokenizer.decode(body, skip_special_tokens=True), end is None and len(seq) >= max_new_tokens)
                )
        return out

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
            yield generate
        finally:
            model.train(was_training)


class PeriodicEval(TrainerCallback):
    """Runs the evaluators every `every` steps and at the end; see the module docstring."""

    def __init__(self, trainer, evaluators: Sequence[Evaluator], ev, max_new_tokens: int, generate: Generate | None):
        """`ev`: the PeriodicEvalSettings; `generate`: a server holding the current weights, or None (in-process)."""
        self.trainer, self.evaluators, self.ev, self.max_new_tokens = trainer, list(evaluators), ev, max_new_tokens
        self.by_name = {suite.name: suite for suite in self.evaluators}
        self.generate = generate
        self.done_steps: set[int] = set()

    def on_train_begin(self, args, state, control, **kwargs):
        if self.trainer.accelerator.is_main_process:  # a resumed run redoes the steps after its checkpoint
            truncate_csv(Path(args.output_dir) / EVAL_FILE, state.global_step + 1)

    def on_step_end(self, args, state, control, **kwargs):
        step = state.global_step
        if step in self.done_steps or not (step % self.ev.steps == 0 or step >= state.max_steps):
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
            else policy_sampler(t, temperature=self.ev.temperature, max_new_tokens=self.max_new_tokens, batch=batch)
        )
        with sampler as generate:
            local = [
                (suite.name, split, n, c)
                for suite in self.evaluators
                for split, counts in suite.evaluate(generate, step).items()
                for n, c in counts
            ]
        counts: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for suite, split, n, c in gather_object(local):
            counts.setdefault((suite, split), []).append((n, c))
        return {
            (suite, split, k): split_pass_at_k(v, k)
            for (suite, split), v in sorted(counts.items())
            # a suite's own k (a benchmark's, e.g. math500 1 and 5), else the trainer's
            for k in getattr(self.by_name[suite], "ks", None) or self.ev.k
        }

    def on_train_end(self, args, state, control, **kwargs):
        for suite in self.evaluators:  # worker pools (the math verifier) end with the run
            if hasattr(suite, "close"):
                suite.close()
        return control

    def _write(self, out: Path, step: int, figures) -> None:
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        for (suite, split, k), (value, problems) in figures.items():
            samples = getattr(self.by_name[suite], "samples", "")
            shown = "" if value is None else round(value, 6)
            rows.append(dict(zip(EVAL_FIELDS, (step, suite, split, problems, samples, k, shown))))
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
    rank, world = acc.process_index, acc.num_processes
    suites = [HeldOutEvaluator(heldout, scorer, prompt_fn, ev.samples, rank, world)] if heldout else []
    suites += evaluators
    if ev.benchmarks:
        from synthgen.evals.train_hook import benchmark_evaluators

        suites += benchmark_evaluators(ev, settings.sandbox, max_tokens=max_tokens, rank=rank, world=world)
    trainer.add_callback(PeriodicEval(trainer, suites, ev, max_tokens, generate))
