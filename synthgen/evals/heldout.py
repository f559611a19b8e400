"""Held-out synthetic problems of a run (in-domain): one split per environment and bin (`induction/medium`).

The folders are read like training data (synthgen.train.data.load_problem_rows: every table
checked, invalid and unscorable rows skipped); each problem is prompted and scored by its own
environment, exactly as in training. `--heldout-max-problems` caps each split (a seeded choice).
"""

from __future__ import annotations

from synthgen.evals.data import EvalItem, choose, env_scorer


def items(settings, pool, sandbox, seed: int) -> list[EvalItem]:
    from synthgen.envs import get_env
    from synthgen.envs.problem import Problem
    from synthgen.train.data import load_problem_rows

    by_split: dict[str, list[EvalItem]] = {}
    envs: dict = {}
    for row in load_problem_rows(settings.paths):
        env = envs.setdefault(row["env"], get_env(row["env"]))
        problem = Problem.from_fields(row)
        split = f"{row['env']}/{row.get('difficulty') or 'all'}"
        item = EvalItem(
            "heldout",
            str(row["problem_id"]),
            (split,),
            env.student_messages(problem),
            env_scorer(env, problem, pool, sandbox),
        )
        by_split.setdefault(split, []).append(item)
    return [item for split in sorted(by_split) for item in choose(by_split[split], settings.max_problems, seed)]
