"""What the `synthgen slurm` commands do: render the sbatch scripts of a run and submit them.

    sub = Submission(settings, config_data, config_path, echo=print)
    jobs = [sub.generate_job(force=False, dry_run=False), *sub.curate_jobs(after_generate=True)]
    sub.finish([j for j in jobs if j], dry_run=False)

Scripts and a copy of the config go to `<run_dir>/slurm/`; cluster settings come from the
config's `slurm` section (synthgen.slurm.settings, every key also a flag), never from the templates.

`synthgen slurm calibrate` runs the calibrate stage as an array, as generate is one: task i runs
`synthgen calibrate --shard i --num-shards n` on the problem set; only shards without a marker in
RUN_DIR/calibrate/ get a task, and a task resumes from the rows its shard already has. Its
student is reached like generate's servers (render.server_mode), a per-task server serving the
student being calibrated (`slurm.calibrate.model`, else the config's `calibrate.student.model`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from synthgen.errors import UserError
from synthgen.settings.base import ConfigFile, resolve_settings
from synthgen.slurm import capacity, render, submit
from synthgen.slurm.render import RenderContext, SbatchJob
from synthgen.slurm.settings import SlurmSettings
from synthgen.store.layout import StageDir


class Submission:
    """One `synthgen slurm ...` submission: the jobs to render from the settings and the config,
    then written (and printed for --dry-run) or submitted with their afterok dependencies."""

    def __init__(
        self, settings: SlurmSettings, config: dict[str, Any], config_path: Path | None, echo: Callable[..., None]
    ):
        self.settings, self.config, self.echo = settings, config, echo
        self.rctx = RenderContext.build(settings, config_path)

    def _section(self, name: str) -> dict:
        value = self.config.get(name) or {}
        return value if isinstance(value, dict) else {}

    def _config_urls(self, model) -> list[str] | None:
        """The teacher and student URLs a stage's config names, when the jobs start no server of their own."""
        if self.settings.vllm.shared_url or self.settings.vllm.start_server:
            return None
        stage = resolve_settings(model, self.config, {})
        return list(dict.fromkeys([stage.teacher.base_url, stage.student.base_url]))

    def _pending(self, stage: str, num_shards: int | None, force: bool, dry_run: bool) -> tuple[int, list[int]]:
        """(n, the shards of `stage` without a marker); refuses while an earlier array still runs."""
        n = int(num_shards or self._section(stage).get("num_shards") or 1)
        pending = render.pending_shards(self.rctx.run_dir, n, stage)
        if not pending:
            self.echo(f"{stage}: all {n} shards are finished in {self.rctx.run_dir}; nothing to submit")
        elif not dry_run and not force:
            submit.refuse_while_running(self.rctx, stage)
        return n, pending

    def generate_job(self, force: bool, dry_run: bool) -> SbatchJob | None:
        """The generate array over unfinished shards, or None when every shard is finished."""
        from synthgen.stages.generate.settings import GenerateSettings

        n, pending = self._pending("generate", self.settings.num_shards, force, dry_run)
        if not pending:
            return None
        return render.render_generate(self.settings, self.rctx, n, pending, self._config_urls(GenerateSettings))

    def calibrate_job(self, input_dir: Path | None, force: bool, dry_run: bool) -> SbatchJob | None:
        """The calibrate array over unfinished shards, or None when every shard is finished."""
        from synthgen.stages.calibrate.run import input_files
        from synthgen.stages.calibrate.settings import CalibrateSettings

        given = input_dir or self._section("calibrate").get("input_dir")
        if not given:
            raise UserError("slurm calibrate needs the problem set: pass --input-dir DIR or set calibrate.input_dir")
        folder = Path(given).expanduser().absolute()
        input_files(folder)  # not a folder, or no problem files in it: one line, exit 2, before any job is queued
        n, pending = self._pending("calibrate", self.settings.calibrate.num_shards, force, dry_run)
        if not pending:
            return None
        stage = resolve_settings(CalibrateSettings, self.config, {"input_dir": str(folder)})
        model = self.settings.calibrate.model or stage.student.model
        vllm = self.settings.vllm
        urls = None if vllm.shared_url or vllm.start_server else [stage.student.base_url]
        return render.render_calibrate(self.settings, self.rctx, folder, n, pending, model, urls)

    def curate_jobs(self, after_generate: bool) -> list[SbatchJob]:
        from synthgen.stages.chain.settings import ChainSettings

        return render.render_curate(self.settings, self.rctx, after_generate, self._config_urls(ChainSettings))

    def check_generate_finished(self) -> None:
        """curate without --after needs every generate shard finished (else filter sees part of it)."""
        stage = StageDir(self.rctx.run_dir, "generate")
        found = stage.status()
        if not found.finished:
            raise UserError(f"no finished generate shard in {stage.path}; run generate first or pass --after JOB_ID")
        if found.missing:
            raise UserError(
                f"{len(found.missing)} generate shard(s) in {stage.path} are not finished "
                f"({found.missing_names()}); pass --after JOB_ID to wait for the generate array"
            )

    def train_job(self, data, model, output, curriculum, after: str | None) -> SbatchJob:
        flags = {"--data": str(Path(data).absolute()) if data else str(self.rctx.run_dir / "bin")}
        if model:
            flags["--model"] = model
        if output:
            remote = str(output).startswith(("s3:", "gs:"))
            flags["--output"] = output if remote else str(Path(output).absolute())
        if curriculum:
            flags["--curriculum"] = curriculum
        served = model or self._section("train").get("model")
        return render.render_train(self.settings, self.rctx, flags, served, after)

    def finish(self, jobs: list[SbatchJob], dry_run: bool) -> None:
        """Warn about jobs no node can hold; write the scripts; print them (dry run) or submit them."""
        if not jobs:
            return
        for warning in capacity.check(jobs):
            self.echo(f"synthgen: warning: {warning}", err=True)
        written = submit.write_jobs(self.rctx, jobs)
        if dry_run:
            for path in written:
                self.echo(f"# ==> {path} <==")
                self.echo(path.read_text(encoding="utf-8"))
            self.echo(f"# dry run: nothing submitted; `bash {self.rctx.slurm_dir / 'submit.sh'}` would submit it")
            return
        ids = submit.submit_jobs(self.rctx, jobs)
        for job in jobs:
            extra = f" (array {job.array}: {len(job.shards)} shard(s))" if job.array else ""
            after = f", after {job.after} {ids[job.after]}" if job.after in ids else ""
            if job.after_job:
                after = f", after job {job.after_job}"
            self.echo(f"{job.stage}: job {ids[job.stage]}{extra}{after}")
        self.echo(f"scripts and logs: {self.rctx.slurm_dir}")


