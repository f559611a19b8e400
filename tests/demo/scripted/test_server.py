"""The scripted server over real HTTP (stdlib http.client): shape, n, faults, seed, lifecycle."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from synthgen.demo.scripted import (
    EchoResponder,
    ScriptedReply,
    ScriptedServerSettings,
    make_responder,
    scripted_server_command,
    start_scripted_server,
)
from synthgen.demo.scripted.faults import derive_seed, draw_latency
from synthgen.demo.scripted.launch import scripted_settings
from synthgen.errors import UserError


def call(handle, method="POST", path="/v1/chat/completions", body=None, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=timeout)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, payload, {"Content-Type": "application/json"})
        response = conn.getresponse()
        raw = response.read()
        return response.status, dict(response.getheaders()), (json.loads(raw) if raw else None)
    finally:
        conn.close()


def chat(text="hello", **extra):
    return {"model": "openai/gpt-oss-120b", "messages": [{"role": "user", "content": text}], **extra}


def test_models_health_and_stats(serve):
    handle = serve(models=("a/model", "b/model"))
    assert handle.url.endswith("/v1")
    status, _, body = call(handle, "GET", "/v1/models")
    assert status == 200 and [m["id"] for m in body["data"]] == ["a/model", "b/model"]
    assert call(handle, "GET", "/health")[0] == 200
    assert call(handle, "GET", "/nope")[0] == 404
    assert handle.stats()["requests"] == 0


def test_response_has_the_vllm_gpt_oss_shape(serve):
    handle = serve()
    status, _, body = call(handle, body=chat("hi there", reasoning_effort="low"))
    assert status == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    [choice] = body["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    message = choice["message"]
    assert message["role"] == "assistant"
    assert message["content"].endswith("hi there")
    assert "effort low" in message["reasoning"] and "reasoning_content" not in message
    usage = body["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0


@pytest.mark.parametrize("field", ["reasoning_content", "both"])
def test_reasoning_field_flag(serve, field):
    message = call(serve(reasoning_field=field), body=chat())[2]["choices"][0]["message"]
    assert message["reasoning_content"]
    assert ("reasoning" in message) == (field == "both")


def test_n_gives_distinct_samples_and_reject_n_refuses(serve):
    _, _, body = call(serve(), body=chat(n=4))
    contents = [c["message"]["content"] for c in body["choices"]]
    assert [c["index"] for c in body["choices"]] == [0, 1, 2, 3] and len(set(contents)) == 4

    strict = serve(reject_n=True)
    status, _, err = call(strict, body=chat(n=2))
    assert status == 400 and "n > 1" in err["error"]["message"]
    assert call(strict, body=chat(n=1))[0] == 200


def test_bad_requests_are_400(serve):
    handle = serve()
    assert call(handle, body={"messages": []})[0] == 400
    assert call(handle, body=chat(n=0))[0] == 400
    assert call(handle, body=chat(stream=True))[0] == 400
    assert call(handle, body=[1, 2])[0] == 400


def test_same_seed_same_answers_regardless_of_arrival_order(serve):
    bodies = [chat(f"prompt {i}", n=2) for i in range(40)]

    def answers(handle, order):
        with ThreadPoolExecutor(16) as pool:
            got = list(pool.map(lambda i: (i, call(handle, body=bodies[i])[2]), order))
        return {i: [c["message"] for c in body["choices"]] for i, body in got}

    first = answers(serve(seed=7), range(40))
    second = answers(serve(seed=7), reversed(range(40)))
    other = answers(serve(seed=8), range(40))
    assert first == second
    assert first != other


def test_a_repeated_body_draws_fresh_faults_so_retries_can_succeed(serve):
    handle = serve(seed=3, error_rate=0.5)
    statuses = [call(handle, body=chat("same"))[0] for _ in range(30)]
    assert set(statuses) == {200, 500}
    again = serve(seed=3, error_rate=0.5)
    assert [call(again, body=chat("same"))[0] for _ in range(30)] == statuses


def test_error_and_rate_limit_faults(serve):
    status, _, body = call(serve(error_rate=1.0), body=chat())
    assert status == 500 and body["error"]["type"] == "InternalServerError"
    status, headers, _ = call(serve(rate_limit_rate=1.0), body=chat())
    assert status == 429 and headers.get("Retry-After") == "1"


def test_truncation_garbage_and_max_tokens(serve):
    clean = call(serve(), body=chat("x" * 400))[2]["choices"][0]
    cut = call(serve(truncation_rate=1.0), body=chat("x" * 400))[2]["choices"][0]
    assert cut["finish_reason"] == "length"
    assert len(cut["message"]["content"] or "") + len(cut["message"]["reasoning"] or "") < len(
        clean["message"]["content"]
    ) + len(clean["message"]["reasoning"])
    junk = call(serve(garbage_rate=1.0), body=chat("x" * 400))[2]["choices"][0]
    assert junk["finish_reason"] == "stop" and junk["message"]["content"] != clean["message"]["content"]
    short = call(serve(), body=chat("x" * 400, max_tokens=5))[2]
    assert short["choices"][0]["finish_reason"] == "length" and short["usage"]["completion_tokens"] <= 5


def test_hang_drops_the_connection_after_hang_s(serve):
    handle = serve(hang_rate=1.0, hang_s=0.3)
    start = time.monotonic()
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        call(handle, body=chat())
    assert time.monotonic() - start >= 0.3
    assert handle.stats()["hangs"] == 1


def test_a_hang_whose_client_left_logs_no_traceback(capfd):
    with start_scripted_server("echo", mode="process", hang_rate=1.0, hang_s=0.3) as handle:
        with pytest.raises(TimeoutError):  # the client gives up before hang_s
            call(handle, body=chat(), timeout=0.05)
        while handle.stats()["by_status"].get("hang") != 1:
            time.sleep(0.05)
    assert "Traceback" not in capfd.readouterr().err


def test_stop_returns_promptly_with_a_hung_request(serve):
    handle = start_scripted_server(EchoResponder(), hang_rate=1.0, hang_s=3600)
    worker = threading.Thread(target=lambda: pytest.raises(OSError, call, handle, body=chat()), daemon=True)
    worker.start()
    while handle.stats()["hangs"] == 0:
        time.sleep(0.01)
    start = time.monotonic()
    handle.stop()
    assert time.monotonic() - start < 5
    worker.join(5)
    assert not worker.is_alive()


def test_fixed_latency_and_lognormal_draws():
    settings = ScriptedServerSettings(latency="lognormal", latency_s=1.0, latency_sigma=1.0, latency_max_s=3.0)
    import random

    draws = [draw_latency(settings, random.Random(derive_seed(0, i))) for i in range(2000)]
    assert max(draws) == 3.0 and min(draws) > 0
    assert 0.85 < sorted(draws)[1000] < 1.15  # median
    assert draws == [draw_latency(settings, random.Random(derive_seed(0, i))) for i in range(2000)]
    assert draw_latency(ScriptedServerSettings(latency_s=0.25), random.Random(1)) == 0.25


def test_latency_grows_with_the_samples_a_request_asks_for(serve):
    handle = serve(latency_s=0.02, latency_per_choice=0.5)
    assert call(handle, body=chat("one"))[0] == 200
    assert abs(handle.stats()["latency_sum_s"] - 0.02) < 1e-9
    assert call(handle, body=chat("five", n=5))[0] == 200
    assert abs(handle.stats()["latency_sum_s"] - (0.02 + 0.02 * 3)) < 1e-9  # x (1 + 0.5 x (5 - 1))
    latencies = handle.stats()["latencies_s"]  # each request's, in the order they came (bench/llm.py replays them)
    assert len(latencies) == 2 and abs(latencies[0] - 0.02) < 1e-9 and abs(latencies[1] - 0.06) < 1e-9


def test_latency_is_served_concurrently(serve):
    handle = serve(latency_s=0.3)
    start = time.monotonic()
    with ThreadPoolExecutor(64) as pool:
        statuses = list(pool.map(lambda i: call(handle, body=chat(f"p{i}"))[0], range(64)))
    assert statuses == [200] * 64
    assert 0.3 <= time.monotonic() - start < 2.5
    stats = handle.stats()
    assert stats["peak_in_flight"] >= 32 and abs(stats["latency_sum_s"] - 64 * 0.3) < 1e-6


def test_bad_fault_settings_are_rejected(cli):
    with pytest.raises(ValueError):
        ScriptedServerSettings(error_rate=1.5)
    with pytest.raises(ValueError):
        ScriptedServerSettings(latency="uniform")
    with pytest.raises(ValueError):
        start_scripted_server(EchoResponder(), bad_index_rate=2)
    with pytest.raises(UserError, match="hang_rate"):
        scripted_server_command(port=0, hang_rate=-1)
    rc, _, err = cli("scripted-server", "--port", "0", "--truncated-body-rate", "1.5")
    assert rc == 2 and "truncated_body_rate" in err and len(err.strip().splitlines()) == 1


def test_a_port_in_use_says_so_and_localhost_is_one_port(serve, cli):
    handle = serve(host="localhost")  # one IPv4 socket: not ::1 and 127.0.0.1 on two ports
    assert handle.url == f"http://localhost:{handle.port}/v1" and call(handle, "GET", "/health")[0] == 200
    rc, _, err = cli("scripted-server", "--port", str(handle.port))
    assert rc == 2 and f"cannot listen on 127.0.0.1:{handle.port}: [Errno 98] Address already in use\n" in err


def test_responder_errors_become_500(serve):
    class Broken:
        def respond(self, messages, n, rng_seed, params):
            return [ScriptedReply("only one")]

    assert call(serve(Broken()), body=chat(n=2))[0] == 500


def test_a_responder_out_of_replies_is_a_500_not_a_hang(serve):
    class Exhausted:  # a test's scripted replies ran out: next() on an empty iterator
        def respond(self, messages, n, rng_seed, params):
            return [next(iter(()))]

    status, _, body = call(serve(Exhausted()), body=chat(), timeout=10)
    assert status == 500 and "StopIteration" in body["error"]["message"]


STUCK_RESPONDER_SCRIPT = """
import http.client, threading
from synthgen.demo.scripted import start_scripted_server
class Stuck:
    def respond(self, *args):
        threading.Event().wait()
