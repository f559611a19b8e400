"""Settings of `synthgen plan` (a run's cost before it starts) and the GPU throughput `stats` shares.

The cost model is deliberately simple: a request costs its prompt tokens at the prefill rate and
its completion tokens at the role's decode rate, per GPU; GPU time is spread over `gpus` GPUs
kept full (which the turn loop does: see synthgen.turns.loop). The defaults are rough
figures for gpt-oss-120b under vLLM on one H100-class GPU; measure yours and set them.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field

from synthgen.settings.base import Section, Settings, cli


class ThroughputSettings(Section):
    """What a GPU does per second: turns token counts into GPU-hours and wall time."""

    gpus: int = Field(8, ge=1, le=1_000_000, description="GPUs serving the teacher and the student together")
    teacher_tokens_per_s: float = Field(
        2500.0, gt=0, description="teacher completion tokens generated per second per GPU (batched, reasoning included)"
    )
    student_tokens_per_s: float = Field(
        2500.0, gt=0, description="student completion tokens generated per second per GPU (batched)"
    )
    prompt_tokens_per_s: float = Field(20000.0, gt=0, description="prompt tokens prefilled per second per GPU")


class RequestFigures(Section):
    """Per-request figures used when no earlier run is given (`--from-run` measures them instead)."""

    teacher_prompt_tokens: float = Field(1500.0, ge=0, description="prompt tokens of one teacher request")
    teacher_completion_tokens: float = Field(
        6000.0, ge=0, description="completion tokens of one teacher answer (high reasoning)"
    )
    student_prompt_tokens: float = Field(800.0, ge=0, description="prompt tokens of one student request")
    student_completion_tokens: float = Field(
        1500.0, ge=0, description="completion tokens of one student attempt (low reasoning)"
    )
    valid_share: float = Field(0.7, ge=0, le=1, description="share of teacher turns valid, so evaluated by the student")
    kept_share: float = Field(0.35, ge=0, le=1, description="share of teacher turns that filter keeps")
    validation_jobs: float = Field(2.0, ge=0, description="sandbox jobs to validate one teacher problem")


class PlanSettings(ThroughputSettings, RequestFigures, Settings):
    section: ClassVar[str] = "plan"

    config: Path | None = Field(
        None,
        description="the run's config file (its seeds and generate sections); default: the one given with --config",
        json_schema_extra=cli(argument=True, metavar="CONFIG"),
    )
    from_run: Path | None = Field(
        None,
        description="an earlier run directory: its generate rows (and filter output) give the per-request figures",
        json_schema_extra=cli(metavar="RUN_DIR"),
    )
    as_json: bool = Field(
        False, description="print the estimate as JSON (for scripts)", json_schema_extra=cli("--json")
    )
