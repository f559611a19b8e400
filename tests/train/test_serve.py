"""`synthgen serve`'s chat server on the tiny model: the API subset the client uses, seeds, errors."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

pytestmark = pytest.mark.train


@pytest.fixture(scope="module")
def server(tiny_model):
    from synthgen.evals.serve import ChatModel, make_handler

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(ChatModel(str(tiny_model), "tiny", 64)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def call(url: str, body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_models_samples_and_seeds(server):
    status, models = call(f"{server}/models")
    assert status == 200 and [m["id"] for m in models["data"]] == ["tiny"]
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "hi"}],
        "n": 3,
        "max_tokens": 5,
        "temperature": 1.0,
        "seed": 7,
    }
    status, first = call(f"{server}/chat/completions", body)
    assert status == 200 and [c["index"] for c in first["choices"]] == [0, 1, 2]
    assert all(c["finish_reason"] in ("stop", "length") for c in first["choices"])
    assert first["usage"]["prompt_tokens"] > 0 and first["model"] == "tiny"
    _, again = call(f"{server}/chat/completions", body)
    assert [c["message"]["content"] for c in again["choices"]] == [c["message"]["content"] for c in first["choices"]]


async def test_the_project_client_talks_to_it(server):
    from synthgen.evals.settings import EvalModelSettings
    from synthgen.llm.client import LLMClient

    role = EvalModelSettings(base_url=server, model="tiny", max_tokens=4)
    async with LLMClient(role, role) as llm:
        await llm.preflight()
        answers = await llm.complete("student", [{"role": "user", "content": "hello"}], n=2, key="k")
    assert [a.status for a in answers] in (
        ["ok", "ok"],
        ["truncated", "truncated"],
        ["ok", "truncated"],
        ["truncated", "ok"],
    )


def test_bad_requests_are_json_errors(server):
    status, error = call(f"{server}/chat/completions", {"model": "other", "messages": []})
    assert status == 404 and "not served here" in error["error"]["message"]
    status, error = call(f"{server}/chat/completions", {"messages": "hi"})
    assert status == 400 and "messages" in error["error"]["message"]
    assert call(f"{server}/nothing")[0] == 404


def test_serve_refuses_a_folder_without_a_model(cli, tmp_path):
    rc, _, err = cli("serve", tmp_path, "--port", "0")
    assert rc == 2 and "no config.json" in err
