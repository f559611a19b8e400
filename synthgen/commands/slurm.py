"""`synthgen slurm`: run the pipeline as Slurm jobs (generate array, curation chain, training).

    synthgen --config run.yaml slurm generate --num-shards 64 --parallelism 16   # unfinished shards
    synthgen --config run.yaml slurm curate                           # filter -> bin -> chain
    synthgen --config run.yaml slurm train --model PATH --output DIR --curriculum classic
    synthgen --config run.yaml slurm pipeline --dry-run               # print every script
    synthgen slurm wait-ready http://node:8000/v1 --timeout 1800      # used inside the jobs

Scripts and a copy of the config go to `<run_dir>/slurm/`; cluster settings come from the
config's `slurm` section (synthgen.config.slurm, every key also a flag), never from the templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from synthgen.commands._common import AppState
from synthgen.commands.derive import Alias, SettingsCommand, option
from synthgen.config.base import SECTIONS, resolve_settings
from synthgen.config.slurm import SlurmSettings

slurm_app = typer.Typer(
    name="slurm",
    help="Run the pipeline as Slurm jobs: print the sbatch scripts (--dry-run) or submit them.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

DRY_RUN = option("dry_run", bool, "--dry-run", default=False, help="Write and print the scripts; submit nothing.")
FORCE = option("force", bool, "--force", default=False, help="Submit even if an earlier generate array still runs.")
AFTER = option("after", Optional[str], "--after", help="Job id (e.g. the generate array) the first job waits for.")
SHARED = Alias("--base-url", ("vllm.shared_url",), "A running OpenAI-compatible server that every job shares "
               "(no per-job vLLM).")
TRAIN_FLAGS = [
    option("data", Optional[Path], "--data", help="Binned data (default: RUN_DIR/bin)."),
    option("model", Optional[str], "--model", help="Model to train (path or name); also what trl vllm-serve serves."),
    option("output", Optional[str], "--output", help="Checkpoint folder."),
    option("curriculum", Optional[str], "--curriculum", help="Curriculum name (see synthgen train --help)."),
]


def register(app: typer.Typer) -> None:
    app.add_typer(slurm_app, name="slurm")
    for command in COMMANDS:
        command.register(slurm_app)


def _context(ctx: typer.Context, settings: SlurmSettings):
    from synthgen.slurm.render import RenderContext

    state: AppState = ctx.find_object(AppState) or AppState()
    return RenderContext.build(settings, state.config_path)


def _config_section(ctx: typer.Context, section: str) -> dict:
    state: AppState = ctx.find_object(AppState) or AppState()
    value = state.config().get(section) or {}
    return value if isinstance(value, dict) else {}


def _generate_job(ctx: typer.Context, settings: SlurmSettings, rctx, force: bool, dry_run: bool):
    """The generate array over unfinished shards, or None when every shard is finished."""
    from synthgen.errors import UserError
    from synthgen.slurm import render, submit

    n = settings.num_shards or _config_section(ctx, "generate").get("num_shards") or 1
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
    from synthgen.config.generate import GenerateSettings

    return render.render_generate(settings, rctx, int(n), pending, _config_urls(ctx, settings, GenerateSettings))


def _config_urls(ctx: typer.Context, settings: SlurmSettings, model) -> list[str] | None:
    """The teacher and student URLs a stage's config names, when the jobs start no server of their own."""
    if settings.vllm.shared_url or settings.vllm.start_server:
        return None
    state: AppState = ctx.find_object(AppState) or AppState()
    stage = resolve_settings(model, state.config(), {}, known_sections=SECTIONS)
    return list(dict.fromkeys([stage.teacher.base_url, stage.student.base_url]))


def _curate_jobs(ctx: typer.Context, settings: SlurmSettings, rctx, after_generate: bool):
    from synthgen.config.chain import ChainSettings
    from synthgen.slurm import render

    return render.render_curate(settings, rctx, after_generate, _config_urls(ctx, settings, ChainSettings))


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
    from synthgen.slurm import capacity, submit

    if not jobs:
        return
    for warning in capacity.check(jobs):
        typer.echo(f"synthgen: warning: {warning}", err=True)
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
def generate(settings: SlurmSettings, ctx: typer.Context, force: bool, dry_run: bool) -> None:
    """Submit the generate array for the shards that have no completion marker yet."""
    rctx = _context(ctx, settings)
    job = _generate_job(ctx, settings, rctx, force, dry_run)
    _finish(rctx, [job] if job else [], dry_run)


def curate(settings: SlurmSettings, ctx: typer.Context, after: Optional[str], dry_run: bool) -> None:
    """Submit filter -> bin -> chain, each step waiting (afterok) for the one before."""
    from synthgen.slurm import render

    rctx = _context(ctx, settings)
    if after is None and not dry_run:
        _check_generate_finished(rctx)
    jobs = _curate_jobs(ctx, settings, rctx, after_generate=False)
    jobs[0].after_job = after
    _finish(rctx, jobs, dry_run)


def train(settings: SlurmSettings, ctx: typer.Context, data, model, output, curriculum, after, dry_run: bool) -> None:
    """Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`."""
    rctx = _context(ctx, settings)
    job = _train_job(ctx, settings, rctx, data, model, output, curriculum, None)
    job.after_job = after
    _finish(rctx, [job], dry_run)


def pipeline(settings: SlurmSettings, ctx: typer.Context, model, output, curriculum, force: bool,
             dry_run: bool) -> None:
    """Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok."""
    from synthgen.slurm import render

    rctx = _context(ctx, settings)
    gen = _generate_job(ctx, settings, rctx, force, dry_run)
    jobs = ([gen] if gen else []) + _curate_jobs(ctx, settings, rctx, after_generate=gen is not None)
    jobs.append(_train_job(ctx, settings, rctx, None, model, output, curriculum, "chain"))
    _finish(rctx, jobs, dry_run)


_NOT_GENERATE = frozenset({"generate", "num_shards", "array_parallelism", "requeue", "signal_grace_s"})
COMMANDS = [
    SettingsCommand("generate", SlurmSettings, generate, aliases=[SHARED], extras=[FORCE, DRY_RUN],
                    exclude=frozenset({"curate", "train"})),
    SettingsCommand("curate", SlurmSettings, curate, aliases=[SHARED], extras=[AFTER, DRY_RUN],
                    exclude=_NOT_GENERATE | {"train"}),
    SettingsCommand("train", SlurmSettings, train, extras=[*TRAIN_FLAGS, AFTER, DRY_RUN],
                    exclude=_NOT_GENERATE | {"curate", "vllm"}),
    SettingsCommand("pipeline", SlurmSettings, pipeline, aliases=[SHARED], extras=[*TRAIN_FLAGS[1:], FORCE, DRY_RUN]),
]
SHOW = SettingsCommand("slurm", SlurmSettings, lambda settings: None)


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
