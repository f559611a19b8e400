"""What the `synthgen slurm` commands do: render the sbatch scripts of a run and submit them.

Scripts and a copy of the config go to `<run_dir>/slurm/`; cluster settings come from the
config's `slurm` section (synthgen.slurm.settings, every key also a flag), never from the templates.
"""

from __future__ import annotations

import typer

from synthgen.settings.base import ConfigFile
from synthgen.slurm.settings import SlurmSettings


def _submission(settings: SlurmSettings, config: ConfigFile):
    from synthgen.slurm.submission import Submission

    return Submission(settings, config.data(), config.path, typer.echo)


def generate(settings: SlurmSettings, config: ConfigFile, force: bool, dry_run: bool) -> None:
    """Submit the generate array for the shards that have no completion marker yet."""
    sub = _submission(settings, config)
    job = sub.generate_job(force, dry_run)
    sub.finish([job] if job else [], dry_run)


def curate(settings: SlurmSettings, config: ConfigFile, after: str | None, dry_run: bool) -> None:
    """Submit filter -> bin -> chain, each step waiting (afterok) for the one before."""
    sub = _submission(settings, config)
    if after is None and not dry_run:
        sub.check_generate_finished()
    jobs = sub.curate_jobs(after_generate=False)
    jobs[0].after_job = after
    sub.finish(jobs, dry_run)


def train(settings: SlurmSettings, config: ConfigFile, data, model, output, curriculum, after, dry_run: bool) -> None:
    """Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`."""
    sub = _submission(settings, config)
    job = sub.train_job(data, model, output, curriculum, None)
    job.after_job = after
    sub.finish([job], dry_run)


def pipeline(
    settings: SlurmSettings, config: ConfigFile, model, output, curriculum, force: bool, dry_run: bool
) -> None:
    """Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok."""
    sub = _submission(settings, config)
    gen = sub.generate_job(force, dry_run)
    jobs = ([gen] if gen else []) + sub.curate_jobs(after_generate=gen is not None)
    jobs.append(sub.train_job(None, model, output, curriculum, "chain"))
    sub.finish(jobs, dry_run)


def calibrate(settings: SlurmSettings, config: ConfigFile, input_dir, after, force: bool, dry_run: bool) -> None:
    """Submit the calibrate array (another student re-measures a problem set) for its unfinished shards."""
    from synthgen.slurm.calibrate import calibrate_job

    sub = _submission(settings, config)
    job = calibrate_job(sub, input_dir, force, dry_run)
    if job is not None:
        job.after_job = after
    sub.finish([job] if job else [], dry_run)
