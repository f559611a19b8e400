"""`synthgen serve CHECKPOINT`: a small OpenAI-compatible chat server on transformers' `generate`.

    synthgen serve data/runs/demo/train/checkpoint-2 --port 8011      # then: synthgen eval --model-url http://127.0.0.1:8011/v1

For CPU runs, tests and small models only: one request generates at a time, with no batching
across requests, no paged attention and no streaming. Serve real models with vLLM
(`vllm serve CHECKPOINT`), which speaks the same API much faster; `synthgen eval
--serve-command` takes either.

API (the subset synthgen's client uses): GET /v1/models and /health; POST /v1/chat/completions
with `messages`, `n`, `temperature` (0 = greedy), `top_p`, `max_tokens`, `seed` (the same seed
gives the same samples), answered in the usual shape: choices with `message.content` and
`finish_reason` ("length" when max_tokens ran out, else "stop") and `usage` token counts. The
prompt is the checkpoint's chat template. Anything else is a 400 or 404 with a JSON error.
Each request leaves one access-log line on stderr (`"POST /v1/chat/completions HTTP/1.1" 200 -`).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MAX_BODY = 16 << 20


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
        eos = eos if isinstance(eos, list) else [eos] if eos is not None else []
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in eos:
            eos.append(self.tokenizer.eos_token_id)
        self.eos = eos

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
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_len,
                "completion_tokens": produced,
                "total_tokens": prompt_len + produced,
            },
        }


def make_handler(model: ChatModel):
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
                self._send(
                    200, {"object": "list", "data": [{"id": model.name, "object": "model", "owned_by": "synthgen"}]}
                )
            elif path == "/health":
                self._send(200, {"status": "ok"})
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self):  # noqa: N802
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._error(400, "a JSON body is required (at most 16 MiB)")
                return
            try:
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    raise ValueError("'messages' must be a list")
                if body.get("model") not in (None, model.name):
                    self._error(404, f"model {body.get('model')!r} is not served here (serving {model.name!r})")
                    return
                if not 1 <= int(body.get("n") or 1) <= 256:
                    raise ValueError("'n' must be in 1..256")
            except (ValueError, TypeError) as exc:
                self._error(400, f"bad request: {exc}")
                return
            try:
                self._send(200, model.complete(body))
            except Exception as exc:  # noqa: BLE001 (a generation error is the server's 500, the client retries)
                self._error(500, f"generation failed: {type(exc).__name__}: {exc}")

    return Handler


def run(settings) -> None:
    """`synthgen serve` with its settings (synthgen.envs.tool_settings.ServeSettings); needs the train extra."""
    from synthgen.train.preflight import require_train_extra

    require_train_extra()
    serve(settings.checkpoint, settings.host, settings.port, settings.served_model_name, settings.max_tokens_cap)


def serve(checkpoint: Path, host: str, port: int, name: str | None, max_tokens_cap: int) -> None:
    from synthgen.errors import UserError

    if not (Path(checkpoint) / "config.json").is_file():
        raise UserError(f"not a model folder (no config.json): {checkpoint}")
    model = ChatModel(str(checkpoint), name or str(checkpoint), max_tokens_cap)
    try:
        server = ThreadingHTTPServer((host, port), make_handler(model))
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    print(f"serve: {model.name} on http://{host}:{server.server_address[1]}/v1 (CPU/debug server)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
