"""Settings of `synthgen train --online`: the teacher in the training loop, each rule from its paper.

One section per idea, each knob a field (the CLI derives `--online-<section>-<knob>`): `accept`
(SvS's band), `buffer` (Frontier Learning), `controller` (SCALER), and `worker` and `student` (how
the generation loop runs beside training, and the policy as its student). The defaults are the
papers' numbers; what each paper states and where synthgen deviates is in synthgen.online's docstring.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from synthgen.envs.settings import EnvSettings
from synthgen.llm.settings import LLMSettings, TeacherSettings
from synthgen.settings.base import Section, cli
from synthgen.settings.shared import MAX_ATTEMPTS, MAX_IN_FLIGHT, MAX_TURNS, EnvListMixin

_PROB = {"ge": 0.0, "le": 1.0}


class AcceptSettings(Section):
    """SvS's acceptance band: a candidate problem is kept only inside it (too easy leaks its answer)."""

    cli_panel: ClassVar[str] = "Online: acceptance (SvS)"
    low: float = Field(0.125, **_PROB, description="lowest policy pass rate a new problem may have (SvS: 12.5%)")
    high: float = Field(0.625, **_PROB, description="highest policy pass rate a new problem may have (SvS: 62.5%)")
    attempts: int = Field(
        8, ge=1, le=MAX_ATTEMPTS, description="policy answers per candidate problem (SvS's group size G = 8)"
    )
    max_turns: int = Field(
        3,
        ge=1,
        le=MAX_TURNS,
        description="teacher turns per request: the paper's multi-turn loop mutates a candidate that missed "
        "the band, told the policy's pass rate, until one lands in it (the paper ran 6 turns offline)",
    )

    @model_validator(mode="after")
    def _ordered(self):
        if self.low > self.high:
            raise ValueError(f"accept.low ({self.low}) must not exceed accept.high ({self.high})")
        return self


class BufferSettings(Section):
    """Frontier Learning's level buffer, with one problem per level (see synthgen.online.buffer)."""

    cli_panel: ClassVar[str] = "Online: problem buffer (Frontier Learning)"
    capacity: int = Field(100, ge=1, le=1_000_000, description="problems the buffer holds (B_max = 100)")
    window: int = Field(16, ge=1, le=10_000, description="rollout groups each problem's regret averages (n_w = 16)")
    initial_regret: float = Field(0.5, **_PROB, description="regret of a problem with no group yet (R_0 = 0.5)")
    staleness: float = Field(
        0.05, ge=0, description="priority bonus per round since a problem was last drawn (lambda_s = 0.05)"
    )
    zipf_temperature: float = Field(1.0, gt=0, description="rank-based Zipf sampling: P(rank k) ~ k^(-1/T) (T_z = 1)")
    explore: float = Field(
        0.3, **_PROB, description="chance a drawn slot asks the teacher for a fresh problem from a seed (phi = 0.3)"
    )
    informative_low: float = Field(0.05, **_PROB, description="success rate below which a problem is too hard")
    informative_high: float = Field(0.95, **_PROB, description="success rate above which a problem is too easy")
    mutate_informative: float = Field(0.4, **_PROB, description="mutation chance of a drawn informative problem")
    mutate_easy: float = Field(0.25, **_PROB, description="mutation chance of a drawn too-easy problem")
    mutate_hard: float = Field(0.02, **_PROB, description="mutation chance of a drawn too-hard problem")
    mutate_unseen: float = Field(0.0, **_PROB, description="mutation chance of a problem never drawn yet")
    retire_at: float = Field(
        0.95, **_PROB, description="a problem whose windowed success rate exceeds this is mastered and retires"
    )
    retire_min_groups: int = Field(
        4, ge=1, le=10_000, description="groups a problem's window needs before it can be called mastered"
    )
    respawn: float = Field(
        1.0, **_PROB, description="chance a retired (mastered) problem asks the teacher for a harder variant"
    )

    @model_validator(mode="after")
    def _ordered(self):
        if self.informative_low > self.informative_high:
            raise ValueError("buffer.informative_low must not exceed buffer.informative_high")
        return self


class ControllerSettings(Section):
    """SCALER's per-environment difficulty controller and environment curation (synthgen.online.controller)."""

    cli_panel: ClassVar[str] = "Online: teacher budget per environment (SCALER)"
    beta: float = Field(0.5, gt=0, description="adaptation rate beta of d <- clip(d + beta (acc - tau), 0, D)")
    tau: float = Field(0.375, **_PROB, description="target training accuracy tau (the middle of the SvS band)")
    max_level: int = Field(
        4, ge=0, le=64, description="D: the band is cut into D + 1 target slices, level 0 the easiest"
    )
    k_slope: int = Field(
        50,
        ge=2,
        le=100_000,
        description="retire an environment when d's least-squares slope over this many observed rounds is <= 0",
    )
    k_zero: int = Field(10, ge=1, le=100_000, description="retire an environment after this many rounds at accuracy 0")
    k_sat: int = Field(10, ge=1, le=100_000, description="retire an environment after this many rounds at d = D")
    readmit_after: int = Field(
        50, ge=1, le=1_000_000, description="rounds a retired environment waits before it gets teacher budget again"
    )


