"""Settings of `synthgen generate`: the multi-turn teacher/student loop (the paper's
Sections 3.2-3.3)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from synthgen.settings.shared import MAX_ATTEMPTS, MAX_TURNS, EnvListMixin, InputSettings, ShardedSettings
from synthgen.turns.settings import KEEP_ATTEMPTS_UNHASHED, TURN_LOOP_UNHASHED, KeepAttemptsSettings, TurnLoopSettings


class GenerateSettings(EnvListMixin, InputSettings, KeepAttemptsSettings, TurnLoopSettings, ShardedSettings):
    section = "generate"
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | KEEP_ATTEMPTS_UNHASHED | {"input_dir", "allow_partial"}

    input_dir: str | None = Field(None, description="seeds stage folder (default RUN_DIR/seeds)")
    turns: int = Field(6, ge=1, le=MAX_TURNS, description="teacher turns per lineage (the paper: 6)")
    lineages_per_seed: int = Field(1, ge=1, le=64, description="lineages per seed, spread over the environments")
    single_turn: int = Field(
        0,
        ge=0,
        le=MAX_ATTEMPTS,
        description="K > 0: the single-turn baseline, K independent first-turn problems per seed",
    )
    max_seeds: int | None = Field(None, ge=1, description="use at most this many seeds")
