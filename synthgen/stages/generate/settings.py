"""Settings of `synthgen generate`: the multi-turn teacher/student loop (the paper's
Sections 3.2-3.3)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field, model_validator

from synthgen.envs.settings import MutationSettings
from synthgen.llm.settings import LLMSettings, StudentSettings, TeacherSettings
from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import Section
from synthgen.settings.shared import (
    MAX_ATTEMPTS,
    MAX_IN_FLIGHT,
    MAX_TURNS,
    EnvListMixin,
    InputSettings,
    ShardedSettings,
)

# Units the turn loop keeps active per request slot by default, and the most it keeps by default:
# a unit waits on the sandbox and between turns, and the run's tail drains on the units left, so
# the slots stay full only with many more units than slots (see synthgen.turns.loop).
ACTIVE_PER_SLOT = 16
DEFAULT_MAX_ACTIVE = 4096
MAX_ACTIVE = 1 << 20


class ProgressionSettings(Section):
    """How the student's pass rate p picks the next turn's strategy (paper Section 3.3; our reading
    of the cases it leaves open, see synthgen.envs.summary):

    p <= easier_at -> easier; easier_at < p < target_low -> somewhat easier, toward the target band;
    target_low <= p <= target_high -> a new variant at the same level; p > target_high -> harder.
    """

    model_config = ConfigDict(extra="forbid")
    easier_at: float = Field(
        0.0,
        ge=0,
        le=1,
        description="pass rate at or below which the teacher is asked for an easier problem (0: never solved)",
    )
    target_low: float = Field(
        0.35,
        ge=0,
        le=1,
        description="low end of the target pass-rate band; below it (and above easier_at) ask for somewhat easier",
    )
    target_high: float = Field(
        0.65,
        ge=0,
        le=1,
        description="high end of the target pass-rate band; above it ask for a harder problem",
    )

    @model_validator(mode="after")
    def _ordered(self):
        if not self.easier_at <= self.target_low <= self.target_high:
            raise ValueError("progression needs easier_at <= target_low <= target_high")
        return self


class EnvSettings(Section):
    """Knobs the environments share when they render, validate and score problems."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "Environments"
    holdout_fraction: float = Field(
        0.5, gt=0, lt=1, description="induction: share of the input/output pairs hidden from the student (at least one)"
    )
    min_inputs: int = Field(3, ge=1, le=100, description="induction: fewest inputs a problem may have")
    max_inputs: int = Field(10, ge=1, le=100, description="induction: most inputs a problem may have")
    max_output_chars: int = Field(2000, ge=16, le=1_000_000, description="longest gold output, in characters")
    min_distinct_outputs: int = Field(
        2, ge=1, le=100, description="induction: distinct outputs needed, so that a constant function cannot pass"
    )


class TurnLoopSettings(Section):
    """What every stage that runs teacher turns needs: roles, attempts, sandbox, progression."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    attempts: int = Field(32, ge=1, le=MAX_ATTEMPTS, description="student attempts M per problem (the paper: 32)")
    seed: int = Field(0, description="random seed recorded in the settings")
    teacher: TeacherSettings = Field(default_factory=TeacherSettings)
    student: StudentSettings = Field(default_factory=StudentSettings)
    max_in_flight: int = Field(256, ge=1, le=MAX_IN_FLIGHT, description="LLM requests in flight at most")
    max_active: int | None = Field(
        None,
        ge=1,
        le=MAX_ACTIVE,
        description=f"units (lineages, chains) worked on at once (default: {ACTIVE_PER_SLOT} x max-in-flight up to "
        f"{DEFAULT_MAX_ACTIVE}, at least 2 x); they cost memory (tens of KB each), not server slots: many more "
        "than the request bound keep the server's queue full while some wait on the sandbox or between turns",
    )
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    progression: ProgressionSettings = Field(default_factory=ProgressionSettings)
    env: EnvSettings = Field(default_factory=EnvSettings)
    mutation: MutationSettings = Field(default_factory=MutationSettings)
    keep_reasoning: bool = Field(False, description="store the teacher's reasoning text in the rows (large)")
    max_buffer_rows: int = Field(256, ge=1, le=1_000_000, description="rows held in memory before a part is written")
    progress: bool = Field(True, description="show live progress")
    progress_every_s: float = Field(
        60.0,
        gt=0,
        le=86_400,
        description="without a terminal (a Slurm log, a pipe), print a plain progress line this often, seconds",
    )

    def active_bound(self) -> int:
        """How many units the turn loop keeps going at once (`max_active`, or its default)."""
        slots = self.max_in_flight
        return self.max_active or max(2 * slots, min(DEFAULT_MAX_ACTIVE, ACTIVE_PER_SLOT * slots))


TURN_LOOP_UNHASHED = frozenset(
    {
        "run_dir",
        "shard",
        "num_shards",
        "max_in_flight",
        "max_active",
        "max_buffer_rows",
        "progress",
        "progress_every_s",
        "llm",
    }
)


class GenerateSettings(EnvListMixin, InputSettings, TurnLoopSettings, ShardedSettings):
    section = "generate"
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | {"input_dir", "allow_partial"}

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
