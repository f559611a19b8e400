"""Run inside verifiers' own venv (tests/interop/test_verifiers.py): the export's package through verifiers.

    python verifiers_script.py ENV_ID BASE_URL FAIL_ON

Loads the installed environment package by id (`verifiers.load_environment`), then runs verifiers'
own evaluation (rollouts in groups of two against the OpenAI-compatible server at BASE_URL, then
its rubric) twice: as is, and with the sandbox failing on completions that equal FAIL_ON (the
scorer reports `infra` for them, as when a sandbox worker dies) and `max_retries=1`. Prints JSON
lines: {"check": "env", ...}, then {"check": "rollouts", "run": ..., "rollouts": [...]} per run.
"""

from __future__ import annotations

import json
import os
import sys


def emit(**fields) -> None:
    print(json.dumps(fields, sort_keys=True, default=str), flush=True)


def evaluate(env, base_url: str, max_retries: int) -> list[dict]:
    import verifiers as vf

    os.environ["SYNTHGEN_TEST_KEY"] = "unused"
    client = vf.ClientConfig(api_base_url=base_url, api_key_var="SYNTHGEN_TEST_KEY", max_retries=0)
    result = env.evaluate_sync(
        client=client,
        model="scripted",
        num_examples=-1,
        rollouts_per_example=2,
        max_concurrent=4,
        max_retries=max_retries,
    )
    outputs = result["outputs"] if isinstance(result, dict) else result.outputs
    rows = []
    for out in outputs:
        completion = out.get("completion") or []
        text = "".join(
            (m.get("content") if isinstance(m, dict) else getattr(m, "content", "")) or "" for m in completion
        )
        error = out.get("error")
        rows.append(
            {
                "example_id": out.get("example_id"),
                "task": out.get("task"),
                "text": text,
                "reward": out.get("reward"),
                "metrics": out.get("metrics"),
                "error": (error.get("error_chain_repr") or error.get("type")) if isinstance(error, dict) else error,
            }
        )
    return rows


def main(env_id: str, base_url: str, fail_on: str) -> None:
    import verifiers as vf

    env = vf.load_environment(env_id)
    emit(
        check="env",
        cls=type(env).__name__,
        version=vf.__version__,
        funcs=env.rubric._get_reward_func_names(),  # the env's rubric, with verifiers' own monitor rubric
        weights=list(env.rubric._get_reward_weights()),
        groups=bool(env.requires_group_rollouts),
        rows=len(env.get_dataset()),
    )
    emit(check="rollouts", run="plain", rollouts=evaluate(env, base_url, max_retries=0))

    from synthgen.envs.problem import Reward
    from synthgen.interop import scorer

    real_score = scorer.score

    def score_failing(truths, completions, truncated=None):
        rewards = real_score(truths, completions, truncated)
        return [Reward(None, "infra", "worker died") if c == fail_on else r for c, r in zip(completions, rewards)]

    scorer.score = score_failing
    emit(check="rollouts", run="infra", rollouts=evaluate(env, base_url, max_retries=1))


if __name__ == "__main__":
    main(*sys.argv[1:4])
