"""The `frontier` curriculum: adaptive bin weights from the solve rates a run observes, instead of
a fixed table (synthgen.train.curriculum has the tables). Pure Python, no torch."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from synthgen.errors import UserError
from synthgen.train.settings import FrontierSettings


class FrontierPolicy:
    """Adaptive bin weights from observed solve rates (frontier-learning regret, SCALER-like smoothing).

    The rule, per generation round r (a group = the G completions of one prompt):
      * regret of a group with s successes out of n scored completions: rho = 1[s >= 1] - s/n
        (0 when never or always solved, highest when solved rarely: the learning frontier);
        infra failures (reward None) are not counted in n.
      * per bin b: R_b <- (1 - ema) R_b + ema * mean rho over b's groups of the round (the first
        observation sets R_b); bins not observed keep R_b (prior_regret until first seen).
      * priority P_b = R_b + staleness * (rounds since b was last observed)  (frontier learning).
      * target q_b = (1 - floor) P_b / sum P + floor / K   (K bins; uniform when all P are 0).
      * weights w <- (1 - smoothing) w + smoothing q, starting uniform (SCALER-like gradual moves).
    Round r is drawn with the weights after folding rounds <= r - lag only: the dataloader reads
    ahead, so the newest rounds are not scored yet when r is drawn; a fixed lag makes the draw a
    pure function of recorded stats, identical on every process and when replayed on resume.
    """

    def __init__(self, bins: list[str], settings: FrontierSettings | None = None, lag: int = 3):
        if not bins:
            raise UserError("the frontier curriculum needs at least one difficulty bin")
        self.bins = list(bins)
        self.s = settings or FrontierSettings()
        self.lag = max(1, int(lag))
        self.stats: dict[int, dict[str, list[float]]] = {}  # round -> bin -> [groups, regret_sum, solved, scored]
        self.late_rounds = 0  # rounds folded before their stats arrived (a lag too short; should stay 0)
        self._reset()

    def _reset(self) -> None:
        self._folded = -1  # last round folded into the state below
        self._regret: dict[str, float | None] = dict.fromkeys(self.bins)
        self._last_seen = dict.fromkeys(self.bins, -1)
        self._weights = dict.fromkeys(self.bins, 1.0 / len(self.bins))
        self._cache: dict[int, dict[str, float]] = {}

    def record(self, round_: int, per_bin: Mapping[str, tuple[int, float, float, float]]) -> None:
        """Stats of one scored round: bin -> (groups, sum of group regrets, solved, scored)."""
        if round_ <= self._folded:  # a re-scored round (e.g. regenerated after resume): refold
            self._reset()
        self.stats[round_] = {b: [float(x) for x in v] for b, v in per_bin.items() if b in self._regret}

    def weights_for_round(self, round_: int) -> dict[str, float]:
        if round_ in self._cache:
            return self._cache[round_]
        target = round_ - self.lag
        if target < self._folded:
            self._reset()
        while self._folded < target:
            self._fold(self._folded + 1)
        self._cache[round_] = dict(self._weights)
        return self._cache[round_]

    def _fold(self, r: int) -> None:
        s = self.s
        if r not in self.stats:
            self.late_rounds += 1
        for b, (groups, regret_sum, _solved, _scored) in self.stats.get(r, {}).items():
            if groups <= 0:
                continue
            mean = regret_sum / groups
            prev = self._regret[b]
            self._regret[b] = mean if prev is None else (1 - s.ema) * prev + s.ema * mean
            self._last_seen[b] = r
        prio = {}
        for b in self.bins:
            regret = s.prior_regret if self._regret[b] is None else self._regret[b]
            prio[b] = max(0.0, regret) + s.staleness * (r - self._last_seen[b])
        total, k = sum(prio.values()), len(self.bins)
        for b in self.bins:
            q = (1 - s.floor) * (prio[b] / total if total > 0 else 1.0 / k) + s.floor / k
            self._weights[b] = (1 - s.smoothing) * self._weights[b] + s.smoothing * q
        norm = sum(self._weights.values())
        self._weights = {b: w / norm for b, w in self._weights.items()}
        self._folded = r

    def state_dict(self) -> dict[str, Any]:
        return {"bins": self.bins, "lag": self.lag, "stats": {str(r): v for r, v in self.stats.items()}}

    def load_state_dict(self, data: Mapping[str, Any]) -> None:
        self.stats = {int(r): {b: list(v) for b, v in per.items()} for r, per in data.get("stats", {}).items()}
        self._reset()


def regret(solved: int, scored: int) -> float:
    """rho = 1[s >= 1] - s/n of one group: 0 when never or always solved, highest when solved rarely
    (Frontier Learning, Eq. 4); the online buffer scores its problems with it too."""
    return (1.0 if solved >= 1 else 0.0) - solved / scored


def group_regret(rewards: list[float | None]) -> tuple[float, int, int] | None:
    """(rho, solved, scored) of one prompt's group; None when no completion was scored."""
    scored = [r for r in rewards if r is not None and not math.isnan(r)]
    if not scored:
        return None
    solved = sum(1 for r in scored if r >= 0.5)
    return regret(solved, len(scored)), solved, len(scored)
