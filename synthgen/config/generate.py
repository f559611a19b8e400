"""Settings of `synthgen generate`: the multi-turn teacher/student loop of SPEC §3-4."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from synthgen.config.common import (
    EnvListMixin,
    InputSettings,
    LLMSettings,
    SandboxSettings,
    ShardedSettings,
    StudentSettings,
    TeacherSettings,
)


class ProgressionSettings(BaseModel):
    """How the student's pass rate p picks the next turn's strategy (SPEC §4).

    p <= easier_at -> ask for an easier problem; p > harder_above -> ask for a harder one aimed
    at [target_low, target_high]; otherwise a variant near the same level.
    """

    model_config = ConfigDict(extra="forbid")
    easier_at: float = Field(0.0, ge=0, le=1)
    harder_above: float = Field(0.65, ge=0, le=1)
    target_low: float = Field(0.35, ge=0, le=1)
    target_high: float = Field(0.65, ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self):
        if self.easier_at > self.harder_above:
            raise ValueError("easier_at must not exceed harder_above")
        if self.target_low > self.target_high:
            raise ValueError("target_low must not exceed target_high")
        return self


class EnvSettings(BaseModel):
    """Knobs the environments share when they render, validate and score problems."""

    model_config = ConfigDict(extra="forbid")
    # Induction: share of the k input/output pairs hidden from the student (at least one).
    holdout_fraction: float = Field(0.5, gt=0, lt=1)
    min_inputs: int = Field(3, ge=1)
    max_inputs: int = Field(10, ge=1)
    max_output_chars: int = Field(2000, ge=16)
    # Induction: distinct outputs needed so that a constant function cannot pass.
    min_distinct_outputs: int = Field(2, ge=1)


class TurnLoopSettings(BaseModel):
    """What every stage that runs teacher turns needs: roles, attempts, sandbox, progression."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    attempts: int = Field(32, ge=1)
    seed: int = 0
    teacher: TeacherSettings = Field(default_factory=TeacherSettings)
    student: StudentSettings = Field(default_factory=StudentSettings)
    max_in_flight: int = Field(256, ge=1)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    progression: ProgressionSettings = Field(default_factory=ProgressionSettings)
    env: EnvSettings = Field(default_factory=EnvSettings)
    keep_reasoning: bool = False
    max_buffer_rows: int = Field(256, ge=1)
    progress: bool = True


TURN_LOOP_UNHASHED = frozenset(
    {"run_dir", "shard", "num_shards", "max_in_flight", "max_buffer_rows", "progress", "llm"}
)


class GenerateSettings(EnvListMixin, InputSettings, TurnLoopSettings, ShardedSettings):
    section = "generate"
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | {"input_dir", "allow_partial"}

    input_dir: str | None = None  # default: <run_dir>/seeds
    turns: int = Field(6, ge=1)
    lineages_per_seed: int = Field(1, ge=1)
    # K > 0 switches to the single-turn baseline: K independent first-turn problems per seed.
    single_turn: int = Field(0, ge=0)
    max_seeds: int | None = Field(None, ge=1)
