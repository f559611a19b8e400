"""Serving checkpoints: `synthgen serve CHECKPOINT`, and serving each checkpoint of an eval in turn.

    synthgen serve data/runs/demo/train/checkpoint-2 --port 8011      # then: synthgen eval --model-url http://127.0.0.1:8011/v1

`synthgen serve` is a small OpenAI-compatible chat server on transformers' `generate`, for CPU
runs, tests and small models only: one request generates at a time (no batching, paged attention
or streaming); serve real models with vLLM (`vllm serve CHECKPOINT`), which `synthgen eval
--serve-command` takes as well. It answers GET /v1/models and /health, and POST
/v1/chat/completions with `messages`, `n`, `temperature` (0 = greedy), `top_p`, `max_tokens` and
`seed` (the same seed, the same samples) in the usual shape (`finish_reason` "length" when
max_tokens ran out, `usage` token counts), prompting with the checkpoint's chat template; anything
else is a 400 or 404 with a JSON error. Each request leaves one access-log line on stderr.

`targets(settings)` are the models an eval covers: the one served at --model-url, or for each
`--checkpoints` folder its `checkpoint-N` folders (step N) and its own final model (its step from
train_summary.json or trainer_state.json). `served(target, settings, log_dir)` starts one with
`--serve-command` on a free local port, waits until it lists the model, and stops its whole
process group when its evaluation ends; its log is `<output>/<tag>/serve.log`.
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
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from synthgen.errors import UserError

MAX_BODY = 16 << 20
_CHECKPOINT = re.compile(r"checkpoint-(\d+)\Z")


class ChatModel:
    """A checkpoint and its tokenizer; `complete` is one chat request (serialised by a lock)."""

    def __init__(self, checkpoint: str, name: str, max_tokens_cap: int):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.name = name
        self.max_tokens_cap = max_tokens_cap
        self.tokenizer = AutoTokenizer.from_pretrained(checkpoint)
        self.model = AutoModelForCausalLM.from_pretrained(checkpoint)
        self.model.eval()
        self.lock = threading.Lock()
        eos = self.model.generation_config.eos_token_id
        eos = [*(eos if isinstance(eos, list) else [eos]), self.tokenizer.eos_token_id]
        self.eos = [t for t in dict.fromkeys(eos) if t is not None]

    def complete(self, body: dict) -> dict:
        from transformers import GenerationConfig

        messages = body["messages"]
        n = int(body.get("n") or 1)
        temperature = float(body.get("temperature", 1.0))
        max_new = min(int(body.get("max_tokens") or 256), self.max_tokens_cap)
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        enc = self.tokenizer(text, return_tensors="pt", add_special_tokens=False)
        config = GenerationConfig(
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            top_p=float(body.get("top_p") or 1.0),
            top_k=0,
            num_return_sequences=n,
            max_new_tokens=max_new,
            pad_token_id=self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos[0],
            eos_token_id=self.eos,
        )
        with self.lock, self.torch.no_grad():
            if body.get("seed") is not None:
                self.torch.manual_seed(int(body["seed"]))
            out = self.model.generate(**enc, generation_config=config)
        prompt_len = enc["input_ids"].shape[1]
        choices, produced = [], 0
        for i, seq in enumerate(out[:, prompt_len:].tolist()):
            end = next((t for t, tok in enumerate(seq) if tok in self.eos), None)
            body_ids = seq if end is None else seq[:end]
            produced += len(body_ids)
            finish = "length" if end is None and len(seq) >= max_new else "stop"
            content = self.tokenizer.decode(body_ids, skip_special_tokens=True)
            choices.append({"index": i, "message": {"role": "assistant", "content": content}, "finish_reason": finish})
        usage = {"prompt_tokens": prompt_len, "completion_tokens": produced, "total_tokens": prompt_len + produced}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": choices,
            "usage": usage,
        }


def make_handler(model: ChatModel):
    listing = {"object": "list", "data": [{"id": model.name, "object": "model", "owned_by": "synthgen"}]}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": status}})

        def do_GET(self):  # noqa: N802 (http.server's name)
            path = self.path.rstrip("/")
            if path in ("/v1/models", "/models"):
                self._send(200, listing)
            elif path == "/health":
                self._send(200, {"status": "ok"})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self):  # noqa: N802
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                return self._error(404, f"no route {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                return self._error(400, "a JSON body is required (at most 16 MiB)")
            try:
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    raise ValueError("'messages' must be a list")
                if body.get("model") not in (None, model.name):
                    return self._error(404, f"model {body.get('model')!r} is not served here (serving {model.name!r})")
                if not 1 <= int(body.get("n") or 1) <= 256:
                    raise ValueError("'n' must be in 1..256")
            except (ValueError, TypeError) as exc:
                return self._error(400, f"bad request: {exc}")
            try:
                self._send(200, model.complete(body))
            except Exception as exc:  # noqa: BLE001 (a generation error is the server's 500, the client retries)
                self._error(500, f"generation failed: {type(exc).__name__}: {exc}")

    return Handler


def run(settings) -> None:
    """`synthgen serve` with its settings (synthgen.evals.settings.ServeSettings); needs the train extra."""
    from synthgen.train.preflight import require_train_extra

    require_train_extra()
    checkpoint = settings.checkpoint
    if not (Path(checkpoint) / "config.json").is_file():
        raise UserError(f"not a model folder (no config.json): {checkpoint}")
    model = ChatModel(str(checkpoint), settings.served_model_name or str(checkpoint), settings.max_tokens_cap)
    host, port = settings.host, settings.port
    try:
        server = ThreadingHTTPServer((host, port), make_handler(model))
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    print(f"serve: {model.name} on http://{host}:{server.server_address[1]}/v1 (CPU/debug server)", flush=True)
    with server, contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


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
    if m := _CHECKPOINT.match(path.name):
        return int(m.group(1))
    for name in ("train_summary.json", "trainer_state.json"):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            value = json.loads((path / name).read_text(encoding="utf-8")).get("global_step")
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
    argv = serve_argv(settings.serve_command, target.checkpoint, port, settings.model.model)
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
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)  # our own child's group (start_new_session): its workers go too
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=wait)
