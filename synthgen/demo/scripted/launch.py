"""Start and stop the scripted server: in a background thread, in a subprocess, or in the foreground.

    handle = start_scripted_server(EchoResponder(), error_rate=0.1)   # thread, any responder
    handle = start_scripted_server(mode="process", latency="lognormal", latency_s=0.3)  # own GIL
    handle.url      # "http://127.0.0.1:<port>/v1", what a role's base_url wants
    handle.stats()  # GET /stats
    handle.stop()

Keyword arguments are fields of ScriptedServerSettings (synthgen.demo.scripted.settings), the one
declaration of every knob; a process-mode server gets the settings as JSON on its command line.
`serve()` blocks until Ctrl+C or SIGTERM; `scripted_server_command()` is what the CLI calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from synthgen.demo.scripted.responder import EchoResponder, Responder
from synthgen.demo.scripted.server import ScriptedServer
from synthgen.demo.scripted.settings import ScriptedServerSettings
from synthgen.errors import UserError
from synthgen.settings.base import describe_validation_error

SCRIPTED_SERVER_HELP = (
    "Run the scripted OpenAI-compatible server. It is scripted, NOT a language model: answers come "
    "from a bank of problems the project wrote itself (or echo, with --responder echo), with "
    "seeded solve probabilities and optional injected faults (latency, 500/429 errors, hangs, "
    "truncated, garbage or malformed answers). Use it to run the pipeline and its tests without a "
    "GPU; point the teacher and student base_url at http://HOST:PORT/v1."
)


@dataclass
class ServerHandle(contextlib.AbstractContextManager):
    url: str  # base URL including /v1
    port: int
    _stop: Callable[[], None] = field(repr=False)
    _stopped: bool = field(default=False, repr=False)

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.url.removesuffix('/v1')}/stats", timeout=10) as response:
            return json.loads(response.read())

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._stop()

    def __exit__(self, *exc) -> None:
        self.stop()


def scripted_settings(settings: ScriptedServerSettings | None = None, **fields: Any) -> ScriptedServerSettings:
    """`settings` (default: the defaults) with `fields` replaced; ValueError on a bad value."""
    base = settings.model_dump() if settings is not None else {}
    return ScriptedServerSettings.model_validate({**base, **fields})  # ValidationError is a ValueError


def start_scripted_server(
    responder: Responder | str | None = None,
    settings: ScriptedServerSettings | None = None,
    *,
    mode: str = "thread",
    **fields: Any,
) -> ServerHandle:
    """Start a scripted server and return once it accepts connections.

    `fields` are ScriptedServerSettings fields overriding `settings`; the port defaults to 0 (a
    free one) here. `responder` is a Responder object or a name ("auto" or "bank": the problem
    bank; "echo"); None means the settings' responder. mode "thread" serves from
    this process; mode "process" runs `python -m synthgen.demo.scripted` in a subprocess with its own
    interpreter lock (responder by name only), which is what a benchmark of the client wants.
    """
    if settings is None:
        fields.setdefault("port", 0)
    if isinstance(responder, str):
        fields["responder"], responder = responder, None
    config = scripted_settings(settings, **fields)
    if mode == "process":
        if responder is not None:
            raise ValueError("mode='process' takes a responder name, not an object; use mode='thread'")
        return _start_process(config)
    if mode != "thread":
        raise ValueError(f"mode must be 'thread' or 'process', not {mode!r}")
    server = ScriptedServer(responder or make_responder(config), config)  # built first: a failure leaves no thread
    loop = asyncio.new_event_loop()  # its own, in its own thread: the caller may be running one
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def stop(runner=None) -> None:
        if runner is not None:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()

    try:
        runner, port = asyncio.run_coroutine_threadsafe(server.start(), loop).result()
    except BaseException:
        stop()
        raise

    host = f"[{config.host}]" if ":" in config.host else config.host  # an IPv6 address in a URL
    return ServerHandle(f"http://{host}:{port}/v1", port, lambda: stop(runner))


def make_responder(config: ScriptedServerSettings) -> Responder:
    """The settings' responder: "echo", or "auto" and "bank" (the problem bank, whose student may follow a curve)."""
    if config.responder == "echo":
        return EchoResponder()
    from synthgen.demo.scripted.bank import BankResponder  # loaded when served: the CLI imports this module

    return BankResponder(config.seed, config.learning_curve, config.student_strength)


def _start_process(settings: ScriptedServerSettings) -> ServerHandle:
    cmd = [sys.executable, "-m", "synthgen.demo.scripted", settings.model_dump_json()]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"scripted server subprocess did not start (exit {proc.wait()}): {line!r}")
    url = line.strip().rsplit(" ", 1)[-1]

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    return ServerHandle(url, int(url.rsplit(":", 1)[1].split("/", 1)[0]), stop)


def serve(settings: ScriptedServerSettings) -> None:
    """Serve in the foreground until Ctrl+C or SIGTERM, then close connections and return."""
    responder = make_responder(settings)
    try:
        handle = start_scripted_server(responder, settings)
    except OSError as exc:  # at start-up only: a stop's TimeoutError is an OSError too
        raise UserError(f"scripted server: cannot listen on {settings.host}:{settings.port}: {exc}") from exc
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM -> KeyboardInterrupt
    print(f"scripted server (not a model; responder {type(responder).__name__}) listening on {handle.url}", flush=True)
    with handle, contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


def scripted_server_command(settings: ScriptedServerSettings | None = None, **fields: Any) -> None:
    """Run the scripted OpenAI-compatible server (scripted, NOT a model); see SCRIPTED_SERVER_HELP.

    Bad settings and an address that cannot be bound raise UserError (exit code 2)."""
    try:
        config = scripted_settings(settings, **fields)
    except ValidationError as exc:
        raise UserError(f"scripted server: {describe_validation_error(exc)}") from None
    serve(config)
