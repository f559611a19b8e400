"""The zygote's handle on a template (template.Handle): spares asked for in batches are counted
as they come, and a run of failed forks never leaves the zygote waiting for a spare nobody forks."""

from __future__ import annotations

import os
import socket

import pytest

from tests.helpers.sandbox import zygote_module


@pytest.fixture(scope="module")
def template():
    with zygote_module("template") as module:
        yield module


@pytest.fixture()
def channel():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    yield ours, theirs
    ours.close()
    theirs.close()


def _announce_spare(theirs, template, pid):
    spare_end = os.open(os.devnull, os.O_RDONLY)
    try:
        socket.send_fds(theirs, [b"P" + template.PID.pack(pid)], [spare_end])
    finally:
        os.close(spare_end)


def _take(handle):
    pid, spare_fd, _ = handle.spare()
    os.close(spare_fd)
    return pid


def test_a_batch_is_asked_for_in_one_request_and_counted_as_it_comes(template, channel):
    ours, theirs = channel
    handle = template.Handle(ours, pid=0)
    handle.request_spares(4)
    assert theirs.recv(16) == b"F\x04" and handle.stock() == 4
    for pid in (11, 12):
        _announce_spare(theirs, template, pid)
    assert _take(handle) == 11 and handle.stock() == 3  # one at hand (12), two on their way
    assert _take(handle) == 12 and handle.stock() == 2 and not handle.spares
    theirs.setblocking(False)
    with pytest.raises(BlockingIOError):  # spares still on their way: nothing asked for
        theirs.recv(16)


def test_taking_the_last_spare_asks_for_the_next_batch(template, channel):
    ours, theirs = channel
    handle = template.Handle(ours, pid=0)
    handle.request_spares(1)
    assert theirs.recv(16) == b"F\x01"
    _announce_spare(theirs, template, 31)
    assert _take(handle) == 31
    assert theirs.recv(16) == bytes([ord("F"), template.SPARES_PER_REQUEST])
    assert handle.stock() == template.SPARES_PER_REQUEST


def test_after_failed_forks_the_next_spares_are_asked_for(template, channel):
    ours, theirs = channel
    handle = template.Handle(ours, pid=0)
    handle.request_spares(2)
    assert theirs.recv(16) == b"F\x02"
    theirs.send(b"Ecould not fork the job's child: one")
    theirs.send(b"Ecould not fork the job's child: two")
    for _ in range(2):
        with pytest.raises(RuntimeError, match="could not fork"):
            handle.spare()
    # Nothing was on its way after the second failure: a new batch was asked for, so the next
    # spare() waits for a spare that comes rather than for ever.
    assert theirs.recv(16) == bytes([ord("F"), template.SPARES_PER_REQUEST])
    _announce_spare(theirs, template, 21)
    assert _take(handle) == 21
