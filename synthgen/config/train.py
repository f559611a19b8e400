"""Settings of `synthgen train`: data, model, curriculum, and the few GRPO knobs worth a flag.

Every other TRL setting goes in a recipe (`--recipe recipes/grpo-paper.yaml`, GRPOConfig field
names); values set here win over the recipe, the recipe over the paper's defaults (SPEC §9).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from synthgen.config.common import RunSettings, SandboxSettings


class FrontierSettings(BaseModel):
    """Knobs of `--curriculum frontier` (the rule is documented in synthgen.curriculum.FrontierPolicy)."""

    model_config = ConfigDict(extra="forbid")
    ema: float = Field(0.3, gt=0, le=1, description="weight of the newest round in a bin's regret average")
    smoothing: float = Field(0.1, gt=0, le=1, description="share of the way weights move to the target per round")
    floor: float = Field(0.1, ge=0, le=1, description="probability spread evenly over all bins")
    staleness: float = Field(0.002, ge=0, description="priority bonus per round since a bin was last seen")
    prior_regret: float = Field(0.25, ge=0, le=1, description="regret assumed for a bin not seen yet")
    bins: list[str] | None = None  # default: every bin in the data


class TrainSettings(RunSettings):
    section = "train"
    unhashed: ClassVar[frozenset[str]] = frozenset(
        {"run_dir", "output", "resume", "resume_from", "report_to", "logging_steps", "save_steps", "sandbox",
         "use_vllm", "vllm_mode", "vllm_server_base_url"}
    )

    data: list[str] = Field(default_factory=list)  # default: <run_dir>/bin
    model: str | None = None  # a local folder or a Hub id (offline machines: a folder)
    curriculum: str = "uniform"  # a paper schedule, frontier, or a YAML schedule file
    output: str | None = None  # default: <run_dir>/train
    max_steps: int | None = Field(None, ge=1)  # default: the recipe's, else the schedule's length
    recipe: str | None = None
    seed: int = 0
    num_generations: int | None = Field(None, ge=2)  # G
    per_device_train_batch_size: int | None = Field(None, ge=1)  # completions per device per step
    learning_rate: float | None = Field(None, gt=0)
    max_completion_length: int | None = Field(None, ge=1)
    save_steps: int | None = Field(None, ge=1)
    logging_steps: int | None = Field(None, ge=1)
    report_to: list[str] | None = None
    use_vllm: bool | None = None  # None: the recipe's choice (TRL's default: no vLLM)
    vllm_mode: Literal["colocate", "server"] | None = None  # None: the recipe's (TRL's default: colocate)
    vllm_server_base_url: str | None = None
    resume: bool = False  # continue from the newest checkpoint in the output folder
    resume_from: str | None = None  # or from this checkpoint folder
    # A bin the schedule wants but the data lacks: share its weight out (with a warning) or stop.
    missing_bins: Literal["share", "error"] = "share"
    frontier: FrontierSettings = Field(default_factory=FrontierSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)

    @field_validator("data", "report_to", mode="before")
    @classmethod
    def _split(cls, value):
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        return value
