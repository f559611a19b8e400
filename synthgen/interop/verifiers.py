"""The environment for `verifiers` (and prime-rl, which trains on verifiers environments).

`synthgen export --format verifiers OUT` writes an installable environment package; its
`load_environment(split="train", **kwargs)` calls this module's `load_environment` on the data it
ships (`train.parquet`, `test.parquet`: `prompt` messages, `answer` the ground truth, `info` the
measurement, the environment's name in `info.env`; no `task` column, which verifiers 0.3 keeps
for its own routing and refuses as a plain string):

    pip install OUT && python -c "import verifiers as vf; env = vf.load_environment('<its name>')"

The environment is a `vf.SingleTurnEnv` whose `vf.Rubric` has one reward function, `synthgen`:
each environment's own verifier, run in synthgen's sandbox pool (synthgen.interop.scorer: one per
process, started on the first call, closed at exit), never in the verifiers process; and one
metric of weight 0, `synthgen_infra` (1.0 where the sandbox failed). The reward is a *group*
function: a rollout group's completions go to the sandbox together, and verifiers then runs
rollouts in groups (`requires_group_rollouts`), as GRPO wants them.

A sandbox infrastructure failure is never scored as a wrong answer. verifiers cannot take a
missing reward (its rubric turns None, or an exception from a reward function, into 0.0), so:
  * the rollout's `state["error"]` is set to `vf.SandboxError`, verifiers' own infrastructure
    error: with `max_retries` (the orchestrator's and `vf-eval`'s setting) verifiers runs the
    group again, and when retries run out the output carries the error, which evaluations report
    as an error, not a wrong answer;
  * its reward is the mean of the scored rollouts of its group (0.0 if none was scored), so the
    advantage verifiers computes for it (reward minus the group's mean) is exactly 0, as TRL gives
    a None.
A ground truth that is not synthgen's (the wrong `answer` column) is a data error, not the
sandbox's: the group's states get `vf.Error` and 0.0, and the log says why.

Pinned and tested against verifiers 0.3 (the classic `SingleTurnEnv` / `Rubric` API, which
verifiers 0.4 removed in favour of its v1 stack). Nothing heavy at import.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SPLITS = ("train", "test")


def completion_text(completion: Any) -> str:
    """The assistant text of a verifiers completion: a string, or messages as dicts or message objects."""
    if isinstance(completion, str):
        return completion
    parts = []
    for message in completion or []:
        get = message.get if isinstance(message, dict) else lambda k, m=message: getattr(m, k, None)
        if (get("role") or "assistant") != "assistant":
            continue
        content = get("content") or ""
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(
                str(p.get("text", "") if isinstance(p, dict) else getattr(p, "text", "") or "") for p in content
            )
        parts.append(str(content))
    return "".join(parts)


def _verdicts(answers: list, texts: list[str]) -> tuple[list[float], list[str | None], str]:
    """(rewards, error details or None per rollout, error kind) for one group; see the module's policy."""
    from synthgen.interop import scorer
    from synthgen.interop.records import GroundTruthError

    try:
        rewards = scorer.score(answers, texts)
    except GroundTruthError as exc:
        return [0.0] * len(texts), [str(exc)] * len(texts), "data"
    except Exception as exc:  # the sandbox could not start or broke mid-call: not the answers' fault
        detail = f"{type(exc).__name__}: {exc}"
        return [0.0] * len(texts), [detail] * len(texts), "infra"
    scored = [float(r.value) for r in rewards if r.status != "infra"]
    mean = sum(scored) / len(scored) if scored else 0.0
    values = [mean if r.status == "infra" else float(r.value) for r in rewards]
    errors = [(r.detail or "sandbox failure") if r.status == "infra" else None for r in rewards]
    return values, errors, "infra"


async def synthgen(completions, answers, states, **kwargs) -> list[float]:
    """The group reward: 1.0 / 0.0 by the environment's verifier; a sandbox failure as the module says."""
    import verifiers as vf

    texts = [completion_text(c) for c in completions]
    values, errors, kind = await asyncio.to_thread(_verdicts, list(answers), texts)
    for state, error in zip(states, errors):
        state["synthgen_infra"] = 1.0 if error is not None and kind == "infra" else 0.0
        if error is not None:
            state["error"] = vf.SandboxError(error) if kind == "infra" else vf.Error(error)
    failed = [e for e in errors if e is not None]
    if failed:
        log.warning(
            "synthgen reward: %d of %d rollout(s) not scored (%s): %s", len(failed), len(errors), kind, failed[0]
        )
    return values


async def synthgen_infra(states, **kwargs) -> list[float]:
    """A metric (weight 0): 1.0 for a rollout the sandbox could not score."""
    return [float(state.get("synthgen_infra", 0.0)) for state in states]


def rubric():
    """synthgen's rubric: the `synthgen` reward (weight 1) and the `synthgen_infra` metric (weight 0)."""
    import verifiers as vf

    return vf.Rubric(funcs=[synthgen, synthgen_infra], weights=[1.0, 0.0])


def load_environment(data_dir: str | Path, split: str = "train", **kwargs):
    """A `vf.SingleTurnEnv` on the export's `split` (eval set: its `test` split, when there is one).

    Keyword arguments go to `vf.SingleTurnEnv` (system_prompt, sampling_args, ...).
    """
    import verifiers as vf
    from datasets import load_dataset

    from synthgen.errors import UserError

    folder = Path(data_dir)
    files = {name: folder / f"{name}.parquet" for name in SPLITS if (folder / f"{name}.parquet").is_file()}
    if split not in files:
        raise UserError(f"no {split}.parquet in {folder} (it has: {', '.join(files) or 'none'})")

    def read(name: str):
        return load_dataset("parquet", data_files=str(files[name]), split="train")

    eval_dataset = read("test") if "test" in files and split != "test" else None
    return vf.SingleTurnEnv(dataset=read(split), eval_dataset=eval_dataset, rubric=rubric(), **kwargs)
