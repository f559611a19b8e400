"""Settings of `synthgen train`: data sources, model, curriculum, evaluation, and the GRPO knobs worth a flag.

Every other TRL setting goes in a recipe (`--recipe qwen3-8b-base` or a YAML file of GRPOConfig
field names); values set here win over the recipe, the recipe over the paper's defaults (the
paper's Section 3.4 and Appendix E).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from synthgen.evals.settings import BENCHMARKS
from synthgen.online.settings import OnlineSettings
from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import Section, cli
from synthgen.settings.shared import EnvListMixin, RunSettings, split_commas

# What training-time evaluation can add to its held-out splits: every benchmark of `synthgen eval`
# (its held-out one is training's own --eval-heldout).
TRAIN_BENCHMARKS = tuple(b for b in BENCHMARKS if b != "heldout")
# The `--help` panel of the TRL knobs that a recipe usually sets (synthgen.cli.flags).
GRPO = "GRPO (TRL; default: the recipe's)"


def grpo(description: str, flag: str | None = None, **limits):
    """A TRL knob worth a flag: unset (the recipe's value) unless given, in the GRPO `--help` panel."""
    return Field(None, description=description, json_schema_extra=cli(flag, panel=GRPO), **limits)


class FrontierSettings(Section):
    """Knobs of `--curriculum frontier` (the rule is documented in synthgen.train.frontier.FrontierPolicy)."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "Frontier curriculum"
    ema: float = Field(0.3, gt=0, le=1, description="weight of the newest round in a bin's regret average")
    smoothing: float = Field(0.1, gt=0, le=1, description="share of the way weights move to the target per round")
    floor: float = Field(0.1, ge=0, le=1, description="probability spread evenly over all bins")
    staleness: float = Field(0.002, ge=0, description="priority bonus per round since a bin was last seen")
    prior_regret: float = Field(0.25, ge=0, le=1, description="regret assumed for a bin not seen yet")
    bins: list[str] | None = Field(None, description="bins the frontier rule chooses from (default: all in the data)")


class PeriodicEvalSettings(Section):
    """Periodic evaluation on held-out problems during training (synthgen.train.evaluation)."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "Periodic evaluation"
    steps: int | None = Field(
        None,
        ge=1,
        description="evaluate the held-out sets every N optimizer steps (and at the end); off unless set",
        json_schema_extra=cli("every"),
    )
    heldout_fraction: float = Field(
        0.0, ge=0, lt=1, description="share of each bin held out of training as its evaluation split (a seeded choice)"
    )
    heldout: list[str] = Field(
        default_factory=list,
        description="folder(s) of held-out problems, one split per "
        "bin, instead of (or besides) a held-out fraction; repeatable",
    )
    max_problems: int | None = Field(
        64,
        ge=1,
        description="at most this many problems in each held-out split and in each benchmark as a whole (a seeded "
        "choice; a benchmark's splits, e.g. LCB's easy/medium/hard, are of those N; held-out problems left over "
        "stay out of training); the paper's figures on whole benchmarks: `synthgen eval --checkpoints` afterwards",
    )
    samples: int = Field(20, ge=1, description="completions per problem (the paper: 20 for pass@1 and pass@10)")
    k: list[int] = Field(default_factory=lambda: [1, 10], description="the k of pass@k; each at most the samples")
    temperature: float = Field(0.2, gt=0, description="sampling temperature (the paper evaluated at 0.2)")
    max_completion_length: int | None = Field(
        None, ge=1, description="longest completion, in tokens (default: training's)"
    )
    benchmarks: list[str] = Field(
        default_factory=list,
        description="benchmarks of `synthgen eval` added to each evaluation: lcb (its date window and "
        "v5 splits), humaneval, math500 (all, level-1..5), aime2024; repeatable",
    )
    benchmark_samples: dict[str, int] = Field(
        default_factory=dict,
        json_schema_extra=cli(as_text=True, metavar="NAME=N,..."),
        description="completions per problem of a benchmark (default: the paper's, as `synthgen eval`: lcb 20, "
        "humaneval 20, math500 10, aime2024 64), e.g. 'math500=2,aime2024=4' for a CPU run; each benchmark's "
        "pass@k are its own k (lcb 1,10; math 1,5) that fit",
    )
    benchmark_data_dir: str | None = Field(
        None, description="local copies of the benchmarks' data sets (as `synthgen eval --data-dir`)"
    )
    benchmark_url: str | None = Field(
        None,
        description="an OpenAI-compatible server holding the current weights: benchmarks are sampled "
        "there (default: in-process, by the policy itself)",
    )
    benchmark_model: str = Field("default", description="the model name that server serves")

    @field_validator("benchmarks")
    @classmethod
    def _known_benchmarks(cls, value: list[str]) -> list[str]:
        unknown = [b for b in value if b not in TRAIN_BENCHMARKS]
        if unknown:
            raise ValueError(f"unknown training benchmark {unknown[0]!r}; choose from {', '.join(TRAIN_BENCHMARKS)}")
        return list(dict.fromkeys(value))

    @field_validator("benchmark_samples", mode="before")
    @classmethod
    def _parse_samples(cls, value):
        """Accept `math500=2,aime2024=4` (the flag) as well as a mapping; names must be benchmarks."""
        if isinstance(value, str):
            out = {}
            for item in filter(None, (v.strip() for v in value.split(","))):
                name, _, n = item.partition("=")
                try:
                    out[name.strip()] = int(n)
                except ValueError:
                    raise ValueError(f"cannot read {item!r}; write NAME=N, e.g. math500=2") from None
            value = out
        for name, n in dict(value).items():
            if name not in TRAIN_BENCHMARKS or int(n) < 1:
                raise ValueError(f"{name}={n}: needs a benchmark ({', '.join(TRAIN_BENCHMARKS)}) and N >= 1")
        return value

    @field_validator("heldout", "k", "benchmarks", mode="before")
    @classmethod
    def _split(cls, value):
        return split_commas(value)

    @model_validator(mode="after")
    def _k_fits(self):
        if any(k < 1 or k > self.samples for k in self.k):
            raise ValueError(f"every k must be between 1 and samples ({self.samples}), got {self.k}")
        return self


class TrainSettings(EnvListMixin, RunSettings):
    section = "train"
    unhashed: ClassVar[frozenset[str]] = frozenset(
        [
            "run_dir",
            "output",
            "resume",
            "resume_from",
            "report_to",
            "logging_steps",
            "save_steps",
            "sandbox",
            "use_vllm",
            "vllm_mode",
            "vllm_server_base_url",
            "save_completions",
        ]
    )

    data: list[str] = Field(
        default_factory=list,
        description="training data (default RUN_DIR/bin): a binned "
        "Parquet folder, NAME=DIR:WEIGHT for a weighted source (--data real=DIR:0.55 --data "
        "synth=DIR:0.45), or a YAML file listing sources; repeatable",
    )
    curriculum_sources: list[str] = Field(
        default_factory=list,
        description="weighted sources the curriculum "
        "applies to (e.g. synth); the others are drawn uniformly over their "
        "problems (default: every source)",
    )
    per_env: int | None = Field(
        None,
        ge=1,
        description="train on N problems of each environment, a seeded sample (the paper's 4 x 5K vs 20K comparison)",
    )
    all_when_empty: ClassVar[bool] = True
    envs: list[str] = Field(
        default_factory=list, description="train only on these environments (default: all in the data)"
    )
    model: str | None = Field(None, description="model folder (or a Hub id when online)")
    curriculum: str = Field(
        "uniform",
        description="uniform (every problem equally) | uniform-bins (every bin "
        "equally) | classic | reverse-hard | reverse-medium | soft | hard | medium-only | frontier "
        "| a YAML schedule file",
    )
    output: str | None = Field(None, description="checkpoints and metrics (default RUN_DIR/train)")
    max_steps: int | None = Field(
        None, ge=1, description="optimizer steps (default: the recipe's, else the schedule's length, 40000)"
    )
    recipe: str | None = Field(
        None,
        description="TRL GRPOConfig settings: a named recipe (qwen3-8b-base, "
        "llama3.1-8b-instruct, qwen2.5-32b-base, tiny-cpu, ...) or a YAML file",
    )
    seed: int = Field(0, description="seeds the curriculum draws and TRL")
    save_completions: Literal["none", "solved", "all"] = Field(
        "none",
        description="write each round's training completions with their rewards to OUTPUT/completions/: "
        "solved (reward 1, what `synthgen seeds completions OUTPUT` reads) or all",
    )
    num_generations: int | None = grpo("G, completions per prompt (the paper: 8)", ge=2, le=1024)
    per_device_train_batch_size: int | None = grpo("completions per device per step", "--per-device-batch", ge=1)
    learning_rate: float | None = grpo("learning rate (default: the recipe's; a run without one stops)", gt=0)
    gradient_accumulation_steps: int | None = grpo("micro-batches per optimizer step", ge=1)
    steps_per_generation: int | None = grpo(
        "optimizer micro-batches each generation batch is split into; above gradient-accumulation-steps, later "
        "steps train on completions of an older policy (ratio != 1, the epsilon clip acts)",
        ge=1,
    )
    num_iterations: int | None = grpo(
        "updates per generation batch (TRL's mu); above 1 each batch is reused, the policy ratio moves off 1 and "
        "the epsilon clip acts",
        ge=1,
    )
    max_completion_length: int | None = grpo("longest completion, in tokens", ge=1)
    save_steps: int | None = grpo("save a checkpoint every N steps", ge=1)
    logging_steps: int | None = grpo("log metrics every N steps", ge=1)
    report_to: list[str] | None = grpo(
        "trackers TRL reports to (tensorboard, wandb, trackio, mlflow, none, ...; default: the recipe's, else "
        "tensorboard under OUTPUT/runs); repeatable"
    )
    use_vllm: bool | None = grpo("generate with vLLM (GPU only; default: the recipe's)", "--use-vllm")
    vllm_mode: Literal["colocate", "server"] | None = grpo(
        "colocate (the training GPUs) or server (`trl vllm-serve` on other GPUs; generation is still synchronous "
        "in TRL's GRPOTrainer, so the ratio moves only with the two settings above)"
    )
    vllm_server_base_url: str | None = grpo("server mode: the vLLM server, e.g. http://gpu07:8000", "--vllm-server-url")
    async_grpo: bool = Field(
        False,
        description="train with TRL's asynchronous GRPO (trl.experimental.async_grpo): a vLLM server "
        "(--vllm-server-url) generates while the trainer updates, rollouts up to --max-staleness updates "
        "old; a GPU and vLLM only, curriculum schedules only (not frontier)",
        json_schema_extra=cli("--async", panel=GRPO),
    )
    max_staleness: int | None = grpo(
        "with --async: drop a rollout more than N weight updates behind the policy (default: TRL's, 4)", ge=0
    )
    resume: bool = Field(False, description="continue from the newest checkpoint in the output folder")
    resume_from: str | None = Field(None, description="continue from this checkpoint folder")
    missing_bins: Literal["error", "share"] = Field(
        "error",
        description="a bin the curriculum draws from but the data lacks: stop (exit 2), or share its weight "
        "over the bins present",
    )
    frontier: FrontierSettings = Field(default_factory=FrontierSettings)
    eval: PeriodicEvalSettings = Field(default_factory=PeriodicEvalSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    online: OnlineSettings = Field(default_factory=OnlineSettings)

    @field_validator("data", "report_to", "curriculum_sources", mode="before")
    @classmethod
    def _split(cls, value):
        return split_commas(value)
