"""Write rendered jobs into `<run_dir>/slurm/` and submit them with `sbatch --parsable`.

    written = write_jobs(ctx, jobs)          # scripts, the config copy, submit.sh
    ids = submit_jobs(ctx, jobs)             # {"generate": "123", "filter": "124", ...}

A job that depends on another stage of the same submission gets `--dependency=afterok:<id>`.
Every submission is appended to `<run_dir>/slurm/jobs.jsonl` (time, stage, job id, array), which
is also how a re-run finds jobs of an earlier submission that are still queued or running: their
shards have no marker yet, so submitting them again would run the same shard twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
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
    written: list[Path] = []
    if not ctx.config.exists():
        _write(ctx.config, ctx.config_text, mode=0o644)
    written.append(ctx.config)
    for job in jobs:
        _write(job.path, job.script, mode=0o755)
        written.append(job.path)
    if jobs:
        path = ctx.slurm_dir / "submit.sh"
        _write(path, submit_script(jobs), mode=0o755)
        written.append(path)
    return written


def _write(path: Path, text: str, mode: int) -> None:
    os.chmod(write_text_atomic(path, text), mode)


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
    entry = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "stage": job.stage,
        "job_id": job_id,
        "array": job.array,
        "dependency": dependency,
        "script": str(job.path),
        "config": str(ctx.config),
    }
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
