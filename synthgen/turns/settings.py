"""Settings of every stage that runs teacher turns (generate, chain, calibrate): roles, attempts,
the request bound, sandbox, progression, buffering and progress."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from synthgen.envs.settings import EnvSettings, MutationSettings, ProgressionSettings
from synthgen.llm.settings import LLMSettings, StudentSettings, TeacherSettings
from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import Section
from synthgen.settings.shared import MAX_ATTEMPTS, MAX_IN_FLIGHT, ShardedSettings
from synthgen.store.attempts import KeepAttempts

# Units the turn loop keeps active per request slot by default, and the most it keeps by default:
# a unit waits on the sandbox and between turns, and the run's tail drains on the units left, so
# the slots stay full only with many more units than slots (see synthgen.turns.loop).
ACTIVE_PER_SLOT = 16
DEFAULT_MAX_ACTIVE = 4096
MAX_ACTIVE = 1 << 20


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


_HOW_IT_RUNS = {"max_in_flight", "max_active", "max_buffer_rows", "progress", "progress_every_s", "llm"}
TURN_LOOP_UNHASHED = ShardedSettings.unhashed | _HOW_IT_RUNS


class KeepAttemptsSettings(Section):
    """`keep_attempts`, for the stages that can keep every student attempt whole (generate, calibrate).

    Left out of the settings hash (`KEEP_ATTEMPTS_UNHASHED`): it decides what is kept beside the rows,
    not the problems; the attempts' own files record it (synthgen.store.attempts)."""

    keep_attempts: KeepAttempts = Field(
        "none",
        description="keep the student's attempts of valid problems whole (text, reasoning, verdict, tokens) in "
        "RUN_DIR/<stage>-attempts: none, solved (reward 1 only) or all; for `export --format sft`",
    )


KEEP_ATTEMPTS_UNHASHED = frozenset({"keep_attempts"})
