"""Runs `synthgen.train.run.run` with a scripted scorer and prompt; used in-process and by torchrun.

    torchrun --nproc_per_node 2 tests/train/grpo_worker.py SETTINGS.json

The scorer depends only on a completion's bin and position, so every run is reproducible:
easy -> 1, medium -> 0, easy_medium -> 1/0 alternating, hard -> None (infra) / 1 alternating.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def fake_prompt(row: dict) -> list:
    return [{"role": "user", "content": f"What does f return for {row['inputs'][0]}?\n{row['code']}"}]


class FakeScorer:
    def __init__(self):
        self.calls: list[list[tuple[str, str]]] = []  # per call (= per round): (bin, problem_id) per completion

    def __call__(self, rows, completions, truncated):
        self.calls.append([(r["difficulty"], r["problem_id"]) for r in rows])
        out = []
        for i, r in enumerate(rows):
            b = r["difficulty"]
            out.append(
                {"easy": 1.0, "medium": 0.0, "easy_medium": float(i % 2 == 0), "hard": None if i % 2 == 0 else 1.0}[b]
            )
        return out


def main(argv: list[str]) -> int:
    import logging
    import os

    from synthgen.train.run import run
    from synthgen.train.settings import TrainSettings

    logging.basicConfig(level=logging.WARNING)
    settings = TrainSettings(**json.loads(Path(argv[0]).read_text()))
    scorer = FakeScorer()
    run(settings, scorer=scorer, prompt_fn=fake_prompt)
    rank = os.environ.get("RANK", "0")
    with open(os.path.join(settings.output, f"scorer_calls_rank{rank}.json"), "w") as fh:
        json.dump(scorer.calls, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
