"""Settings of `synthgen chain`: hard -> medium -> easy stepping-stone chains (SPEC §7)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, model_validator

from synthgen.config.common import InputSettings, ShardedSettings
from synthgen.config.generate import TURN_LOOP_UNHASHED, TurnLoopSettings

# SPEC §6, the "chains" scheme (App. B): pass-rate bands over 32 attempts, both ends included.
CHAIN_BANDS: dict[str, tuple[float, float]] = {"hard": (0.05, 0.16), "medium": (0.41, 0.59), "easy": (0.81, 0.91)}


class ChainSettings(InputSettings, TurnLoopSettings, ShardedSettings):
    section = "chain"
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | {"input_dir", "allow_partial"}

    input_dir: str | None = Field(None, description="problems to start from (default RUN_DIR/filter)")
    bands: dict[str, tuple[float, float]] = Field(default_factory=lambda: dict(CHAIN_BANDS),
                                                  description="pass-rate band of each chain level")
    tries: int = Field(3, ge=1, le=64, description="teacher tries per step before the chain is given up")
    max_chains: int | None = Field(None, ge=1, description="hard problems to start from, at most")
    disjoint: bool = Field(False, description="also draw the paper's disjoint baseline sets")
    histogram_bins: int = Field(10, ge=2, le=1000, description="pass-rate histogram bins the disjoint sets match")

    @model_validator(mode="after")
    def _bands(self):
        for level in ("hard", "medium", "easy"):
            if level not in self.bands:
                raise ValueError(f"bands must define {level!r}")
        for level, (lo, hi) in self.bands.items():
            if not 0 <= lo <= hi <= 1:
                raise ValueError(f"band {level!r} must satisfy 0 <= low <= high <= 1, got [{lo}, {hi}]")
        return self
