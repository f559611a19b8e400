"""What the `synthgen slurm` commands do: render the sbatch scripts of a run and submit them.

Scripts and a copy of the config go to `<run_dir>/slurm/`; cluster settings come from the
config's `slurm` section (synthgen.slurm.settings), never from the templates. generate and
calibrate are arrays: task i runs shard i, only shards without a completion marker get a task,
and a task resumes from the rows its shard already has. Calibrate's student is reached like
generate's servers (render.server_mode): a per-task server serves `slurm.calibrate.model`, else
the config's `calibrate.student.model`.
"""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import typer

from synthgen.errors import UserError
from synthgen.settings.base import ConfigFile, resolve_settings
from synthgen.slurm import render, submit
from synthgen.slurm.render import RenderContext, SbatchJob
from synthgen.slurm.settings import SlurmSettings, WaitReadySettings
from synthgen.store.layout import StageDir


class Submission:
    """One `synthgen slurm ...` submission: the jobs to render from the settings and the config,
    then written (and printed for --dry-run) or submitted with their afterok dependencies."""

    def __init__(self, settings: SlurmSettings, config: ConfigFile, echo: Callable[..., None] = typer.echo):
        self.settings, self.config, self.echo = settings, config.data(), echo
        self.rctx = RenderContext.build(settings, config.path)

    def _section(self, name: str) -> dict:
        value = self.config.get(name) or {}
        return value if isinstance(value, dict) else {}

    def _config_urls(self, model, roles=("teacher", "student"), **given: str) -> list[str] | None:
        """The URLs of the roles a stage's config names, when the jobs start no server of their own."""
        if self.settings.vllm.shared_url or self.settings.vllm.start_server:
            return None
        stage = resolve_settings(model, self.config, given)
        return list(dict.fromkeys(getattr(stage, role).base_url for role in roles))

    def _pending(self, stage: str, num_shards: int | None, force: bool, dry_run: bool) -> tuple[int, list[int]]:
        """(n, the shards of `stage` without a marker); refuses while an earlier array still runs."""
        n = int(num_shards or self._section(stage).get("num_shards") or 1)
        pending = StageDir(self.rctx.run_dir, stage).pending(n)
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
        urls = self._config_urls(CalibrateSettings, ("student",), input_dir=str(folder))
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
        if output and not str(output).startswith(("s3:", "gs:")):  # a bucket stays as it is
            output = str(Path(output).absolute())
        data = str(Path(data).absolute()) if data else str(self.rctx.run_dir / "bin")
        given = {"--data": data, "--model": model, "--output": output, "--curriculum": curriculum}
        flags = {flag: value for flag, value in given.items() if value}
        served = model or self._section("train").get("model")
        return render.render_train(self.settings, self.rctx, flags, served, after)

    def finish(self, dry_run: bool, *found: SbatchJob | None, after: str | None = None) -> None:
        """Warn about jobs no node can hold; write the scripts; print them (dry run) or submit them.
        The first job waits for job `after` when one is given (`--after ID`)."""
        jobs = [job for job in found if job is not None]
        if not jobs:
            return
        jobs[0].after_job = after
        for warning in submit.capacity_warnings(jobs):
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
    sub = Submission(settings, config)
    sub.finish(dry_run, sub.generate_job(force, dry_run))


def curate(settings: SlurmSettings, config: ConfigFile, after: str | None, dry_run: bool) -> None:
    """Submit filter -> bin -> chain, each step waiting (afterok) for the one before."""
    sub = Submission(settings, config)
    if after is None and not dry_run:
        sub.check_generate_finished()
    sub.finish(dry_run, *sub.curate_jobs(after_generate=False), after=after)


def train(settings: SlurmSettings, config: ConfigFile, data, model, output, curriculum, after, dry_run: bool) -> None:
    """Submit GRPO training: one node runs `trl vllm-serve`, the others `accelerate launch`."""
    sub = Submission(settings, config)
    sub.finish(dry_run, sub.train_job(data, model, output, curriculum, None), after=after)


def pipeline(
    settings: SlurmSettings, config: ConfigFile, model, output, curriculum, force: bool, dry_run: bool
) -> None:
    """Submit generate (unfinished shards) -> filter -> bin -> chain -> train, chained with afterok."""
    sub = Submission(settings, config)
    gen = sub.generate_job(force, dry_run)
    steps = sub.curate_jobs(after_generate=gen is not None)
    sub.finish(dry_run, gen, *steps, sub.train_job(None, model, output, curriculum, "chain"))


def calibrate(settings: SlurmSettings, config: ConfigFile, input_dir, after, force: bool, dry_run: bool) -> None:
    """Submit the calibrate array (another student re-measures a problem set) for its unfinished shards."""
    sub = Submission(settings, config)
    sub.finish(dry_run, sub.calibrate_job(input_dir, force, dry_run), after=after)


def is_ready(url: str, api_key: str | None = None, timeout_s: float = 5.0) -> bool:
    base = url.rstrip("/")
    request = urllib.request.Request(f"{base}/models" if base.endswith("/v1") else url)
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def process_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("State:"):
                return line.split()[1] != "Z"
    except OSError:
        return False
    return True


def wait_ready(settings: WaitReadySettings) -> tuple[bool, str]:
    """Poll every URL until all answer (HTTP 200; a URL ending in `/v1` is probed at `{url}/models`,
    answered once the model is loaded); (True, message) when they do, (False, why) otherwise. With
    `pid`, stop as soon as that server process exits (it crashed while loading), not at the timeout."""
    s = settings
    start = time.monotonic()
    deadline = start + s.timeout_s
    waiting = list(dict.fromkeys(s.urls))
    while True:
        waiting = [u for u in waiting if not is_ready(u, s.api_key)]
        if not waiting:
            return True, f"ready after {time.monotonic() - start:.1f} s: {', '.join(s.urls)}"
        if s.pid is not None and not process_alive(s.pid):
            return False, f"server process {s.pid} exited before {waiting[0]} was ready"
        now = time.monotonic()
        if now >= deadline:
            return False, f"not ready after {s.timeout_s:g} s: {', '.join(waiting)}"
        time.sleep(max(0.05, min(s.interval_s, deadline - now)))


def wait_ready_command(settings: WaitReadySettings) -> int:
    """`synthgen slurm wait-ready`, which a job runs before it sends work to a server: 0 when every
    server answers, 1 on timeout or a dead server (see `wait_ready`)."""
    ok, message = wait_ready(settings)
    print(f"wait-ready: {message}", file=sys.stdout if ok else sys.stderr, flush=True)
    return 0 if ok else 1
