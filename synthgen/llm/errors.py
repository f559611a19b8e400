"""What went wrong with an LLM request, by kind, and whether (and how long) to try again.

Kinds, as in `Completion.error` ("<kind>: <message>") and the usage counters: connection_refused
(nothing listens: the server is down or the URL wrong), connection (any other transport failure),
timeout (longer than the role's timeout_s, end to end), http_<status>, and bad_response (a 200
that is not a usable chat completion: malformed JSON, bad token counts, choices or message).

Transport failures, timeouts, bad responses, 408/409/425/429 and 5xx are retried, other 4xx are
final, with capped exponential backoff and jitter until `max_attempts` tries or `max_outage_s`
since the first send, whichever comes first: an outage of minutes is ridden out, then reported.
"""

from __future__ import annotations

import re

import openai
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, stop_after_delay, wait_exponential_jitter

from synthgen.errors import UserError
from synthgen.llm.settings import LLMSettings

_RETRY_STATUS = {408, 409, 425, 429}


class ServerConfigError(UserError):
    """The server refuses every request these settings make (exit 2, naming the flag to change)."""


class BadResponse(Exception):
    """A 200 answer that is not a usable chat completion (retried like a 5xx)."""


class RequestTimeout(Exception):
    """The whole request (connect, send, wait, read) took longer than the role's timeout_s."""


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from, outermost first."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def error_kind(exc: BaseException) -> str:
    """The kind of a failed attempt (see the module docstring)."""
    chain = _chain(exc)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection_refused"  # (aiohttp reports a refused connect as a ConnectTimeout)
    if isinstance(exc, RequestTimeout):
        return "timeout"
    if isinstance(exc, openai.APIStatusError):
        return f"http_{exc.status_code}"
    if isinstance(exc, (BadResponse, openai.APIResponseValidationError, ValueError, TypeError)):
        return "bad_response"
    if isinstance(exc, openai.APITimeoutError):
        # A real timeout, unless a transport error that is not one sits underneath.
        transport = any(isinstance(e, OSError) and not isinstance(e, TimeoutError) for e in chain[1:])
        return "connection" if transport else "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    return type(exc).__name__


# What one attempt may raise that is the server's or the network's fault, not the client's:
# ValueError and TypeError come from decoding a malformed body (json.JSONDecodeError included).
ATTEMPT_ERRORS = (openai.APIError, BadResponse, RequestTimeout, ValueError, TypeError)


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    return isinstance(exc, ATTEMPT_ERRORS)


def is_final_refusal(exc: BaseException) -> bool:
    """400/422: the server refused the request itself (for n > 1: maybe n is not supported)."""
    return isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError))


_CONTEXT = re.compile(r"maximum context length is (\d+)|max_model_len[= ]+(\d+)|context length (?:is|of) (\d+)", re.I)
_TOO_LONG = re.compile(r"context length|max_model_len|too long|too many tokens|input tokens", re.I)


def refusal_kind(exc: BaseException, max_tokens: int) -> str | None:
    """What a final 400/422 (or a 404 naming the model) says: "config" when no request with these
    settings can be answered (max_tokens not below the stated context; a model not served),
    "prompt_too_long" when this prompt plus max_tokens is over the context, else None."""
    if isinstance(exc, openai.NotFoundError):
        return "config" if "model" in _first_line(exc).lower() else None
    if not is_final_refusal(exc):
        return None
    text = server_message(exc)
    if not _TOO_LONG.search(text):
        return None
    found = _CONTEXT.search(text)
    context = next((int(g) for g in found.groups() if g), None) if found else None
    return "config" if context is not None and max_tokens >= context else "prompt_too_long"


def server_message(exc: BaseException) -> str:
    """The server's own message of an HTTP error (the body's error.message), else its text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(message, str):
            return " ".join(message.split())[:300]
    return _first_line(exc)


def retry_policy(llm: LLMSettings) -> AsyncRetrying:
    """Tenacity's loop for one request: bounded by tries and by time, backoff capped and jittered."""
    return AsyncRetrying(
        stop=stop_after_attempt(llm.max_attempts) | stop_after_delay(llm.max_outage_s),
        wait=wait_exponential_jitter(
            initial=llm.backoff_initial_s, max=llm.backoff_max_s, jitter=llm.backoff_initial_s
        ),
        retry=retry_if_exception(is_retryable),
        reraise=True,
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def describe(exc: BaseException) -> str:
    """ "<kind>: <message>" for Completion.error; the root cause is named when it says more."""
    if isinstance(exc, openai.APIStatusError):  # the server's own message, not the client's wrapping
        return f"{error_kind(exc)}: {server_message(exc)}"
    message, root = _first_line(exc), _chain(exc)[-1]
    if root is not exc and _first_line(root) not in message:
        message = f"{message} ({_first_line(root)})"
    return f"{error_kind(exc)}: {message}"


def config_line(label: str, settings, exc: BaseException) -> str:
    """The line for a `refusal_kind` "config": a model the server does not serve, or a max_tokens it never accepts."""
    message = server_message(exc)
    if isinstance(exc, openai.NotFoundError):
        flag = "--model" if label == "model" else f"--{label}-model"
        return f"{label}: {settings.base_url} does not serve model {settings.model!r} ({message}); check {flag}"
    return (
        f"{label}: the server refuses max_tokens={settings.max_tokens} for every request ({message}); "
        f"lower --{label}-max-tokens"
    )
