"""Before any work: is each role's server up, does it serve the role's model, and what does it do?

`check_server` asks GET {base_url}/models once, or for up to `wait_s` seconds (jobs that start their
own server); a wrong URL, a server that never comes up, or a model it does not serve is a
`ServerNotReady` (a UserError, exit 2) naming what the server does serve. `probe_server` then
learns, with requests of at most 8 completion tokens, what real OpenAI-compatible servers bend: is
`n` honoured (transformers serve, llama.cpp and Ollama answer one choice), is reasoning returned for
`reasoning_effort`, does a `seed` survive, what context length (`max_model_len`) /models states.
What cannot work is a ServerConfigError naming every flag to change. `client.probe_settings` runs
it all for `synthgen config show COMMAND --probe`, from synchronous code.

The seed: vLLM's CPU engine dies on a seeded request only once its prompt needs more than one
prefill chunk (2048 tokens on CPU: its sampler rewinds the request's generator by an offset, which
a CPU generator does not have). So a server that says it is vLLM (`owned_by` in /models) also gets
one seeded request of about SEED_PROMPT_TOKENS prompt tokens, the shape of every real teacher prompt.
"""

from __future__ import annotations

import asyncio
import time

import openai

from synthgen.errors import UserError
from synthgen.llm.errors import ATTEMPT_ERRORS, BadResponse, ServerConfigError, describe, error_kind, is_final_refusal
from synthgen.llm.http import get_json, post_chat
from synthgen.llm.settings import RoleSettings

POLL_S = 2.0
ASK_TIMEOUT_S = 10.0


class ServerNotReady(UserError):
    """The server did not answer /models in time, or does not serve the configured model."""


def _entries(page: object) -> list[dict] | None:
    """The model entries of a /models answer; None if it is not a model list."""
    data = page.get("data") if isinstance(page, dict) else None
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else None


async def check_server(client: openai.AsyncOpenAI, role: str, settings: RoleSettings, wait_s: float = 0) -> object:
    """Return the /models answer once `settings.base_url` lists `settings.model`; ServerNotReady otherwise."""
    url = settings.base_url.rstrip("/")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            page = await get_json(client, "/models", min(ASK_TIMEOUT_S, max(1.0, wait_s)))
        except ATTEMPT_ERRORS as exc:
            # Waited through: what a server still starting up gives (refused, dropped, 404, 5xx, ...).
            status = exc.status_code if isinstance(exc, openai.APIStatusError) else None  # None: no HTTP answer
            waits = status is None or status in (404, 408, 425, 429) or status >= 500
            if not waits or time.monotonic() + POLL_S > deadline:
                raise ServerNotReady(_unreachable(role, url, exc, wait_s)) from None
            await asyncio.sleep(POLL_S)
            continue
        entries = _entries(page)
        if entries is None:
            raise ServerNotReady(
                f"{role}: {url}/models did not answer with a model list; is it an OpenAI-compatible server?"
            )
        served = [str(m["id"]) for m in entries if m.get("id") is not None]
        if settings.model not in served:
            listed = ", ".join(repr(m) for m in served) or "no model"
            raise ServerNotReady(f"{role}: {url} serves {listed}, not the configured model {settings.model!r}")
        return page


def _unreachable(role: str, url: str, exc: BaseException, wait_s: float) -> str:
    waited = f" within {wait_s:g} s" if wait_s > 0 else ""
    if isinstance(exc, openai.APIStatusError):
        hint = f"; did you mean {url}/v1?" if exc.status_code == 404 and not url.endswith("/v1") else ""
        return f"{role}: {url}/models answered HTTP {exc.status_code}{waited} ({describe(exc)}){hint}"
    if error_kind(exc) == "connection_refused":
        return f"{role}: nothing answered at {url}{waited} (connection refused); is the server running?"
    return f"{role}: nothing answered at {url}/models{waited} ({describe(exc)})"


