"""`synthgen slurm calibrate`: the calibrate stage as a Slurm array, as generate is one.

    sub = Submission(settings, config_data, config_path, echo=print)
    job = calibrate_job(sub, input_dir=Path("runs/r1/bin"), force=False, dry_run=True)

Array task i runs `synthgen calibrate --shard i --num-shards n` on the problem set, so task id ==
shard index; only shards without a completion marker in RUN_DIR/calibrate/ get a task, and a
task resumes from the rows its shard already has (a requeued, cancelled or re-submitted task
never measures a problem twice). The student is reached like generate's servers
(synthgen.slurm.render.server_mode): a shared server, a vLLM server per task that serves the
student being calibrated (`slurm.calibrate.model`, else the config's `calibrate.student.model`),
or the student URL of the config.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.errors import UserError
from synthgen.settings.base import resolve_settings
from synthgen.slurm import render, submit
from synthgen.slurm.render import Job, RenderContext
from synthgen.slurm.settings import SlurmSettings

STAGE = "calibrate"


def input_folder(sub, input_dir: Path | None) -> Path:
    """The problem set to calibrate: `--input-dir`, else the config's `calibrate.input_dir`; it must hold problems."""
    from synthgen.stages.calibrate.run import input_files

    given = input_dir or sub._section(STAGE).get("input_dir")
    if not given:
        raise UserError("slurm calibrate needs the problem set: pass --input-dir DIR or set calibrate.input_dir")
    folder = Path(given).expanduser().absolute()
    input_files(folder)  # not a folder, or no problem files in it: one line, exit 2, before any job is queued
    return folder


def calibrate_job(sub, input_dir: Path | None, force: bool, dry_run: bool) -> Job | None:
    """The calibrate array over unfinished shards, or None when every shard is finished."""
    from synthgen.stages.calibrate.settings import CalibrateSettings

    settings = sub.settings
    folder = input_folder(sub, input_dir)
    n = int(settings.calibrate.num_shards or sub._section(STAGE).get("num_shards") or 1)
    pending = render.pending_shards(sub.rctx.run_dir, n, STAGE)
    if not pending:
        sub.echo(f"calibrate: all {n} shards are finished in {sub.rctx.run_dir}; nothing to submit")
        return None
    if not dry_run and not force:
        submit.refuse_while_running(sub.rctx, STAGE)
    stage = resolve_settings(CalibrateSettings, sub.config, {"input_dir": str(folder)})
    model = settings.calibrate.model or stage.student.model
    urls = None if settings.vllm.shared_url or settings.vllm.start_server else [stage.student.base_url]
    return render_calibrate(settings, sub.rctx, folder, n, pending, model, urls)


def render_calibrate(
    settings: SlurmSettings,
    ctx: RenderContext,
    input_dir: Path,
    num_shards: int,
    pending: list[int],
    model: str,
    config_urls: list[str] | None = None,
) -> Job:
    """The calibrate array over `pending` shards of `num_shards`; a per-task server serves `model`."""
    res = settings.calibrate
    # The task's own server serves the student being calibrated, not generate's teacher.
    vllm = settings.vllm.model_copy(update={"model": model, "reasoning_parser": res.reasoning_parser})
    server = {**render._server_values(settings, config_urls), "vllm": vllm}
    gpus = render._gpus(res, settings, server["server"])
    array = render.array_spec(pending, res.array_parallelism)
    script = render._render(
        "calibrate.sbatch.j2",
        ctx=ctx,
        job_name=f"{settings.job_name}-{STAGE}",
        array=array,
        pending=pending,
        num_shards=num_shards,
        input_dir=input_dir,
        marker_printf=render._marker_printf(),
        log_dir=ctx.log_dir,
        requeue=settings.requeue,
        signal_grace_s=settings.signal_grace_s,
        sbatch=render.sbatch_options(settings, res, ctx, gpus),
        **server,
    )
    return Job(
        STAGE,
        script,
        ctx.slurm_dir / f"{STAGE}.sbatch",
        array=array,
        shards=list(pending),
        request=render.request(settings, res, gpus),
    )
