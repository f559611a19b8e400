"""Before any work: is each role's server up, and does it serve the model the role asks for?

`check_server` asks GET {base_url}/models once, or keeps asking for up to `wait_s` seconds (for
jobs that start their own server). A wrong URL, a server that never comes up, or a model the
server does not serve is a `ServerNotReady` (a UserError: one line, exit code 2) that names what
the server does serve, or says that nothing answered at that address.
"""

from __future__ import annotations

import asyncio
import time

import openai

from synthgen.config.llm import RoleSettings
from synthgen.errors import UserError
from synthgen.llm_errors import ATTEMPT_ERRORS, describe, error_kind
from synthgen.llm_http import get_json

POLL_S = 2.0
ASK_TIMEOUT_S = 10.0


class ServerNotReady(UserError):
    """The server did not answer /models in time, or does not serve the configured model."""


def served_models(page: object) -> list[str] | None:
    """Model ids of a /models answer; None if it is not a model list."""
    data = page.get("data") if isinstance(page, dict) else None
    if not isinstance(data, list):
        return None
    ids = [m.get("id") for m in data if isinstance(m, dict)]
    return [str(i) for i in ids if i is not None]


def _still_starting(exc: BaseException) -> bool:
    """A failure that a server still starting up gives (worth waiting through)."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (404, 408, 425, 429) or exc.status_code >= 500
    return True  # refused, dropped, timed out, half-written answers


async def check_server(client: openai.AsyncOpenAI, role: str, settings: RoleSettings, wait_s: float = 0) -> None:
    """Return once `settings.base_url` lists `settings.model`; ServerNotReady otherwise."""
    url = settings.base_url.rstrip("/")
    deadline = time.monotonic() + wait_s
    while True:
        try:
            page = await get_json(client, "/models", min(ASK_TIMEOUT_S, max(1.0, wait_s)))
        except ATTEMPT_ERRORS as exc:
            if not _still_starting(exc) or time.monotonic() + POLL_S > deadline:
                raise ServerNotReady(_unreachable(role, url, exc, wait_s)) from None
            await asyncio.sleep(POLL_S)
            continue
        served = served_models(page)
        if served is None:
            raise ServerNotReady(
                f"{role}: {url}/models did not answer with a model list; is it an OpenAI-compatible server?"
            )
        if settings.model not in served:
            listed = ", ".join(repr(m) for m in served) or "no model"
            raise ServerNotReady(f"{role}: {url} serves {listed}, not the configured model {settings.model!r}")
        return


def _unreachable(role: str, url: str, exc: BaseException, wait_s: float) -> str:
    waited = f" within {wait_s:g} s" if wait_s > 0 else ""
    if isinstance(exc, openai.APIStatusError):
        return f"{role}: {url}/models answered HTTP {exc.status_code}{waited} ({describe(exc)})"
    if error_kind(exc) == "connection_refused":
        return f"{role}: nothing answered at {url}{waited} (connection refused); is the server running?"
    return f"{role}: nothing answered at {url}/models{waited} ({describe(exc)})"
