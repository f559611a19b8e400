"""Render the pipeline's sbatch scripts from settings: pure functions, no Slurm needed.

Each script holds plain shell: `#SBATCH` lines, the config's setup lines, and a readable
`synthgen --config <copy of the config> STAGE --run-dir RUN` command; values from the config are
shell-quoted. Which shards still need a job comes from the completion markers (`StageDir.pending`),
in the spirit of datatrove's skip of completed ranks, except that the array lists the indices
explicitly so that task id == shard index and nothing maps one to the other at run time.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.slurm.settings import JobResources, SlurmSettings
from synthgen.store.layout import StageDir
from synthgen.text import jinja_env

STAGE_GENERATE = "generate"
CURATE_STEPS = ("filter", "bin", "chain")
# The curation steps that talk to a model (the teacher writes easier variants, the student tries them).
STEPS_WITH_MODEL = frozenset({"chain"})


@dataclass(frozen=True)
class ResourceRequest:
    """What a job asks of each of its nodes (for the capacity check)."""

    partition: str | None
    nodes: int
    cpus: int
    gpus: int


@dataclass
class SbatchJob:
    """One rendered sbatch script, where it is written, and what it must wait for."""

    stage: str
    script: str
    path: Path
    after: str | None = None  # stage whose job must succeed first (afterok)
    after_job: str | None = None  # or a job id submitted earlier (e.g. `curate --after ID`)
    array: str | None = None
    shards: list[int] = field(default_factory=list)
    request: ResourceRequest | None = None


@dataclass
class RenderContext:
    """Absolute paths the scripts use; every job of one submission shares it."""

    run_dir: Path
    slurm_dir: Path
    log_dir: Path
    workdir: Path
    config: Path  # the copy of the config inside slurm_dir that the jobs read
    config_text: str
    synthgen: str
    setup: list[str]

    @classmethod
    def build(cls, settings: SlurmSettings, config_path: Path | None, workdir: Path | None = None) -> RenderContext:
        workdir = Path(workdir or os.getcwd()).absolute()
        run_dir = _absolute(settings.run_dir, workdir)
        slurm_dir = run_dir / "slurm"
        log_dir = _absolute(Path(settings.log_dir), workdir) if settings.log_dir else slurm_dir / "logs"
        if config_path is not None:
            text = Path(config_path).read_text(encoding="utf-8")
            suffix = ".toml" if Path(config_path).suffix.lower() == ".toml" else ".yaml"
        else:
            text, suffix = "# no --config was given: every stage uses its defaults and flags\n", ".yaml"
        # Named by content: a job queued with one config keeps reading that one after a re-submit.
        digest = hashlib.sha256(text.encode()).hexdigest()[:10]
        config = slurm_dir / f"config-{digest}{suffix}"
        return cls(run_dir, slurm_dir, log_dir, workdir, config, text, settings.synthgen_executable(), settings.setup)


def _absolute(path: Path, base: Path) -> Path:
    path = Path(path).expanduser()
    return path if path.is_absolute() else (base / path)


def array_spec(indices: list[int], parallelism: int | None = None) -> str:
    """`--array` value listing `indices` (runs compressed: 0-3,5,7-8), with `%W` when given."""
    if not indices:
        raise ValueError("an array needs at least one index")
    parts = []
    for _, group in itertools.groupby(enumerate(sorted(set(indices))), lambda pair: pair[1] - pair[0]):
        run = [i for _, i in group]
        parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    spec = ",".join(parts)
    return f"{spec}%{parallelism}" if parallelism else spec


def group_args(words: list[str]) -> list[str]:
    """Shell words grouped one option per line: `--flag value` together, a lone word alone."""
    lines: list[str] = []
    for word in words:
        bare = word.strip("'\"")
        if lines and not bare.startswith("-") and lines[-1].lstrip("'\"").startswith("-") and " " not in lines[-1]:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _render(template: str, settings: SlurmSettings, ctx: RenderContext, stage: str, /, **values: Any) -> str:
    """A template rendered with the values every script shares (paths, job name, requeue)."""
    env = jinja_env(Path(__file__).parent / "templates")
    env.filters["q"] = lambda value: shlex.quote(str(value))
    env.filters["cmd"] = lambda value: " ".join(shlex.quote(w) for w in shlex.split(str(value)))
    shared = {"ctx": ctx, "log_dir": ctx.log_dir, "job_name": f"{settings.job_name}-{stage}"}
    shared |= {"requeue": settings.requeue, "signal_grace_s": settings.signal_grace_s}
    text = env.get_template(template).render(**shared, **values)
    return re.sub(r"\n{3,}", "\n\n", text)


def sbatch_options(settings: SlurmSettings, res: JobResources, ctx: RenderContext, gpus: int | None) -> list[str]:
    """The `#SBATCH` options a job of this kind gets from the settings (cluster, resources)."""
    given = {"partition": res.partition or settings.partition, "account": settings.account, "qos": settings.qos}
    given |= {"time": res.time, "gpus-per-node": gpus, "cpus-per-task": res.cpus_per_task, "mem": res.mem}
    lines = [f"--{name}={value}" for name, value in given.items() if value]
    lines += [f"--chdir={ctx.workdir}", *settings.extra_sbatch, *res.extra_sbatch]
    for line in lines:
        if "\n" in line or any(ch.isspace() for ch in line.split("=", 1)[0]):
            raise UserError(f"sbatch option {line!r} is not one option on one line")
    return lines


def server_mode(settings: SlurmSettings, config_urls: list[str] | None) -> tuple[str, str | None]:
    """How a job that talks to a model reaches one, in this order: `vllm.shared_url` (or `--base-url`):
    ("shared", url); `vllm.start_server`, `vllm serve` on the job's node: ("own", None); else the
    config's URLs: ("config", None)."""
    vllm = settings.vllm
    if vllm.shared_url:
        return "shared", vllm.shared_url
    if vllm.start_server:
        return "own", None
    if not config_urls:
        raise UserError(
            "no server for the jobs that talk to a model: set slurm.vllm.shared_url, pass --base-url, "
            "or set slurm.vllm.start_server"
        )
    return "config", None