class PolicyStudentSettings(Section):
    """Who answers as the student of the generation loop: the policy being trained."""

    cli_panel: ClassVar[str] = "Online: the policy as student"
    backend: Literal["inprocess", "server"] = Field(
        "inprocess",
        description="inprocess: the trainer's own model generates (no server; one process only); server: an "
        "OpenAI-compatible server that serves the policy (TRL's vLLM server in --vllm-mode server, or a server "
        "of the checkpoints --online-student-sync-every writes)",
    )
    base_url: str | None = Field(
        None,
        description="the policy's server (default with --vllm-mode server: VLLM_SERVER_URL/v1)",
        json_schema_extra=cli("url"),
    )
    model: str | None = Field(None, description="model name that server serves (default: --model)")
    temperature: float = Field(1.0, gt=0, le=2, description="sampling temperature of the policy's answers")
    max_tokens: int | None = Field(
        None, ge=1, le=1_000_000, description="longest policy answer, in tokens (default: training's completion length)"
    )
    timeout_s: float = Field(600.0, gt=0, description="longest one policy request may take, seconds")
    sync_every: int | None = Field(
        None,
        ge=1,
        description="server backend: save the policy to OUTPUT/online/policy every N steps for the server to "
        "load; requests then name the synced step (off: the server holds the live policy, as TRL's vLLM server does)",
    )
    unhashed: ClassVar[frozenset[str]] = frozenset({"base_url", "timeout_s"})


class WorkerSettings(Section):
    """How the generation loop interleaves with training, and what it may spend."""

    cli_panel: ClassVar[str] = "Online: generation worker"
    mode: Literal["sync", "thread"] = Field(
        "sync",
        description="sync: the worker runs at step boundaries while training waits (deterministic, exact resume; "
        "the in-process student needs it); thread: it runs beside training and its results join at the next "
        "boundary (real runs with a slow teacher)",
    )
    refresh_every: int = Field(1, ge=1, le=1_000_000, description="steps between two worker rounds")
    budget: int = Field(
        8, ge=1, le=100_000, description="teacher requests a worker round starts at most (thread: running at once)"
    )
    max_pending: int = Field(
        256, ge=1, le=1_000_000, description="requests waiting for the teacher at most; the oldest are dropped"
    )
    seeds_dir: str | None = Field(
        None, description="seeds stage folder explorations draw snippets from (default RUN_DIR/seeds)"
    )
    initial: int | None = Field(
        None, ge=0, description="problems of --data that start the buffer (default: up to its capacity; 0: none)"
    )
    min_pool: int | None = Field(
        None,
        ge=1,
        description="problems the buffer needs before step 0; the worker fills it first (default: one round's prompts)",
    )
    warmup_rounds: int = Field(20, ge=1, le=100_000, description="worker rounds the fill before step 0 may take")
    drain_s: float = Field(
        0.0, ge=0, description="thread mode: at the end, wait this long for running requests (the rest are dropped)"
    )
    log_every: int = Field(10, ge=1, le=1_000_000, description="steps between Parquet flushes of the pool log")
    unhashed: ClassVar[frozenset[str]] = frozenset({"drain_s", "log_every"})


class OnlineSettings(EnvListMixin, Section):
    """`synthgen train --online`: a generation worker keeps the problem pool at the policy's frontier."""

    cli_panel: ClassVar[str] = "Online training"
    enabled: bool = Field(
        False,
        description="train while a teacher keeps a problem pool fresh for the policy (see the README)",
        json_schema_extra=cli("--online"),
    )
    all_when_empty: ClassVar[bool] = True
    envs: list[str] = Field(
        default_factory=list, description="environments the teacher writes new problems for (default: all)"
    )
    teacher: TeacherSettings = Field(default_factory=TeacherSettings)
    student: PolicyStudentSettings = Field(default_factory=PolicyStudentSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    max_in_flight: int = Field(64, ge=1, le=MAX_IN_FLIGHT, description="LLM requests in flight at most")
    accept: AcceptSettings = Field(default_factory=AcceptSettings)
    buffer: BufferSettings = Field(default_factory=BufferSettings)
    controller: ControllerSettings = Field(default_factory=ControllerSettings)
    worker: WorkerSettings = Field(default_factory=WorkerSettings)
    env: EnvSettings = Field(default_factory=EnvSettings)
    unhashed: ClassVar[frozenset[str]] = frozenset({"llm", "max_in_flight"})
