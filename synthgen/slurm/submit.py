"""Write rendered jobs into `<run_dir>/slurm/` and submit them with `sbatch --parsable`, chained afterok.

Every submission is appended to `<run_dir>/slurm/jobs.jsonl`, which is also how a re-run finds
jobs of an earlier submission still queued or running: their shards have no marker yet, so
submitting them again would run the same shard twice. `capacity_warnings` first compares what
each job asks of a node with what `sinfo` reports: Slurm queues a job no node can hold (8 CPUs
per task on 2-CPU nodes) and leaves it pending forever, with a reason only `squeue` shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from synthgen.errors import UserError
from synthgen.slurm.render import RenderContext, SbatchJob, submit_script
from synthgen.store.files import write_text_atomic

JOBS_FILE = "jobs.jsonl"
# States after which a job no longer runs (a preempted job that Slurm requeues shows PENDING again).
_ENDED = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "SPECIAL_EXIT"}
FINISHED_STATES = frozenset(_ENDED | {"NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "REVOKED"})  # or the cluster ended it


def write_jobs(ctx: RenderContext, jobs: list[SbatchJob]) -> list[Path]:
    """Write the scripts, the config copy and submit.sh; make the log folder. Returns the paths."""
    ctx.slurm_dir.mkdir(parents=True, exist_ok=True)
    ctx.log_dir.mkdir(parents=True, exist_ok=True)  # Slurm does not create the --output folder
    if not ctx.config.exists():
        os.chmod(write_text_atomic(ctx.config, ctx.config_text), 0o644)
    scripts = {job.path: job.script for job in jobs} | {ctx.slurm_dir / "submit.sh": submit_script(jobs)}
    for path, text in scripts.items():
        os.chmod(write_text_atomic(path, text), 0o755)
    return [ctx.config, *scripts]


def sbatch(script: Path, dependency: str | None = None, cwd: Path | None = None) -> str:
    """Submit one script; return its job id. A refusal by sbatch is a one-line UserError."""
    found = shutil.which("sbatch")
    if not found:
        raise UserError("sbatch not found: is this a Slurm login node? (--dry-run only writes the scripts)")
    cmd = [found, "--parsable", *([f"--dependency={dependency}"] if dependency else []), str(script)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).strip().splitlines()
        raise UserError(f"sbatch refused {script.name}: {reason[-1] if reason else f'exit {proc.returncode}'}")
    job_id = proc.stdout.strip().split(";", 1)[0]
    if not job_id.isdigit():
        raise UserError(f"sbatch printed no job id for {script.name}: {proc.stdout.strip()!r}")
    return job_id


def submit_jobs(ctx: RenderContext, jobs: list[SbatchJob]) -> dict[str, str]:
    """Submit `jobs` in order, chaining dependencies; record each in jobs.jsonl."""
    ids: dict[str, str] = {}
    for job in jobs:
        after = ids.get(job.after or "") or job.after_job  # a stage of this submission, or an earlier job
        dependency = f"afterok:{after}" if after else None
        ids[job.stage] = sbatch(job.path, dependency, cwd=ctx.workdir)
        _record(ctx, job, ids[job.stage], dependency)
    return ids


def _record(ctx: RenderContext, job: SbatchJob, job_id: str, dependency: str | None) -> None:
    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "stage": job.stage, "job_id": job_id, "array": job.array}
    entry |= {"dependency": dependency, "script": str(job.path), "config": str(ctx.config)}
    with open(ctx.slurm_dir / JOBS_FILE, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, sort_keys=True) + "\n")


def active_jobs(job_ids: list[str]) -> list[str]:
    """Those of `job_ids` that Slurm still has queued or running (array tasks count)."""
    squeue = shutil.which("squeue")
    if not job_ids or squeue is None:
        return []
    proc = subprocess.run([squeue, "-h", "-o", "%F %T", "--jobs", ",".join(job_ids)], capture_output=True, text=True)
    if proc.returncode != 0:  # all of them gone: squeue calls the ids invalid
        return []
    rows = [line.split() for line in proc.stdout.splitlines()]
    alive = {row[0] for row in rows if len(row) >= 2 and row[1] not in FINISHED_STATES}
    return [j for j in job_ids if j in alive]


def refuse_while_running(ctx: RenderContext, stage: str) -> None:
    """An earlier array of `stage` still queued or running would work on the same shards: exit 2."""
    path, earlier = ctx.slurm_dir / JOBS_FILE, []
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if entry.get("stage") == stage:
                earlier.append(entry["job_id"])
    busy = active_jobs(earlier)
    if busy:
        raise UserError(
            f"{stage} job(s) {', '.join(busy)} of an earlier submission are still queued or "
            "running for this run directory; wait for them, scancel them, or pass --force"
        )


_GPUS = re.compile(r"gpu(?::[^:,(]+)?:(\d+)")


@dataclass(frozen=True)
class Node:
    partitions: tuple[str, ...]
    cpus: int
    gpus: int


def parse_sinfo(text: str) -> tuple[list[Node], str | None]:
    """Nodes from `sinfo -h -N -o '%N|%P|%c|%G'` lines, and the default partition (marked `*`)."""
    by_name: dict[str, Node] = {}
    default = None
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 4 or not parts[2].strip().isdigit():
            continue
        name, partition, cpus, gres = parts
        if partition.endswith("*"):
            partition = partition[:-1]
            default = partition
        gpus = sum(int(n) for n in _GPUS.findall(gres))
        old = by_name.get(name)
        partitions = (old.partitions if old else ()) + (partition,)
        by_name[name] = Node(partitions, int(cpus), gpus)
    return list(by_name.values()), default


def warnings_for(jobs: list[SbatchJob], nodes: list[Node], default: str | None) -> list[str]:
    """One line per job that no node (of its partition) can hold."""
    out = []
    for job in jobs:
        need = job.request
        if need is None:
            continue
        partition = need.partition or default
        fitting = [n for n in nodes if partition is None or partition in n.partitions]
        where = f"partition {partition}" if partition else "the cluster"
        if not fitting:
            out.append(f"{job.stage}: {where} has no nodes (sinfo); the job would pend forever")
            continue
        key = job.stage if job.stage in ("generate", "calibrate", "train") else "curate"  # the curate job runs the rest
        most_cpus, most_gpus = max(n.cpus for n in fitting), max(n.gpus for n in fitting)
        for asked, most, what, limit, setting in (
            (need.cpus, most_cpus, "CPUs per task", f"the largest node of {where} has", "cpus_per_task"),
            (need.gpus, most_gpus, "GPUs per node", f"the nodes of {where} have at most", "gpus_per_node"),
            (need.nodes, len(fitting), "nodes", f"{where} has", "nodes"),
        ):
            if asked > most:
                out.append(
                    f"{job.stage}: asks for {asked} {what} but {limit} {most}; it would pend forever "
                    f"(set slurm.{key}.{setting})"
                )
    return out


def capacity_warnings(jobs: list[SbatchJob]) -> list[str]:
    """Warnings for `jobs` on the cluster this machine talks to; none when there is no `sinfo`."""
    if shutil.which("sinfo") is None:
        return []
    proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%N|%P|%c|%G"], capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        return []
    nodes, default = parse_sinfo(proc.stdout)
    return warnings_for(jobs, nodes, default) if nodes else []
