"""SCALER's difficulty controller and environment curation, steering where the teacher's budget goes.

The controller's update, its realisation of a real d on k requests (`levels`) and its retirement
rules follow SCALER, per synthgen environment; the numbers and where synthgen departs from the
paper are in synthgen.online's docstring. A synthgen problem has no size knob, so level l is a
slice of the acceptance band (level 0 the easiest, D the hardest) that the teacher aims at. A
retired environment gets no new teacher requests until re-admitted, but its problems in the buffer
keep training (sampling belongs to the Frontier buffer); the last active environment never retires.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import linear_regression
from typing import Any


@dataclass
class EnvState:
    d: float = 0.0
    active: bool = True
    history: list[float] = field(default_factory=list)  # d after each observed round while active
    zero_run: int = 0  # observed rounds in a row at accuracy 0
    sat_run: int = 0  # observed rounds in a row at d = D
    retired_round: int | None = None


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
        # (SCALER's closed form is the least-squares slope of d against 0..n-1; k_slope >= 2)
        if len(st.history) >= s.k_slope and linear_regression(range(len(st.history)), st.history).slope <= 0:
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
        return dict(
            round=round_, env=env, accuracy=acc, scored=scored, d=st.d, active=st.active, event=event, reason=reason
        )

    def state_dict(self) -> dict[str, Any]:
        return {env: vars(st).copy() for env, st in self.envs.items()}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        for env, values in data.items():
            if env in self.envs:
                self.envs[env] = EnvState(**{k: v for k, v in values.items() if k != "last_acc"})  # older files hold it
