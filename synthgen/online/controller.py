"""SCALER's difficulty controller and environment curation, steering where the teacher's budget goes.

SCALER (synthetic scalable adaptive learning environments), as this module implements it per
synthgen environment (induction, abduction, deduction, fuzzing):

* d(0) = 0 and, after each training round in which the environment had scored rollouts,
  d <- clip(d + beta (acc - tau), 0, D), acc = the policy's accuracy on that environment's
  rollouts of the round;
* a real d is realised on k requests as h = round(k (d - floor d)) at level floor(d) + 1 and k - h
  at floor(d) (`levels`);
* an active environment is retired when the least-squares slope of d over its last K_slope
  observed rounds is <= 0, when acc = 0 for K_zero observed rounds in a row, or d = D for K_sat
  rounds in a row; a retired environment is re-admitted after `readmit_after` rounds.

How synthgen reads it (SCALER's levels are instance sizes of a program-generated environment; a
synthgen problem has no size knob): level l is a slice of the acceptance band, level 0 the easiest
(highest pass rate), D the hardest. The teacher is asked to aim a new problem at its level's slice
(the paper's progression strategy is chosen against that slice), and a retired environment gets
no new teacher requests until it is re-admitted. Its problems already in the buffer keep training:
the buffer's own priorities decide those (SCALER would stop sampling it; here sampling belongs to
the Frontier buffer). The last active environment is never retired (SCALER replaces a retired
environment from a large pool; synthgen has four).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


def slope(values: list[float]) -> float:
    """Least-squares slope of values against 0..n-1 (SCALER's closed form)."""
    n = len(values)
    mean_i, mean_d = (n - 1) / 2, sum(values) / n
    den = sum((i - mean_i) ** 2 for i in range(n))
    return sum((i - mean_i) * (d - mean_d) for i, d in enumerate(values)) / den if den else 0.0


@dataclass
class EnvState:
    d: float = 0.0
    active: bool = True
    history: list[float] = field(default_factory=list)  # d after each observed round while active
    zero_run: int = 0  # observed rounds in a row at accuracy 0
    sat_run: int = 0  # observed rounds in a row at d = D
    retired_round: int | None = None
    last_acc: float | None = None


class Curation:
    """Per-environment controllers and the active set; `settings` is a ControllerSettings."""

    def __init__(self, envs: list[str], settings):
        if not envs:
            raise ValueError("the controller needs at least one environment")
        self.s = settings
        self.envs: dict[str, EnvState] = {e: EnvState() for e in envs}

    def active_envs(self) -> list[str]:
        return [e for e, st in self.envs.items() if st.active]

    def observe(self, round_: int, per_env: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
        """One scored round: env -> (solved, scored). Returns the controller rows (one per env seen,
        plus retire / readmit events) for the log."""
        s, out = self.s, []
        for env, st in self.envs.items():
            if not st.active and st.retired_round is not None and round_ - st.retired_round >= s.readmit_after:
                st.active, st.retired_round = True, None
                st.history, st.zero_run, st.sat_run = [], 0, 0
                out.append(self._row(round_, env, "readmit", f"retired for {s.readmit_after} rounds"))
        for env in sorted(per_env):
            st = self.envs.get(env)
            solved, scored = per_env[env]
            if st is None or scored <= 0:
                continue
            acc = solved / scored
            st.last_acc = acc
            st.d = min(float(s.max_level), max(0.0, st.d + s.beta * (acc - s.tau)))
            out.append(self._row(round_, env, None, None, acc=acc, scored=scored))
            if not st.active:
                continue
            st.history = (st.history + [st.d])[-s.k_slope :]
            st.zero_run = st.zero_run + 1 if acc == 0 else 0
            st.sat_run = st.sat_run + 1 if st.d >= s.max_level else 0
            why = self._retire_reason(st)
            if why is None:
                continue
            if len(self.active_envs()) <= 1:
                out.append(self._row(round_, env, "kept", f"{why}, but it is the last active environment"))
                st.history, st.zero_run, st.sat_run = [], 0, 0
                continue
            st.active, st.retired_round = False, round_
            out.append(self._row(round_, env, "retire", why))
        return out

    def _retire_reason(self, st: EnvState) -> str | None:
        s = self.s
        if st.zero_run >= s.k_zero:
            return f"accuracy 0 for {st.zero_run} rounds"
        if st.sat_run >= s.k_sat:
            return f"d = D for {st.sat_run} rounds"
        if len(st.history) >= s.k_slope and slope(st.history) <= 0:
            return f"d's slope over {s.k_slope} rounds is <= 0"
        return None

    def levels(self, env: str, k: int) -> list[int]:
        """SCALER's realisation of the real d on k requests: h at floor(d) + 1, k - h at floor(d)."""
        d = self.envs[env].d
        low = math.floor(d)
        h = math.floor(k * (d - low) + 0.5)
        top = min(low + 1, self.s.max_level)
        return [top] * h + [low] * (k - h)

    def band(self, level: int, accept_low: float, accept_high: float) -> tuple[float, float]:
        """The pass-rate slice of the acceptance band a level aims at (level 0 the easiest)."""
        width = (accept_high - accept_low) / (self.s.max_level + 1)
        high = accept_high - level * width
        return (round(high - width, 6), round(high, 6))

    def _row(self, round_, env, event, reason, acc=None, scored=None) -> dict[str, Any]:
        st = self.envs[env]
        return {
            "round": round_,
            "env": env,
            "accuracy": acc,
            "scored": scored,
            "d": st.d,
            "active": st.active,
            "event": event,
            "reason": reason,
        }

    def state_dict(self) -> dict[str, Any]:
        return {env: vars(st).copy() for env, st in self.envs.items()}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        for env, values in data.items():
            if env in self.envs:
                self.envs[env] = EnvState(**values)
