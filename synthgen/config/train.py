"""Settings of `synthgen train`: data, model, curriculum, and the few GRPO knobs worth a flag.

Every other TRL setting goes in a recipe (`--recipe recipes/grpo-paper.yaml`, GRPOConfig field
names); values set here win over the recipe, the recipe over the paper's defaults (the paper's Section 3.4 and Appendix E).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from synthgen.config.base import cli
from synthgen.config.common import RunSettings, SandboxSettings, split_commas


class FrontierSettings(BaseModel):
    """Knobs of `--curriculum frontier` (the rule is documented in synthgen.curriculum.FrontierPolicy)."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "Frontier curriculum"
    ema: float = Field(0.3, gt=0, le=1, description="weight of the newest round in a bin's regret average")
    smoothing: float = Field(0.1, gt=0, le=1, description="share of the way weights move to the target per round")
    floor: float = Field(0.1, ge=0, le=1, description="probability spread evenly over all bins")
    staleness: float = Field(0.002, ge=0, description="priority bonus per round since a bin was last seen")
    prior_regret: float = Field(0.25, ge=0, le=1, description="regret assumed for a bin not seen yet")
    bins: list[str] | None = Field(None, description="bins the frontier rule chooses from (default: all in the data)")


class TrainSettings(RunSettings):
    section = "train"
    unhashed: ClassVar[frozenset[str]] = frozenset(
        {"run_dir", "output", "resume", "resume_from", "report_to", "logging_steps", "save_steps", "sandbox",
         "use_vllm", "vllm_mode", "vllm_server_base_url"}
    )

    data: list[str] = Field(default_factory=list, description="binned Parquet folder(s) (default RUN_DIR/bin); "
                            "repeatable")
    model: str | None = Field(None, description="model folder (or a Hub id when online)")
    curriculum: str = Field("uniform", description="uniform | classic | reverse-hard | reverse-medium | soft | hard | "
                            "medium-only | frontier | a YAML schedule file")
    output: str | None = Field(None, description="checkpoints and metrics (default RUN_DIR/train)")
    max_steps: int | None = Field(None, ge=1, description="optimizer steps (default: the recipe's, else the "
                                  "schedule's length, 40000)")
    recipe: str | None = Field(None, description="YAML of TRL GRPOConfig settings (see recipes/)")
    seed: int = Field(0, description="seeds the curriculum draws and TRL")
    num_generations: int | None = Field(None, ge=2, le=1024, description="G, completions per prompt (the paper: 8)")
    per_device_train_batch_size: int | None = Field(None, ge=1, description="completions per device per step",
                                                    json_schema_extra=cli("--per-device-batch"))
    learning_rate: float | None = Field(None, gt=0, description="learning rate (default: the recipe's)")
    max_completion_length: int | None = Field(None, ge=1, description="longest completion, in tokens")
    save_steps: int | None = Field(None, ge=1, description="save a checkpoint every N steps")
    logging_steps: int | None = Field(None, ge=1, description="log metrics every N steps")
    report_to: list[str] | None = Field(None, description="TRL reporting backends (wandb, tensorboard, ...); "
                                        "repeatable")
    use_vllm: bool | None = Field(None, description="generate with vLLM (GPU only; default: the recipe's)",
                                  json_schema_extra=cli("--use-vllm"))
    vllm_mode: Literal["colocate", "server"] | None = Field(
        None, description="colocate (the training GPUs) or server (`trl vllm-serve` on other GPUs)")
    vllm_server_base_url: str | None = Field(None, description="server mode: the vLLM server, e.g. "
                                             "http://gpu07:8000", json_schema_extra=cli("--vllm-server-url"))
    resume: bool = Field(False, description="continue from the newest checkpoint in the output folder")
    resume_from: str | None = Field(None, description="continue from this checkpoint folder")
    missing_bins: Literal["share", "error"] = Field(
        "share", description="a bin the schedule wants but the data lacks: share its weight out, or stop")
    frontier: FrontierSettings = Field(default_factory=FrontierSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)

    @field_validator("data", "report_to", mode="before")
    @classmethod
    def _split(cls, value):
        return split_commas(value)