def _server_values(settings: SlurmSettings, config_urls: list[str] | None, talks_to_model: bool = True) -> dict:
    server, shared = server_mode(settings, config_urls) if talks_to_model else (None, None)
    return {
        "server": server,
        "vllm": settings.vllm,
        "vllm_extra": group_args([shlex.quote(a) for a in settings.vllm.extra_args]) if talks_to_model else [],
        "base_url": shared,
        "config_urls": (config_urls or []) if talks_to_model else [],
    }


def _gpus(res: JobResources, settings: SlurmSettings, server: str | None) -> int | None:
    """A job's GPUs: as configured, else what its own vLLM server spans, else none."""
    if res.gpus_per_node is not None:
        return res.gpus_per_node
    return settings.vllm.tensor_parallel_size if server == "own" else None


def _job(settings, ctx, stage, template, res: JobResources, gpus: int | None, values: dict, **job) -> SbatchJob:
    """Render `template` for `stage` with the `#SBATCH` options of `res`; the job asks each node for them."""
    script = _render(template, settings, ctx, stage, sbatch=sbatch_options(settings, res, ctx, gpus), **values)
    request = ResourceRequest(res.partition or settings.partition, res.nodes, res.cpus_per_task or 1, gpus or 0)
    return SbatchJob(stage, script, ctx.slurm_dir / f"{stage}.sbatch", request=request, **job)


def _array_job(settings, ctx, stage, res, parallelism, pending, num_shards, server: dict, **values) -> SbatchJob:
    """A sharded stage as an array over its `pending` shards of `num_shards` (task id == shard index)."""
    array = array_spec(pending, parallelism)
    values |= {"array": array, "pending": pending, "num_shards": num_shards, "marker_printf": StageDir.marker_printf()}
    gpus = _gpus(res, settings, server["server"])
    return _job(settings, ctx, stage, f"{stage}.sbatch.j2", res, gpus, values | server, array=array, shards=pending)


def render_generate(
    settings: SlurmSettings,
    ctx: RenderContext,
    num_shards: int,
    pending: list[int],
    config_urls: list[str] | None = None,
) -> SbatchJob:
    """The generate array over `pending` shards of `num_shards` (server: see `server_mode`)."""
    server = _server_values(settings, config_urls)
    res, parallelism = settings.generate, settings.array_parallelism
    return _array_job(settings, ctx, STAGE_GENERATE, res, parallelism, list(pending), num_shards, server)


