"""Settings of `synthgen slurm`: where and how the pipeline's jobs run on a Slurm cluster.

Everything cluster-specific lives here and in the user's config file (section `slurm`; the README
has an example), never in the templates. With `vllm.shared_url` set, jobs that talk to a model
use that server instead of starting their own.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import AfterValidator, ConfigDict, Field, field_validator

from synthgen.settings.base import Section, Settings, cli
from synthgen.settings.shared import RunSettings

_TIME_HELP = "Slurm time limit: MM, HH:MM:SS or D-HH:MM:SS"

# How long a job waits for a server it started: loading a 120B model can take many minutes.
READY_TIMEOUT_S = 1800.0


def _check_options(options: list[str]) -> list[str]:
    options = [option.strip() for option in options]
    for option in options:
        if not option.startswith("-") or "\n" in option:
            raise ValueError(f"an sbatch option starts with '-' and is one line, not {option!r}")
    return options


SbatchOptions = Annotated[list[str], AfterValidator(_check_options)]


class JobResources(Section):
    """What one kind of job asks Slurm for; None leaves the cluster's default."""

    model_config = ConfigDict(extra="forbid")
    time: str | None = Field(None, description=_TIME_HELP)
    nodes: int = Field(1, ge=1, description="nodes the job asks for")
    gpus_per_node: int | None = Field(None, ge=0, description="GPUs per node")
    cpus_per_task: int | None = Field(None, ge=1, description="CPUs per task")
    mem: str | None = Field(None, description="memory per node, e.g. 64G; '0' asks for all of it")
    partition: str | None = Field(None, description="overrides slurm.partition for this kind of job")
    extra_sbatch: SbatchOptions = Field(default_factory=list, description="more #SBATCH options, e.g. --exclusive")


class VLLMServerSettings(Section):
    """The vLLM server each generate task starts on its node (unless `shared_url` is set)."""

    model_config = ConfigDict(extra="forbid")
    cli_panel: ClassVar[str] = "vLLM server"
    command: str = Field("vllm", description="split like a shell would; may hold a container wrapper")
    model: str = Field("openai/gpt-oss-120b", description="model the server serves")
    tensor_parallel_size: int = Field(1, ge=1, description="GPUs one server spans")
    port: int = Field(8000, ge=1, le=65535, description="base port; task i uses port + i % 100")
    reasoning_parser: str | None = Field("openai_gptoss", description="vLLM --reasoning-parser")
    extra_args: list[str] = Field(default_factory=list, description="more `vllm serve` arguments")
    shared_url: str | None = Field(
        None,
        description="a running OpenAI-compatible server (e.g. one big vLLM "
        "deployment) that every job shares instead of starting its own",
    )
    start_server: bool = Field(
        True,
        description="start a server in each job that talks to a model; false (and "
        "no shared_url): jobs use the config's teacher/student URLs",
    )
    ready_timeout_s: float = Field(READY_TIMEOUT_S, gt=0, description="how long a task waits for its server")


class GenerateJobSettings(JobResources):
    """One generate array task. gpus_per_node None: vllm.tensor_parallel_size with a per-task
    server, none with a shared one."""

    cli_panel: ClassVar[str] = "Generate job"

    time: str | None = Field("24:00:00", description=_TIME_HELP)
    cpus_per_task: int | None = Field(8, ge=1, description="CPUs per task (the sandbox uses them)")


class CurateJobSettings(JobResources):
    """filter, bin and chain: CPU jobs (the sandbox and MinHash use the CPUs)."""

    cli_panel: ClassVar[str] = "Curate job"

    time: str | None = Field("12:00:00", description=_TIME_HELP)
    cpus_per_task: int | None = Field(8, ge=1, description="CPUs per task (the sandbox uses them)")


class CalibrateJobSettings(JobResources):
    """One `synthgen slurm calibrate` array task: the student being calibrated answers, the sandbox
    scores. gpus_per_node None: vllm.tensor_parallel_size with a per-task server, none with a shared one."""

    cli_panel: ClassVar[str] = "Calibrate job"

    time: str | None = Field("12:00:00", description=_TIME_HELP)
    cpus_per_task: int | None = Field(8, ge=1, description="CPUs per task (the sandbox uses them)")
    num_shards: int | None = Field(None, ge=1, description="calibrate array size (default: calibrate.num_shards)")
    array_parallelism: int | None = Field(None, ge=1, description="at most W calibrate tasks at once (--array=...%W)")
    model: str | None = Field(
        None,
        description="the student a task's own vLLM server serves and calibrate asks (default: "
        "calibrate.student.model of the config); the vllm.* settings say how it is served",
    )
    reasoning_parser: str | None = Field(
        None, description="vLLM --reasoning-parser of that server (none: a base model has no reasoning channel)"
    )