handle = start_scripted_server(Stuck())
conn = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=0.5)
conn.request("POST", "/v1/chat/completions", '{"messages": [{"role": "user", "content": "x"}]}')
try:
    conn.getresponse()
except TimeoutError:
    print("timed out")
"""


def test_a_responder_stuck_forever_does_not_block_the_interpreter_exit():
    done = subprocess.run([sys.executable, "-c", STUCK_RESPONDER_SCRIPT], capture_output=True, text=True, timeout=30)
    assert done.stdout == "timed out\n", done.stderr


def test_responder_sees_params_and_a_per_request_seed(serve):
    seen = []

    class Recorder:
        def respond(self, messages, n, rng_seed, params):
            seen.append((rng_seed, params.get("reasoning_effort"), params.get("temperature")))
            return [ScriptedReply(f"r{i}") for i in range(n)]

    handle = serve(Recorder(), seed=5)
    call(handle, body=chat("a", reasoning_effort="high", temperature=0.7))
    call(handle, body=chat("b", reasoning_effort="high", temperature=0.7))
    call(handle, body=chat("a", reasoning_effort="high", temperature=0.7))
    assert [s[1:] for s in seen] == [("high", 0.7)] * 3
    assert seen[0][0] == seen[2][0] != seen[1][0]  # answers depend on the body alone


def test_auto_responder_is_the_bank():
    from synthgen.demo.scripted.bank import BankResponder

    responder = make_responder(scripted_settings(responder="auto", seed=11))
    assert isinstance(responder, BankResponder) and responder.seed == 11


def test_process_mode_and_cli_help():
    with start_scripted_server("echo", mode="process", seed=1, latency_s=0.01) as handle:
        status, _, body = call(handle, body=chat("from a subprocess"))
        assert status == 200 and body["choices"][0]["message"]["content"]
        assert handle.stats()["requests"] == 1
    with pytest.raises(ValueError):
        start_scripted_server(EchoResponder(), mode="process")
    out = subprocess.run(
        [sys.executable, "-m", "synthgen.demo.scripted", '{"port": "x"}'], capture_output=True, text=True
    )
    assert out.returncode == 2 and "port" in out.stderr


def test_a_bad_flag_value_is_one_line(cli):
    rc, _, err = cli("scripted-server", "--error-rate", "1.5")
    assert rc == 2 and "error_rate" in err and len(err.strip().splitlines()) == 1


def test_make_responder_by_name():
    assert isinstance(make_responder(scripted_settings(responder="echo")), EchoResponder)
    with pytest.raises(ValueError):
        scripted_settings(responder="oracle")
    with pytest.raises(UserError):
        scripted_server_command(port=0, responder="oracle")


def test_answers_report_scripted_as_their_model_while_models_lists_the_served_names(serve):
    handle = serve(models=("openai/gpt-oss-120b", "other/model"))
    assert [m["id"] for m in call(handle, "GET", "/v1/models")[2]["data"]] == ["openai/gpt-oss-120b", "other/model"]
    assert call(handle, body=chat())[2]["model"] == "scripted"
    assert call(serve(response_model="stand-in"), body=chat())[2]["model"] == "stand-in"


def raw_call(handle, body):
    conn = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=10)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_malformed_200_bodies(serve):
    status, raw = raw_call(serve(truncated_body_rate=1.0), chat(n=2))
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(raw)
    usage = json.loads(raw_call(serve(bad_usage_rate=1.0), chat())[1])["usage"]
    assert not isinstance(usage["prompt_tokens"], int) and not isinstance(usage["completion_tokens"], int)
    choices = json.loads(raw_call(serve(bad_index_rate=1.0), chat(n=2))[1])["choices"]
    assert [c["index"] for c in choices] == ["0", "1"]
    handle = serve(seed=2, bad_usage_rate=0.5)
    usages = [json.loads(raw_call(handle, chat("same"))[1])["usage"] for _ in range(20)]
    kinds = {isinstance(usage["prompt_tokens"], int) for usage in usages}
    assert kinds == {True, False}  # a retry of the same body can draw a well-formed answer
    assert handle.stats()["by_status"].keys() == {"200", "200-malformed"}


def test_one_settings_model_drives_thread_process_and_cli(serve, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # Rich shortens flag names to fit a narrow terminal
    settings = ScriptedServerSettings(port=0, seed=4, models=("a/m", "b/m"), response_model="x", reject_n=True)
    with start_scripted_server("echo", settings, mode="process") as proc:
        assert [m["id"] for m in call(proc, "GET", "/v1/models")[2]["data"]] == ["a/m", "b/m"]
        assert call(proc, body=chat(n=2))[0] == 400
        from_process = call(proc, body=chat("p"))[2]
    from_thread = call(serve(EchoResponder(), settings=settings), body=chat("p"))[2]
    assert from_process["choices"] == from_thread["choices"] and from_process["model"] == "x"
    rc, out, _ = cli("scripted-server", "--help")
    for name in ScriptedServerSettings.model_fields:  # every field is a flag, with its description
        flag = "--" + ("model" if name == "models" else name.replace("_", "-"))
        assert flag in out, flag
    assert rc == 0 and "choice index is a string" in " ".join(out.split())
