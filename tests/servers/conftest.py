"""Fixtures of the real-server tests: the tiny model, and each server of the matrix started once a session.

`server` is parametrised over the matrix (server_matrix.KINDS): pytest groups the tests by it, so
each kind starts once, serves every test of its group, and stops (its log kept) before the next
starts. A kind that is not installed here skips its tests with the reason.
"""

from __future__ import annotations

import time

import pytest

from tests.helpers import server_matrix

STARTS: dict[str, float] = {}  # kind -> start seconds, printed at the end of the session


@pytest.fixture(scope="session")
def tiny_chat_model(tmp_path_factory):
    pytest.importorskip("transformers")
    return server_matrix.make_model(tmp_path_factory.mktemp("tiny-chat") / "model")


@pytest.fixture(scope="session", params=list(server_matrix.KINDS))
def server(request, tiny_chat_model, tmp_path_factory):
    kind = server_matrix.KINDS[request.param]
    reason = kind.missing()
    if reason:
        pytest.skip(reason)
    log = tmp_path_factory.mktemp(f"server-{kind.name}") / "server.log"
    try:
        running = server_matrix.start(kind, tiny_chat_model, log)
    except server_matrix.CannotRunHere as exc:
        pytest.skip(str(exc))
    STARTS[kind.name] = running.start_s
    yield running
    server_matrix.stop(running)


@pytest.fixture(params=list(server_matrix.KINDS))
def kind(request):
    """A kind of the matrix, not started (for tests that start it themselves, as eval --checkpoints does)."""
    found = server_matrix.KINDS[request.param]
    reason = found.missing()
    if reason:
        pytest.skip(reason)
    return found


def pytest_terminal_summary(terminalreporter):
    if STARTS:
        shown = ", ".join(f"{name} {s:.0f} s" for name, s in STARTS.items())
        terminalreporter.write_line(f"real servers: ready after {shown}")


@pytest.fixture
def requests_during(server):
    """Chat requests the server logged while a block ran: `with requests_during() as seen: ...; seen()`."""

    class Window:
        def __enter__(self):
            self.before = server.chat_statuses()
            return self

        def __exit__(self, *exc):
            time.sleep(0.5)  # the access-log line of the last answer may follow it by a moment
            self.after = server.chat_statuses()

        def __call__(self):
            return self.after - self.before

    return Window