class TrainJobSettings(JobResources):
    """The training job: one node serves generations with `trl vllm-serve`, the rest train."""

    cli_panel: ClassVar[str] = "Train job"

    time: str | None = Field("48:00:00", description=_TIME_HELP)
    nodes: int = Field(2, ge=1, description="nodes in all, the vLLM node included")
    gpus_per_node: int | None = Field(8, ge=0, description="GPUs per node; also processes per training node")
    use_vllm_server: bool = Field(True, description="reserve the last node for `trl vllm-serve`")
    trl_command: str = Field("trl", description="the trl executable (path or name)")
    accelerate_command: str = Field("accelerate", description="one executable (path or name)")
    accelerate_config: str | None = Field(None, description="accelerate/DeepSpeed config file")
    main_process_port: int = Field(29500, ge=1, le=65535, description="accelerate's main process port")
    vllm_port: int = Field(8000, ge=1, le=65535, description="port of `trl vllm-serve`")
    vllm_tensor_parallel_size: int = Field(1, ge=1, description="`trl vllm-serve` tensor parallel size")
    vllm_data_parallel_size: int = Field(1, ge=1, description="`trl vllm-serve` data parallel size")
    vllm_extra_args: list[str] = Field(default_factory=list, description="more `trl vllm-serve` arguments")
    # How `synthgen train` learns where the server is; {host} and {port} are filled in at run time.
    vllm_train_args: list[str] = Field(
        description="flags that tell `synthgen train` where the server is ({host}, {port} filled in)",
        default_factory=lambda: ["--use-vllm", "--vllm-mode", "server", "--vllm-server-url", "http://{host}:{port}"],
    )
    ready_timeout_s: float = Field(READY_TIMEOUT_S, gt=0, description="how long training waits for its vLLM server")


class SlurmSettings(RunSettings):
    section = "slurm"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir"})

    partition: str | None = Field(None, description="Slurm partition")
    account: str | None = Field(None, description="Slurm account")
    qos: str | None = Field(None, description="Slurm QOS")
    job_name: str = Field("synthgen", description="prefix of every job's name: <job_name>-<stage>")
    setup: list[str] = Field(
        default_factory=list,
        description="shell lines run first in every job: module loads, venv or conda activation, exports; repeatable",
    )
    # The synthgen command the jobs call, split like a shell would (so a container wrapper works:
    # "apptainer exec --nv synthgen.sif synthgen"). None: the synthgen beside this Python (an
    # absolute path into its venv), else `synthgen` from PATH after the setup lines.
    executable: str | None = Field(
        None, description="the synthgen command the jobs call (default: the one beside this Python)"
    )
    log_dir: str | None = Field(None, description="default: <run_dir>/slurm/logs")
    num_shards: int | None = Field(None, ge=1, description="generate array size (default: generate.num_shards)")
    array_parallelism: int | None = Field(
        None,
        ge=1,
        description="at most W generate tasks at once (--array=...%W)",
        json_schema_extra=cli("--parallelism"),
    )
    requeue: bool = Field(True, description="requeue a generate or calibrate task that reaches its time limit")
    signal_grace_s: int = Field(
        120,
        ge=1,
        description="seconds before the time limit at which a generate or calibrate task is told to flush and requeue "
        "itself",
    )
    extra_sbatch: SbatchOptions = Field(default_factory=list, description="#SBATCH options for every job")
    generate: GenerateJobSettings = Field(default_factory=GenerateJobSettings)
    curate: CurateJobSettings = Field(default_factory=CurateJobSettings)
    train: TrainJobSettings = Field(default_factory=TrainJobSettings)
    calibrate: CalibrateJobSettings = Field(default_factory=CalibrateJobSettings)
    vllm: VLLMServerSettings = Field(default_factory=VLLMServerSettings)

    @field_validator("setup")
    @classmethod
    def _lines(cls, value: list[str]) -> list[str]:
        for line in value:
            if "\n" in line:
                raise ValueError("each setup entry is one shell line; use a list for several")
        return value

    def synthgen_executable(self) -> str:
        """The synthgen command the scripts call (an absolute path when we can find one)."""
        if self.executable:
            return self.executable
        beside = Path(sys.executable).parent / "synthgen"
        if beside.is_file():
            return str(beside.absolute())
        found = shutil.which("synthgen")
        return str(Path(found).absolute()) if found else "synthgen"


class WaitReadySettings(Settings):
    """`synthgen slurm wait-ready URL...`, which the job scripts run until their servers answer."""

    urls: list[str] = Field(
        json_schema_extra=cli(argument=True, metavar="URL..."),
        description="server URLs: .../v1 is probed at /v1/models, others as given",
    )
    timeout_s: float = Field(
        READY_TIMEOUT_S,
        ge=0,
        json_schema_extra=cli("--timeout"),
        description="give up after this many seconds (exit 1)",
    )
    interval_s: float = Field(2.0, ge=0.05, json_schema_extra=cli("--interval"), description="seconds between polls")
    pid: int | None = Field(None, description="stop waiting (exit 1) when this server process has exited")
    api_key: str | None = Field(
        None, json_schema_extra=cli(envvar="OPENAI_API_KEY"), description="bearer token, if the server wants one"
    )
