"""A learning curve for the scripted student: the policy "improves" with the training step. NOT a model.

The scripted student solves a bank problem of level L (1..5) with the bank's probability
(0.97, 0.86, 0.5, 0.11, 0.0). With a learning curve of `gain` levels per 100 steps, a request
made for policy step t is answered as if the problem were at level L - gain * t / 100, the
probability read off the bank's table by linear interpolation (1.0 below level 0, 0.0 above
level 5). At step 0, or with gain 0, it is the bank's table exactly.

Two users: the scripted server's student (a request's `policy_step` field names the step; see
synthgen.demo.scripted.bank), and `CurveScorer`, which stands in for the training reward in tests and
in bench/online.py so that the policy's pass rates follow the same curve without real learning.
"""

from __future__ import annotations

from collections.abc import Sequence

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted.faults import unit

# (level, solve probability): the bank's table with the two ends the interpolation needs.
_POINTS = [(0.0, 1.0)] + [(float(i + 1), p) for i, p in enumerate(bp.SOLVE_PROBABILITY)] + [(6.0, 0.0)]


def solve_probability(level: int, step: float = 0.0, gain: float = 0.0) -> float:
    """How often the scripted policy at `step` solves a level-`level` bank problem."""
    x = level - gain * float(step or 0) / 100.0
    if x <= _POINTS[0][0]:
        return _POINTS[0][1]
    for (x0, p0), (x1, p1) in zip(_POINTS, _POINTS[1:]):
        if x == x1:  # on a level: the table's own number, no rounding
            return p1
        if x < x1:
            return p0 + (p1 - p0) * (x - x0) / (x1 - x0)
    return 0.0


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
