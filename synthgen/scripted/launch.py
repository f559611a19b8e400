"""Start and stop the scripted server: in a background thread, in a subprocess, or in the foreground.

    handle = start_scripted_server(EchoResponder(), error_rate=0.1)   # thread, any responder
    handle = start_scripted_server(mode="process", latency="lognormal", latency_s=0.3)  # own GIL
    handle.url      # "http://127.0.0.1:<port>/v1", what RoleConfig.base_url wants
    handle.stats()  # GET /stats
    handle.stop()

`serve()` blocks until Ctrl+C or SIGTERM; `scripted_server_command()` is the plain function the CLI
wires as `synthgen scripted-server`; `python -m synthgen.scripted` runs the same thing.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
import urllib.request
from dataclasses import asdict, dataclass, field
from typing import Callable

from synthgen.errors import UserError
from synthgen.scripted.faults import LATENCY_KINDS, REASONING_FIELDS, Faults
from synthgen.scripted.responder import RESPONDER_NAMES, Responder, make_responder
from synthgen.scripted.server import DEFAULT_MODELS, ScriptedHTTPServer

SCRIPTED_SERVER_HELP = (
    "Run the scripted OpenAI-compatible server. It is scripted, NOT a language model: answers come "
    "from a bank of problems the project wrote itself (or echo when no bank is installed), with "
    "seeded solve probabilities and optional injected faults (latency, 500/429 errors, hangs, "
    "truncated or garbage answers). Use it to run the pipeline and its tests without a GPU; "
    "point the teacher and student base_url at http://HOST:PORT/v1."
)


@dataclass
class ServerHandle:
    url: str  # base URL including /v1
    port: int
    host: str
    _stop: Callable[[], None] = field(repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def base_url(self) -> str:
        return self.url

    @property
    def root(self) -> str:
        return self.url[: -len("/v1")]

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.root}/stats", timeout=10) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._stop()

    def __enter__(self) -> "ServerHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def start_scripted_server(
    responder: Responder | str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    seed: int = 0,
    models: tuple[str, ...] = DEFAULT_MODELS,
    mode: str = "thread",
    **faults,
) -> ServerHandle:
    """Start a scripted server and return once it accepts connections. `faults` are Faults fields.

    `responder` is a Responder object or a name ("auto": the bank when installed, else echo;
    "bank"; "echo"); None means "auto". mode "thread" serves from this process; mode "process"
    runs `python -m synthgen.scripted` in a subprocess with its own interpreter lock (responder
    by name only), which is what a benchmark of the client wants.
    """
    fault_cfg = Faults(**faults)
    if mode == "process":
        if responder is not None and not isinstance(responder, str):
            raise ValueError("mode='process' takes a responder name, not an object; use mode='thread'")
        return _start_process(host, port, seed, models, fault_cfg, responder or "auto")
    if mode != "thread":
        raise ValueError(f"mode must be 'thread' or 'process', not {mode!r}")
    if responder is None or isinstance(responder, str):
        responder = make_responder(responder or "auto", seed)
    server = ScriptedHTTPServer((host, port), responder, seed, fault_cfg, models)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop() -> None:
        server.stop()
        thread.join(timeout=10)

    actual_port = server.server_address[1]
    return ServerHandle(_url(host, actual_port), actual_port, host, stop)


def _fault_flags(faults: Faults) -> list[str]:
    flags: list[str] = []
    for name in Faults.names():
        value = getattr(faults, name)
        if value == getattr(Faults(), name) or value is None:
            continue
        flag = "--" + name.replace("_", "-")
        flags += [flag] if isinstance(value, bool) else [flag, str(value)]
    return flags


def _start_process(
    host: str, port: int, seed: int, models: tuple[str, ...], faults: Faults, responder: str
) -> ServerHandle:
    cmd = [sys.executable, "-m", "synthgen.scripted", "--host", host, "--port", str(port), "--seed", str(seed)]
    cmd += ["--responder", responder]
    for model in models:
        cmd += ["--model", model]
    proc = subprocess.Popen(cmd + _fault_flags(faults), stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"scripted server subprocess did not start (exit {proc.wait()}): {line!r}")
    url = line.strip().rsplit(" ", 1)[-1]
    actual_port = int(url.rsplit(":", 1)[1].split("/", 1)[0])

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    return ServerHandle(url, actual_port, host, stop)


def serve(
    responder: Responder | str | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    seed: int = 0,
    models: tuple[str, ...] = DEFAULT_MODELS,
    **faults,
) -> None:
    """Serve in the foreground until Ctrl+C or SIGTERM, then close connections and return."""
    if responder is None or isinstance(responder, str):
        responder = make_responder(responder or "auto", seed)
    server = ScriptedHTTPServer((host, port), responder, seed, Faults(**faults), models)
    url = _url(host, server.server_address[1])
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM -> KeyboardInterrupt
    print(f"scripted server (not a model; responder {type(responder).__name__}) listening on {url}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def scripted_server_command(
    host: str = "127.0.0.1",
    port: int = 8000,
    seed: int = 0,
    model: list[str] | None = None,
    latency: str = "fixed",
    latency_s: float = 0.0,
    latency_sigma: float = 1.0,
    latency_max_s: float | None = None,
    error_rate: float = 0.0,
    rate_limit_rate: float = 0.0,
    hang_rate: float = 0.0,
    hang_s: float = 3600.0,
    truncation_rate: float = 0.0,
    garbage_rate: float = 0.0,
    reject_n: bool = False,
    reasoning_field: str = "reasoning",
    responder: str = "auto",
) -> None:
    """Run the scripted OpenAI-compatible server (scripted, NOT a model); see SCRIPTED_SERVER_HELP.

    Bad fault settings and an address that cannot be bound raise UserError (exit code 2)."""
    try:
        faults = Faults(
            latency=latency,
            latency_s=latency_s,
            latency_sigma=latency_sigma,
            latency_max_s=latency_max_s,
            error_rate=error_rate,
            rate_limit_rate=rate_limit_rate,
            hang_rate=hang_rate,
            hang_s=hang_s,
            truncation_rate=truncation_rate,
            garbage_rate=garbage_rate,
            reject_n=reject_n,
            reasoning_field=reasoning_field,
        )
        brain = make_responder(responder, seed)
    except ValueError as exc:
        raise UserError(f"scripted server: {exc}") from exc
    try:
        serve(brain, host=host, port=port, seed=seed, models=tuple(model or DEFAULT_MODELS), **asdict(faults))
    except OSError as exc:
        raise UserError(f"scripted server: cannot listen on {host}:{port}: {exc}") from exc


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m synthgen.scripted", description=SCRIPTED_SERVER_HELP)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model", action="append", help="model name(s) listed by /v1/models")
    p.add_argument("--latency", choices=LATENCY_KINDS, default="fixed")
    p.add_argument("--latency-s", type=float, default=0.0, help="fixed latency, or lognormal median (s)")
    p.add_argument("--latency-sigma", type=float, default=1.0, help="lognormal sigma of log-latency")
    p.add_argument("--latency-max-s", type=float, default=None, help="cap on one answer's latency")
    p.add_argument("--error-rate", type=float, default=0.0, help="share of requests answered 500")
    p.add_argument("--rate-limit-rate", type=float, default=0.0, help="share of requests answered 429")
    p.add_argument("--hang-rate", type=float, default=0.0, help="share of requests that never answer")
    p.add_argument("--hang-s", type=float, default=3600.0, help="how long a hung request stays silent")
    p.add_argument("--truncation-rate", type=float, default=0.0, help='share of answers cut, finish_reason "length"')
    p.add_argument("--garbage-rate", type=float, default=0.0, help="share of answers replaced by junk")
    p.add_argument("--reject-n", action="store_true", help="answer 400 to n > 1")
    p.add_argument("--reasoning-field", choices=REASONING_FIELDS, default="reasoning")
    p.add_argument("--responder", choices=RESPONDER_NAMES, default="auto",
                   help="auto: the problem bank when installed, else echo")
    return p


def main(argv: list[str] | None = None) -> int:
    args = vars(build_parser().parse_args(argv))
    try:
        scripted_server_command(**args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
