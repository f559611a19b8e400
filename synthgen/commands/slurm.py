"""`synthgen slurm`: run the pipeline as Slurm jobs (generate array, curation chain, training).

    synthgen --config run.yaml slurm generate --num-shards 64 -W 16   # submit unfinished shards
    synthgen --config run.yaml slurm curate                           # filter -> bin -> chain
    synthgen --config run.yaml slurm train --model PATH --output DIR --curriculum classic
    synthgen --config run.yaml slurm pipeline --dry-run               # print every script
    synthgen slurm wait-ready http://node:8000/v1 --timeout 1800      # used inside the jobs

Scripts and a copy of the config go to `<run_dir>/slurm/`; cluster settings come from the
config's `slurm` section (synthgen.config.slurm), never from the templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from synthgen.commands._common import AppState, default, settings_from
from synthgen.config.slurm import SlurmSettings

D = SlurmSettings

slurm_app = typer.Typer(
    name="slurm",
    help="Run the pipeline as Slurm jobs: print the sbatch scripts (--dry-run) or submit them.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

RUN_DIR_HELP = "Run directory; scripts and logs go to RUN_DIR/slurm/."
DRY_HELP = "Write and print the scripts; submit nothing."


def register(app: typer.Typer) -> None:
    app.add_typer(slurm_app, name="slurm")


def _settings(ctx: typer.Context, run_dir, partition, account, qos, **more) -> SlurmSettings:
    return settings_from(ctx, SlurmSettings, run_dir=run_dir, partition=partition, account=account, qos=qos, **more)


def _context(ctx: typer.Context, settings: SlurmSettings):
    from synthgen.slurm.render import RenderContext

    state: AppState = ctx.find_object(AppState) or AppState()
    return RenderContext.build(settings, state.config_path)


def _config_section(ctx: typer.Context, section: str) -> dict:
    state: AppState = ctx.find_object(AppState) or AppState()
    value = state.config().get(section) or {}
    return value if isinstance(value, dict) else {}


def _generate_job(ctx: typer.Context, settings: SlurmSettings, rctx, num_shards, base_url, force: bool, dry_run: bool):
    """The generate array over unfinished shards, or None when every shard is finished."""
    from synthgen.errors import UserError
    from synthgen.slurm import render, submit

    n = num_shards or settings.num_shards or _config_section(ctx, "generate").get("num_shards") or 1
    pending = render.pending_shards(rctx.run_dir, int(n))
    if not pending:
        typer.echo(f"generate: all {n} shards are finished in {rctx.run_dir}; nothing to submit")
        return None
    if not dry_run and not force:
        earlier = [e["job_id"] for e in submit.recorded_jobs(rctx.slurm_dir, "generate")]
        busy = submit.active_jobs(earlier)
        if busy:
            raise UserError(f"generate job(s) {', '.join(busy)} of an earlier submission are still queued or "
                            "running for this run directory; wait for them, scancel them, or pass --force")
    config_urls = None
    if not (base_url or settings.vllm.shared_url or settings.vllm.start_server):
        from synthgen.config.generate import GenerateSettings

        gen = settings_from(ctx, GenerateSettings)
        config_urls = [gen.teacher.base_url, gen.student.base_url]
    return render.render_generate(settings, rctx, int(n), pending, base_url, config_urls)


def _check_generate_finished(rctx) -> None:
    """curate without --after needs every generate shard finished (else filter sees part of it)."""
    from synthgen.errors import UserError
    from synthgen.shards import StageDir

    stage = StageDir.of(rctx.run_dir, "generate")
    found = stage.status()
    if not found.finished:
        raise UserError(f"no finished generate shard in {stage.path}; run generate first or pass --after JOB_ID")
    if found.missing:
        raise UserError(f"{len(found.missing)} generate shard(s) in {stage.path} are not finished "
                        f"({found.missing_names()}); pass --after JOB_ID to wait for the generate array")


def _train_job(ctx: typer.Context, settings: SlurmSettings, rctx, data, model, output, curriculum, after):
    from synthgen.slurm import render

    flags = {"--data": str(Path(data).absolute()) if data else str(rctx.run_dir / "bin")}
    if model:
        flags["--model"] = model
    if output:
        flags["--output"] = str(Path(output).absolute()) if not str(output).startswith(("s3:", "gs:")) else output
    if curriculum:
        flags["--curriculum"] = curriculum
    served = model or _config_section(ctx, "train").get("model")
    return render.render_train(settings, rctx, flags, served, after)


def _finish(rctx, jobs, dry_run: bool) -> None:
    from synthgen.slurm import submit

    if not jobs:
        return
    written = submit.write_jobs(rctx, jobs)
    if dry_run:
        for path in written:
            typer.echo(f"# ==> {path} <==")
            typer.echo(path.read_text(encoding="utf-8"))
        typer.echo(f"# dry run: nothing submitted; `bash {rctx.slurm_dir / 'submit.sh'}` would submit it")
        return
    ids = submit.submit_jobs(rctx, jobs)
    for job in jobs:
        extra = f" (array {job.array}: {len(job.shards)} shard(s))" if job.array else ""
        after = f", after {job.after} {ids[job.after]}" if job.after in ids else ""
        if job.after_job:
            after = f", after job {job.after_job}"
        typer.echo(f"{job.stage}: job {ids[job.stage]}{extra}{after}")
    typer.echo(f"scripts and logs: {rctx.slurm_dir}")


# -- commands -----------------------------------------------------------------------------------
@slurm_app.command("generate")
def generate(
    ctx: typer.Context,
    run_dir: Path = typer.Option(default(D, "run_dir"), help=RUN_DIR_HELP),
    num_shards: Optional[int] = typer.Option(None, min=1, help="Array size (default: slurm.num_shards, else generate.num_shards, else 1)."),
    array_parallelism: Optional[int] = typer.Option(None, "--parallelism", "-W", min=1, help="At most W tasks at once (--array=...%W)."),
    base_url: Optional[str] = typer.Option(None, help="A shared OpenAI-compatible server for every task (no per-task vLLM)."),
    partition: Optional[str] = typer.Option(None, help="Slurm partition."),
    account: Optional[str] = typer.Option(None, help="Slurm account."),
    qos: Optional[str] = typer.Option(None, help="Slurm QOS."),
    force: bool = typer.Option(False, "--force", help="Submit even if an earlier generate array still runs."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_HELP),
) -> None:
    """Submit the generate array for the shards that have no completion marker yet."""
    settings = _settings(ctx, run_dir, partition, account, qos, array_parallelism=array_parallelism)
    rctx = _context(ctx, settings)
    job = _generate_job(ctx, settings, rctx, num_shards, base_url, force, dry_run)
    _finish(rctx, [job] if job else [], dry_run)


@slurm_app.command("curate")
def curate(
    ctx: typer.Context,
    run_dir: Path = typer.Option(default(D, "run_dir"), help=RUN_DIR_HELP),
    after: Optional[str] = typer.Option(None, help="Job id (e.g. the generate array) that filter waits for."),
    partition: Optional[str] = typer.Option(None, help="Slurm partition."),
    account: Optional[str] = typer.Option(None, help="Slurm account."),
    qos: Optional[str] = typer.Option(None, help="Slurm QOS."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_HELP),
) -> None:
    """Submit filter -> bin -> chain, each step waiting (afterok) for the one before."""
    from synthgen.slurm import render

    settings = _settings(ctx, run_dir, partition, account, qos)
    rctx = _context(ctx, settings)
    if after is None and not dry_run:
        _check_generate_finished(rctx)
    jobs = render.render_curate(settings, rctx, after_generate=False)
    jobs[0].after_job = after
    _finish(rctx, jobs, dry_run)


@slurm_app.command("train")
def train(
    ctx: typer.Context,
    run_dir: Path = typer.Option(default(D, "run_dir"), help=RUN_DIR_HELP),
    data: Optional[Path] = typer.Option(None, help="Binned data (default: RUN_DIR/bin)."),
    model: Optional[str] = typer.Option(None, help="Model to train (path or name); also what trl vllm-serve serves."),
    output: Optional[str] = typer.Option(None, help="Checkpoint folder."),
    curriculum: Optional[str] = typer.Option(None, help="Curriculum name (see synthgen train --help)."),
    nodes: Optional[int] = typer.Option(None, min=1, help="Nodes in all, the vLLM node included."),
    after: Optional[str] = typer.Option(None, help="Job id to wait for (afterok)."),
    partition: Optional[str] = typer.Option(None, help="Slurm partition."),
    account: Optional[str] = typer.Option(None, help="Slurm account."),
    qos: Optional[str] = typer.Option(None, help="Slurm QOS."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_HELP),
) -> None:
    """Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`."""
    settings = _settings(ctx, run_dir, partition, account, qos)
    if nodes is not None:
        settings.train = settings.train.model_copy(update={"nodes": nodes})
    rctx = _context(ctx, settings)
    job = _train_job(ctx, settings, rctx, data, model, output, curriculum, None)
    job.after_job = after
    _finish(rctx, [job], dry_run)


@slurm_app.command("pipeline")
def pipeline(
    ctx: typer.Context,
    run_dir: Path = typer.Option(default(D, "run_dir"), help=RUN_DIR_HELP),
    num_shards: Optional[int] = typer.Option(None, min=1, help="Generate array size."),
    array_parallelism: Optional[int] = typer.Option(None, "--parallelism", "-W", min=1, help="At most W generate tasks at once."),
    base_url: Optional[str] = typer.Option(None, help="A shared server for every generate task."),
    model: Optional[str] = typer.Option(None, help="Model to train."),
    output: Optional[str] = typer.Option(None, help="Checkpoint folder."),
    curriculum: Optional[str] = typer.Option(None, help="Curriculum name."),
    partition: Optional[str] = typer.Option(None, help="Slurm partition."),
    account: Optional[str] = typer.Option(None, help="Slurm account."),
    qos: Optional[str] = typer.Option(None, help="Slurm QOS."),
    force: bool = typer.Option(False, "--force", help="Submit even if an earlier generate array still runs."),
    dry_run: bool = typer.Option(False, "--dry-run", help=DRY_HELP),
) -> None:
    """Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok."""
    from synthgen.slurm import render

    settings = _settings(ctx, run_dir, partition, account, qos, array_parallelism=array_parallelism)
    rctx = _context(ctx, settings)
    gen = _generate_job(ctx, settings, rctx, num_shards, base_url, force, dry_run)
    jobs = ([gen] if gen else []) + render.render_curate(settings, rctx, after_generate=gen is not None)
    jobs.append(_train_job(ctx, settings, rctx, None, model, output, curriculum, "chain"))
    _finish(rctx, jobs, dry_run)


@slurm_app.command("wait-ready")
def wait_ready(
    urls: List[str] = typer.Argument(..., help="Server URLs: .../v1 is probed at /v1/models, others as given."),
    timeout: float = typer.Option(1800.0, "--timeout", min=0, help="Give up after this many seconds (exit 1)."),
    interval: float = typer.Option(2.0, min=0.05, help="Seconds between polls."),
    pid: Optional[int] = typer.Option(None, help="Stop waiting (exit 1) when this server process has exited."),
    api_key: Optional[str] = typer.Option(None, envvar="OPENAI_API_KEY", help="Bearer token, if the server wants one."),
) -> None:
    """Wait until every server answers; exit 0 when ready, 1 on timeout or a dead server."""
    import sys

    from synthgen.slurm.ready import wait_ready as wait

    ok, message = wait(urls, timeout, interval, pid, api_key)
    print(f"wait-ready: {message}", file=sys.stdout if ok else sys.stderr, flush=True)
    if not ok:
        raise typer.Exit(1)
