"""CurveScorer: a training reward that follows the scripted student's learning curve, so that tests and
bench/online.py see pass rates move as if a policy learned, without real learning. Not a verifier."""

from __future__ import annotations

from collections.abc import Sequence

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted.bank import solve_probability
from synthgen.demo.scripted.faults import unit


def bank_level(row: dict) -> int | None:
    """The bank level of a problem row."""
    found = bp.recognise(row.get("env"), str(row.get("code") or ""), str(row.get("message") or ""))
    return None if found is None else found[1]


class CurveScorer:
    """A training reward that follows the learning curve (tests and the bench; not a verifier).

    `scorer(rows, completions, truncated)` as synthgen.train.rewards expects: a completion of a
    level-L problem at the current step is correct with `solve_probability(L, step, gain)`, by a
    seeded hash of (problem, step, its position), so reruns and resumed runs score alike; a
    problem the bank does not know scores 0. `step` follows training through `callback()`.
    `groups` records (step, problem_id, level, probability) per prompt group it scored (G = `group_size` rows).
    """

    def __init__(self, gain: float, seed: int = 0, group_size: int = 8):
        self.gain, self.seed, self.group_size, self.step = gain, seed, group_size, 0
        self.groups: list[tuple[int, str, int | None, float]] = []

    def __call__(self, rows: Sequence[dict], completions: Sequence[str], truncated: Sequence[bool]) -> list[float]:
        out, p = [], 0.0
        for i, row in enumerate(rows):
            key = str(row.get("problem_id"))
            if i % self.group_size == 0:  # TRL hands the reward a prompt's G rows together (G = group_size)
                level = bank_level(row)
                p = 0.0 if level is None else solve_probability(level, self.step, self.gain)
                self.groups.append((self.step, key, level, p))
            out.append(1.0 if unit(self.seed, "curve", key, self.step, i) < p else 0.0)
        return out

    def callback(self):
        """A TrainerCallback that keeps `step` at the trainer's global step."""
        from transformers import TrainerCallback

        scorer = self

        class _Step(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                scorer.step = state.global_step

        return _Step()