PROBE_MESSAGES = [{"role": "user", "content": "Say OK."}]
PROBE_TIMEOUT_S = 120.0


# Over vLLM's CPU prefill chunk (2048 tokens by default), under every context a model worth a
# run has; each word of the filler is about one token in the BPE vocabularies of chat models.
SEED_PROMPT_TOKENS = 3000


def _entry(page: object, model: str) -> dict:
    return next((m for m in _entries(page) or [] if m.get("id") == model), {})


def context_length(page: object, model: str) -> int | None:
    """`max_model_len` of `model` in a /models answer (vLLM states it), else None."""
    value = _entry(page, model).get("max_model_len")
    return value if type(value) is int and value > 0 else None


def fit_context(roles: list[tuple[str, RoleSettings]], pages: dict, fit: bool, notify) -> None:
    """Roles (label, settings) whose max_tokens is not below the context their server states: with
    `fit`, one the user did not set is fitted to half of it (a teacher prompt is thousands of
    tokens), in place; the others are one ServerConfigError naming every flag to change, raised
    before any fit is said (a run that stops says one line)."""
    over, fits, seen = [], [], set()
    for label, settings in roles:
        context = context_length(pages[(settings.base_url, settings.model)], settings.model)
        if context is None or settings.max_tokens < context or id(settings) in seen:
            continue
        seen.add(id(settings))
        fitted = fit and "max_tokens" not in settings.model_fields_set
        (fits if fitted else over).append((label, settings, context))
    if over:
        said = "; ".join(
            f"{label}: --{label}-max-tokens {settings.max_tokens} is not below the server's context length "
            f"({context} tokens, stated by {settings.base_url.rstrip('/')}/models)"
            for label, settings, context in over
        )
        fix = " ".join(f"--{label}-max-tokens {max(1, context // 2)}" for label, _, context in over)
        raise ServerConfigError(f"{said}; pass e.g. {fix}")
    for label, settings, context in fits:
        was, settings.max_tokens = settings.max_tokens, max(1, context // 2)
        notify(
            f"{label}: max_tokens fitted to {settings.max_tokens}: the default {was} is not below the "
            f"context length of {settings.base_url.rstrip('/')} ({context} tokens); half is left to the "
            f"prompt (--{label}-max-tokens sets it)"
        )


async def probe_server(
    client, label: str, settings: RoleSettings, page, samples: int, seed_flags: str, seed_done: dict
) -> tuple[str | None, str]:
    """Probe one role's server cheaply, asking for n = `samples` (1: n is not probed): (what the server
    did with n: "honoured" | "ignored" | "refused" | None, the line to say). ServerConfigError for seeds
    that fail; `seed_flags` names the flags that turn seeds off for every role on this server;
    `seed_done` (endpoint -> finding) keeps one server from being seed-probed twice."""
    context = context_length(page, settings.model)
    base = {"model": settings.model, "messages": PROBE_MESSAGES, "max_tokens": 8, "temperature": settings.temperature}
    if settings.reasoning_effort is not None:
        base["reasoning_effort"] = settings.reasoning_effort
    answer, n, said, trouble = None, None, [], []  # trouble: probe requests that failed (the run retries)
    if samples > 1:
        try:
            answer = await _ask(client, {**base, "n": 2})
            n = "honoured" if len(answer["choices"]) >= 2 else "ignored"
        except ATTEMPT_ERRORS as exc:
            if is_final_refusal(exc):
                n = "refused"
            else:
                trouble.append(describe(exc))
    if n == "honoured":
        said.append(f"n honoured ({samples} samples in one request)")
    elif n is not None:
        how = "ignores n (1 choice for n=2)" if n == "ignored" else "refuses n > 1"
        said.append(f"server {how}; sending {samples} requests per problem")
    if answer is None and not trouble:
        try:
            answer = await _ask(client, base)
        except ATTEMPT_ERRORS as exc:
            trouble.append(describe(exc))
    if answer is not None and settings.reasoning_effort is not None:
        said_back = [c.get("message") for c in answer["choices"] if isinstance(c, dict)]
        returned = any(isinstance(m, dict) and (m.get("reasoning") or m.get("reasoning_content")) for m in said_back)
        said.append("reasoning returned" if returned else "reasoning_effort not honoured (no reasoning returned)")
    url, seed = settings.base_url.rstrip("/"), "not sent"
    if settings.send_seed:  # only a server that answered without a seed can be judged on one
        endpoint = (url, settings.model)
        if answer is None:
            seed = "not probed"
        elif endpoint in seed_done:
            seed = seed_done[endpoint]
        else:
            long_prompt = None
            if _entry(page, settings.model).get("owned_by") == "vllm":  # (its hardware plugins say so too)
                room = (context or SEED_PROMPT_TOKENS * 2) - 64
                long_prompt = min(SEED_PROMPT_TOKENS, room) if room > 0 else None
            seed = seed_done[endpoint] = await _probe_seed(client, label, base, long_prompt, seed_flags)
    said += [f"seed {seed}", f"context {context} tokens" if context else "context length not stated"]
    said += [f"probe failed: {t}" for t in trouble]
    return n, f"{label}: {url} {settings.model!r}: " + "; ".join(said)


async def _ask(client, body: dict) -> dict:
    answer = await post_chat(client, body, PROBE_TIMEOUT_S)
    if not isinstance(answer, dict) or not isinstance(answer.get("choices"), list) or not answer["choices"]:
        raise BadResponse(f"not a chat completion: {str(answer)[:100]!r}")
    return answer


async def _probe_seed(client, label: str, base: dict, long_prompt: int | None, flags: str) -> str:
    """ "accepted", or ServerConfigError when the server refuses seeds or stops answering after one
    (a short seeded request, then for vLLM one whose prompt needs more than one prefill chunk)."""
    try:
        await _ask(client, {**base, "max_tokens": 1, "seed": 1})
    except ATTEMPT_ERRORS as exc:
        failed = describe(exc)
        if is_final_refusal(exc):
            raise ServerConfigError(
                f"{label}: the server refuses requests with a seed ({failed}); pass {flags}"
            ) from None
        return await _still_answering(client, label, base, failed, flags, "a request with a seed")
    if long_prompt is None:
        return "accepted"
    try:
        # A prompt that shares no prefix with the other probes (vLLM caches prefixes, and a cached
        # prefix is not prefilled again: the chunking would not happen); a word is about a token.
        words = [{"role": "user", "content": "Count the words: " + "ok " * long_prompt + "\nAnswer with one number."}]
        await _ask(client, {**base, "messages": words, "max_tokens": 1, "seed": 2})
        return f"accepted (also with a {long_prompt}-token prompt)"
    except ATTEMPT_ERRORS as exc:
        failed = describe(exc)
        if is_final_refusal(exc):  # too long for this server, say: the long case stays untested
            return f"accepted (a {long_prompt}-token prompt with a seed was refused: {failed[:120]})"
        return await _still_answering(
            client, label, base, failed, flags, f"a request with a seed and a {long_prompt}-token prompt"
        )


async def _still_answering(client, label: str, base: dict, failed: str, flags: str, what: str) -> str:
    """After `what` failed with `failed`: a note if the server still answers without a seed (it
    answered a moment ago), else ServerConfigError: the seed killed it."""
    for _ in range(3):
        try:
            await _ask(client, {**base, "max_tokens": 1})
            return f"failed once ({failed}); the run retries"
        except ATTEMPT_ERRORS:
            await asyncio.sleep(0.5)
    raise ServerConfigError(
        f"{label}: the server stopped answering after {what} ({failed}; vLLM's CPU engine dies on a seeded "
        f"request whose prompt needs more than one prefill chunk); restart it and pass {flags}"
    )
