"""What went wrong with an LLM request, by kind, and whether (and how long) to try again.

Kinds, as they appear in `Completion.error` ("<kind>: <message>") and in the usage counters:
  connection_refused  nothing listens at the address (the server is down or the URL is wrong)
  connection          any other transport failure (reset, DNS, a connection dropped mid-answer)
  timeout             the request took longer than the role's timeout_s, end to end
  http_<status>       the server answered with that HTTP status
  bad_response        a 200 answer that is not a usable chat completion (malformed JSON, token
                      counts that are not numbers, wrong choice indices or count, no message)

Transport failures, timeouts, bad responses, 408/409/425/429 and 5xx are retried; other 4xx are
final. Retries use capped exponential backoff with jitter and stop after `max_attempts` tries or
once `max_outage_s` has passed since the request was first sent, whichever comes first, so an
outage of several minutes is ridden out (with the defaults) and then reported, never hidden.
"""

from __future__ import annotations

import openai
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, stop_after_delay, wait_exponential_jitter

from synthgen.config.llm import LLMSettings

_RETRY_STATUS = {408, 409, 425, 429}


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
    message, root = _first_line(exc), _chain(exc)[-1]
    if root is not exc and _first_line(root) not in message:
        message = f"{message} ({_first_line(root)})"
    return f"{error_kind(exc)}: {message}"