def render_calibrate(
    settings: SlurmSettings,
    ctx: RenderContext,
    input_dir: Path,
    num_shards: int,
    pending: list[int],
    model: str,
    config_urls: list[str] | None = None,
) -> SbatchJob:
    """The calibrate array over `pending` shards of `num_shards`; a per-task server serves `model`."""
    res = settings.calibrate
    # The task's own server serves the student being calibrated, not generate's teacher.
    vllm = settings.vllm.model_copy(update={"model": model, "reasoning_parser": res.reasoning_parser})
    server = _server_values(settings, config_urls) | {"vllm": vllm}
    parallelism = res.array_parallelism
    return _array_job(
        settings, ctx, "calibrate", res, parallelism, list(pending), num_shards, server, input_dir=input_dir
    )


def render_curate(
    settings: SlurmSettings, ctx: RenderContext, after_generate: bool, config_urls: list[str] | None = None
) -> list[SbatchJob]:
    """filter -> bin -> chain, each waiting (afterok) for the one before; chain gets a server."""
    jobs: list[SbatchJob] = []
    previous = STAGE_GENERATE if after_generate else None
    for stage in CURATE_STEPS:
        server = _server_values(settings, config_urls, talks_to_model=stage in STEPS_WITH_MODEL)
        gpus = _gpus(settings.curate, settings, server["server"])
        values = {"stage": stage, "steps": CURATE_STEPS, **server}
        jobs.append(_job(settings, ctx, stage, "curate.sbatch.j2", settings.curate, gpus, values, after=previous))
        previous = stage
    return jobs


def render_train(
    settings: SlurmSettings,
    ctx: RenderContext,
    train_flags: dict[str, str],
    model: str | None,
    after: str | None,
) -> SbatchJob:
    """The training job. `train_flags` maps `synthgen train` flags (`--data`, ...) to values."""
    train = settings.train
    if train.use_vllm_server and train.nodes < 2:
        raise UserError(
            "slurm.train.nodes must be at least 2 with use_vllm_server (one node serves "
            "generations, the rest train); set slurm.train.use_vllm_server: false for one node"
        )
    if train.use_vllm_server and not model:
        raise UserError("the vLLM node needs the model to serve: pass --model or set train.model in the config")
    words = [shlex.quote(str(word)) for pair in train_flags.items() for word in pair]
    if train.use_vllm_server:
        words.extend(_with_placeholders(a, {"host": "VLLM_HOST", "port": "VLLM_PORT"}) for a in train.vllm_train_args)
    values = {
        "nodes": train.nodes,
        "use_vllm_server": train.use_vllm_server,
        "procs_per_node": train.gpus_per_node or 1,
        "train": train,
        "model": model or "",
        "train_args": group_args(words),
        "vllm_extra": group_args([shlex.quote(a) for a in train.vllm_extra_args]),
    }
    return _job(settings, ctx, "train", "train.sbatch.j2", train, train.gpus_per_node, values, after=after)


def _with_placeholders(arg: str, variables: dict[str, str]) -> str:
    """`arg` as one shell word, with `{name}` replaced by the shell variable `variables[name]`."""
    out = []
    for piece in re.split(r"(\{[a-z_]+\})", arg):
        name = piece[1:-1] if piece.startswith("{") and piece.endswith("}") else None
        if name in variables:
            out.append(f'"${{{variables[name]}}}"')
        elif piece:
            out.append(shlex.quote(piece))
    return "".join(out) or "''"


def submit_script(jobs: list[SbatchJob]) -> str:
    """A plain shell script that submits `jobs` in order, chaining them the same way we do."""
    lines = [
        "#!/bin/bash",
        "# Submits the jobs below in order, each waiting (afterok) for the one it depends on.",
        "# Written by `synthgen slurm`; it is what `synthgen slurm` runs without --dry-run.",
        "set -euo pipefail",
        'cd "$(dirname "$0")"',
    ]
    for job in jobs:
        var = job.stage.upper() + "_JOB"
        dep = ""
        if job.after and any(j.stage == job.after for j in jobs):
            dep = f' --dependency="afterok:${job.after.upper()}_JOB"'
        elif job.after_job:
            dep = f" --dependency=afterok:{shlex.quote(job.after_job)}"
        lines.append(f"{var}=$(sbatch --parsable{dep} {job.path.name} | cut -d';' -f1)")
        lines.append(f'echo "{job.stage}: job ${var}"')
    return "\n".join(lines) + "\n"
