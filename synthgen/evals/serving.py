"""Which models an eval covers, and serving each checkpoint in turn behind an OpenAI-compatible server.

    for target in targets(settings):            # the served model, or every checkpoint given
        with served(target, settings) as model:  # EvalModelSettings pointing at the running server
            ...

`--checkpoints` takes checkpoint folders or training output folders: each `checkpoint-N` inside
(step N) and the folder's own final model (its step from train_summary.json or
trainer_state.json). Each is started with `--serve-command` (default `synthgen serve`, the small
CPU server; `vllm serve ...` on GPUs) on a free local port, waited for until it lists the model,
and stopped (its whole process group) when its evaluation ends. Its log is `<output>/<tag>/serve.log`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from synthgen.errors import UserError

_CHECKPOINT = re.compile(r"checkpoint-(\d+)\Z")


@dataclass(frozen=True)
class Target:
    tag: str  # the folder name under the eval output
    step: int | None  # training step of a checkpoint
    checkpoint: Path | None  # None: the model already served at --model-url


def targets(settings) -> list[Target]:
    if not settings.checkpoints:
        name = settings.tag or re.sub(r"[^A-Za-z0-9._-]+", "_", settings.model.model).strip("_") or "model"
        return [Target(name, None, None)]
    found: dict[str, Target] = {}
    for entry in settings.checkpoints:
        for target in _checkpoints_in(Path(entry)):
            found.setdefault(target.tag, target)
    return sorted(found.values(), key=lambda t: (t.step is None, t.step or 0, t.tag))


def _checkpoints_in(path: Path) -> list[Target]:
    if not path.is_dir():
        raise UserError(f"--checkpoints: {path} is not a folder")
    inner = sorted((int(m.group(1)), p) for p in path.iterdir() if (m := _CHECKPOINT.match(p.name)) and p.is_dir())
    out = [Target(f"step-{step:06d}", step, p) for step, p in inner]
    if (path / "config.json").is_file():
        step = _final_step(path)
        if step is None or all(t.step != step for t in out):
            out.append(Target(f"step-{step:06d}" if step is not None else path.name, step, path))
    if not out:
        raise UserError(f"--checkpoints: no model in {path} (no config.json and no checkpoint-N folders)")
    return out


def _final_step(path: Path) -> int | None:
    m = _CHECKPOINT.match(path.name)
    if m:
        return int(m.group(1))
    for name, key in (("train_summary.json", "global_step"), ("trainer_state.json", "global_step")):
        try:
            value = json.loads((path / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int):
            return value
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_argv(template: str, checkpoint: Path, port: int, model: str) -> list[str]:
    try:
        parts = shlex.split(template)
    except ValueError as exc:
        raise UserError(f"--serve-command is not a valid command line: {exc}") from None
    argv = [p.format(checkpoint=str(checkpoint), port=port, model=model) for p in parts]
    if argv and argv[0] == "synthgen":  # the same installation as this process, PATH or not
        argv = [sys.executable, "-m", "synthgen", *argv[1:]]
    return argv


@contextlib.contextmanager
def served(target: Target, settings, log_dir: Path) -> Iterator:
    """The model settings to sample `target` with; a checkpoint is served for the duration."""
    if target.checkpoint is None:
        yield settings.model
        return
    port = free_port()
    model = settings.model.model
    argv = serve_argv(settings.serve_command, target.checkpoint, port, model)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "serve.log"
    with open(log_path, "ab") as log:
        try:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            raise UserError(f"cannot start the server for {target.checkpoint} ({argv[0]}): {exc.strerror}") from None
    try:
        role = settings.model.model_copy(update={"base_url": f"http://127.0.0.1:{port}/v1"})
        _wait_ready(proc, role, settings, target, log_path)
        yield role
    finally:
        _stop(proc)


def _wait_ready(proc: subprocess.Popen, role, settings, target: Target, log_path: Path) -> None:
    from synthgen.llm.client import LLMClient, ServerNotReady

    deadline = time.monotonic() + settings.serve_wait_s
    while True:
        if proc.poll() is not None:
            tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise UserError(
                f"the server for {target.checkpoint} exited ({proc.returncode}): {tail[0][:300]} (log: {log_path})"
            )

        async def ask() -> None:
            quiet = settings.llm.model_copy(update={"probe": False})  # polled until up: the run probes once
            async with LLMClient(role, role, quiet, labels={"teacher": "model", "student": "model"}) as llm:
                await llm.preflight(0)

        try:
            asyncio.run(ask())
            return
        except ServerNotReady as exc:
            if time.monotonic() > deadline:
                raise UserError(
                    f"the server for {target.checkpoint} did not come up in {settings.serve_wait_s:g} s: "
                    f"{exc} (log: {log_path})"
                ) from None
        time.sleep(0.5)


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)  # our own child's group (start_new_session): its workers go too
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
