"""One `synthgen slurm ...` submission: which jobs to render from the settings and the config, then
write them (and print them for --dry-run) or submit them with their afterok dependencies.

    sub = Submission(settings, config_data, config_path, echo=print)
    jobs = [sub.generate_job(force=False, dry_run=False), *sub.curate_jobs(after_generate=True)]
    sub.finish([j for j in jobs if j], dry_run=False)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from synthgen.errors import UserError
from synthgen.settings.base import resolve_settings
from synthgen.slurm import capacity, render, submit
from synthgen.slurm.render import Job, RenderContext
from synthgen.slurm.settings import SlurmSettings
from synthgen.store.layout import StageDir


class Submission:
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

    def generate_job(self, force: bool, dry_run: bool) -> Job | None:
        """The generate array over unfinished shards, or None when every shard is finished."""
        from synthgen.stages.generate.settings import GenerateSettings

        n = int(self.settings.num_shards or self._section("generate").get("num_shards") or 1)
        pending = render.pending_shards(self.rctx.run_dir, n)
        if not pending:
            self.echo(f"generate: all {n} shards are finished in {self.rctx.run_dir}; nothing to submit")
            return None
        if not dry_run and not force:
            submit.refuse_while_running(self.rctx, "generate")
        return render.render_generate(self.settings, self.rctx, n, pending, self._config_urls(GenerateSettings))

    def curate_jobs(self, after_generate: bool) -> list[Job]:
        from synthgen.stages.chain.settings import ChainSettings

        return render.render_curate(self.settings, self.rctx, after_generate, self._config_urls(ChainSettings))

    def check_generate_finished(self) -> None:
        """curate without --after needs every generate shard finished (else filter sees part of it)."""
        stage = StageDir.of(self.rctx.run_dir, "generate")
        found = stage.status()
        if not found.finished:
            raise UserError(f"no finished generate shard in {stage.path}; run generate first or pass --after JOB_ID")
        if found.missing:
            raise UserError(
                f"{len(found.missing)} generate shard(s) in {stage.path} are not finished "
                f"({found.missing_names()}); pass --after JOB_ID to wait for the generate array"
            )

    def train_job(self, data, model, output, curriculum, after: str | None) -> Job:
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

    def finish(self, jobs: list[Job], dry_run: bool) -> None:
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