def generate(settings: SlurmSettings, config: ConfigFile, force: bool, dry_run: bool) -> None:
    """Submit the generate array for the shards that have no completion marker yet."""
    sub = Submission(settings, config.data(), config.path, typer.echo)
    job = sub.generate_job(force, dry_run)
    sub.finish([job] if job else [], dry_run)


def curate(settings: SlurmSettings, config: ConfigFile, after: str | None, dry_run: bool) -> None:
    """Submit filter -> bin -> chain, each step waiting (afterok) for the one before."""
    sub = Submission(settings, config.data(), config.path, typer.echo)
    if after is None and not dry_run:
        sub.check_generate_finished()
    jobs = sub.curate_jobs(after_generate=False)
    jobs[0].after_job = after
    sub.finish(jobs, dry_run)


def train(settings: SlurmSettings, config: ConfigFile, data, model, output, curriculum, after, dry_run: bool) -> None:
    """Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`."""
    sub = Submission(settings, config.data(), config.path, typer.echo)
    job = sub.train_job(data, model, output, curriculum, None)
    job.after_job = after
    sub.finish([job], dry_run)


def pipeline(
    settings: SlurmSettings, config: ConfigFile, model, output, curriculum, force: bool, dry_run: bool
) -> None:
    """Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok."""
    sub = Submission(settings, config.data(), config.path, typer.echo)
    gen = sub.generate_job(force, dry_run)
    jobs = ([gen] if gen else []) + sub.curate_jobs(after_generate=gen is not None)
    jobs.append(sub.train_job(None, model, output, curriculum, "chain"))
    sub.finish(jobs, dry_run)


def calibrate(settings: SlurmSettings, config: ConfigFile, input_dir, after, force: bool, dry_run: bool) -> None:
    """Submit the calibrate array (another student re-measures a problem set) for its unfinished shards."""
    sub = Submission(settings, config.data(), config.path, typer.echo)
    job = sub.calibrate_job(input_dir, force, dry_run)
    if job is not None:
        job.after_job = after
    sub.finish([job] if job else [], dry_run)
