"""`synthgen slurm`: run the pipeline as Slurm jobs (generate and calibrate arrays, curation chain, training).

    synthgen --config run.yaml slurm generate --num-shards 64 --parallelism 16   # unfinished shards
    synthgen --config run.yaml slurm curate                           # filter -> bin -> chain
    synthgen --config run.yaml slurm train --model PATH --output DIR --curriculum classic
    synthgen --config run.yaml slurm calibrate --input-dir RUN/bin --calibrate-num-shards 8   # unfinished shards
    synthgen --config run.yaml slurm pipeline --dry-run               # print every script
    synthgen slurm wait-ready http://node:8000/v1 --timeout 1800      # used inside the jobs

Scripts and a copy of the config go to `<run_dir>/slurm/`; cluster settings come from the
config's `slurm` section (synthgen.slurm.settings, every key also a flag), never from the templates.
"""

from __future__ import annotations

from pathlib import Path

import typer

from synthgen.cli.flags import Alias, AppState, SettingsCommand, option
from synthgen.slurm.settings import SlurmSettings, WaitReadySettings

slurm_app = typer.Typer(
    name="slurm",
    help="Run the pipeline as Slurm jobs: print the sbatch scripts (--dry-run) or submit them.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

DRY_RUN = option("dry_run", bool, "--dry-run", default=False, help="Write and print the scripts; submit nothing.")
FORCE = option("force", bool, "--force", default=False, help="Submit even if an earlier generate array still runs.")
AFTER = option("after", str | None, "--after", help="Job id (e.g. the generate array) the first job waits for.")
SHARED = Alias(
    "--base-url", ("vllm.shared_url",), "A running OpenAI-compatible server that every job shares (no per-job vLLM)."
)
CALIBRATE_FLAGS = [
    option("input_dir", Path | None, "--input-dir", help="Problem set to re-measure (default: calibrate.input_dir)."),
    option("after", str | None, "--after", help="Job id (e.g. the bin job) the array waits for."),
    option("force", bool, "--force", default=False, help="Submit even if an earlier calibrate array still runs."),
    DRY_RUN,
]
TRAIN_FLAGS = [
    option("data", Path | None, "--data", help="Binned data (default: RUN_DIR/bin)."),
    option("model", str | None, "--model", help="Model to train (path or name); also what trl vllm-serve serves."),
    option("output", str | None, "--output", help="Checkpoint folder."),
    option("curriculum", str | None, "--curriculum", help="Curriculum name (see synthgen train --help)."),
]


def register(app: typer.Typer) -> None:
    app.add_typer(slurm_app, name="slurm")
    for command in [*COMMANDS, WAIT_READY]:
        command.register(slurm_app)


def _submission(ctx: typer.Context, settings: SlurmSettings):
    from synthgen.slurm.submission import Submission

    state: AppState = ctx.find_object(AppState) or AppState()
    return Submission(settings, state.config(), state.config_path, typer.echo)


# -- commands -----------------------------------------------------------------------------------
def generate(settings: SlurmSettings, ctx: typer.Context, force: bool, dry_run: bool) -> None:
    """Submit the generate array for the shards that have no completion marker yet."""
    sub = _submission(ctx, settings)
    job = sub.generate_job(force, dry_run)
    sub.finish([job] if job else [], dry_run)


def curate(settings: SlurmSettings, ctx: typer.Context, after: str | None, dry_run: bool) -> None:
    """Submit filter -> bin -> chain, each step waiting (afterok) for the one before."""
    sub = _submission(ctx, settings)
    if after is None and not dry_run:
        sub.check_generate_finished()
    jobs = sub.curate_jobs(after_generate=False)
    jobs[0].after_job = after
    sub.finish(jobs, dry_run)


def train(settings: SlurmSettings, ctx: typer.Context, data, model, output, curriculum, after, dry_run: bool) -> None:
    """Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`."""
    sub = _submission(ctx, settings)
    job = sub.train_job(data, model, output, curriculum, None)
    job.after_job = after
    sub.finish([job], dry_run)


def pipeline(
    settings: SlurmSettings, ctx: typer.Context, model, output, curriculum, force: bool, dry_run: bool
) -> None:
    """Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok."""
    sub = _submission(ctx, settings)
    gen = sub.generate_job(force, dry_run)
    jobs = ([gen] if gen else []) + sub.curate_jobs(after_generate=gen is not None)
    jobs.append(sub.train_job(None, model, output, curriculum, "chain"))
    sub.finish(jobs, dry_run)


def calibrate(settings: SlurmSettings, ctx: typer.Context, input_dir, after, force: bool, dry_run: bool) -> None:
    """Submit the calibrate array (another student re-measures a problem set) for its unfinished shards."""
    from synthgen.slurm.calibrate import calibrate_job

    sub = _submission(ctx, settings)
    job = calibrate_job(sub, input_dir, force, dry_run)
    if job is not None:
        job.after_job = after
    sub.finish([job] if job else [], dry_run)


_NOT_GENERATE = frozenset({"generate", "num_shards", "array_parallelism", "requeue", "signal_grace_s"})
_NO_ARRAY = _NOT_GENERATE | {"calibrate"}  # what only the array jobs (generate, calibrate) use
COMMANDS = [
    SettingsCommand(
        "generate",
        SlurmSettings,
        generate,
        aliases=[SHARED],
        extras=[FORCE, DRY_RUN],
        exclude=frozenset({"curate", "train", "calibrate"}),
    ),
    SettingsCommand(
        "curate", SlurmSettings, curate, aliases=[SHARED], extras=[AFTER, DRY_RUN], exclude=_NO_ARRAY | {"train"}
    ),
    SettingsCommand(
        "train", SlurmSettings, train, extras=[*TRAIN_FLAGS, AFTER, DRY_RUN], exclude=_NO_ARRAY | {"curate", "vllm"}
    ),
    SettingsCommand(
        "pipeline",
        SlurmSettings,
        pipeline,
        aliases=[SHARED],
        extras=[*TRAIN_FLAGS[1:], FORCE, DRY_RUN],
        exclude=frozenset({"calibrate"}),
    ),
    SettingsCommand(
        "calibrate",
        SlurmSettings,
        calibrate,
        aliases=[SHARED],
        extras=CALIBRATE_FLAGS,
        exclude=frozenset({"generate", "curate", "train", "num_shards", "array_parallelism"}),
    ),
]
SHOW = SettingsCommand("slurm", SlurmSettings, lambda settings: None)
WAIT_READY = SettingsCommand(
    "wait-ready",
    WaitReadySettings,
    "synthgen.slurm.ready:run",
    help="Wait until every server answers; exit 0 when ready, 1 on timeout or a dead server.",
)
