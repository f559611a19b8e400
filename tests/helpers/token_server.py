"""A stand-in for vLLM's token-level `/v1/completions` (what TRL's async rollout loop calls), for CPU tests.

    with token_server(answer) as (url, requests):   # answer(prompt_ids) -> completion token ids
        ...                                # POST {url}/v1/completions {"prompt": [ids], ...}

It answers the way vLLM does with `return_token_ids` and `logprobs=0`: one choice holding
`token_ids` and `logprobs.token_logprobs` (a constant here). It is not a model: the test decides
the completion. Bound to 127.0.0.1 on a free port, stopped on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable


@contextlib.contextmanager
def token_server(answer: Callable[[list[int]], list[int]]):
    from aiohttp import web

    requests: list[dict] = []

    async def completions(request):
        body = await request.json()
        requests.append(body)
        ids = list(answer(list(body["prompt"])))[: int(body.get("max_tokens") or 1 << 30)]
        choice = {"token_ids": ids, "logprobs": {"token_logprobs": [-0.5] * len(ids)}, "finish_reason": "stop"}
        return web.json_response({"choices": [choice]})

    app = web.Application()
    app.router.add_post("/v1/completions", completions)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict = {}

    async def start():
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        holder["runner"], holder["port"] = runner, site._server.sockets[0].getsockname()[1]
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True)
    thread.start()
    if not started.wait(30):
        raise RuntimeError("the stand-in token server did not start")
    try:
        yield f"http://127.0.0.1:{holder['port']}", requests
    finally:
        asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
