"""The zygote's handle on a template (template.Handle): spares asked for in batches are counted
as they come, and a run of failed forks never leaves the zygote waiting for a spare nobody forks."""

from __future__ import annotations

import importlib
import os
import socket
import sys
from pathlib import Path

import pytest

import synthgen.sandbox

_DIR = str(Path(synthgen.sandbox.__file__).resolve().parent)
_MODULES = ("template", "child", "contest_runner", "contest_program", "seccomp", "values")


@pytest.fixture(scope="module")
def template():
    """The sandbox's template module, imported as the zygote imports it (from its own folder)."""
    saved = {name: sys.modules.pop(name) for name in _MODULES if name in sys.modules}
    sys.path.insert(0, _DIR)
    try:
        yield importlib.import_module("template")
    finally:
        sys.path.remove(_DIR)
        for name in _MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


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


def test_a_batch_is_asked_for_in_one_request_and_counted_as_it_comes(template, channel):
    ours, theirs = channel
    handle = template.Handle(ours, pid=0)
    handle.request_spares(4)
    assert theirs.recv(16) == b"F\x04" and handle.stock() == 4
    for pid in (11, 12):
        _announce_spare(theirs, template, pid)
    first = handle.spare()
    assert first[0] == 11 and handle.stock() == 3  # one at hand (12), two on their way
    os.close(first[1])
    os.close(handle.spare()[1])
    assert handle.stock() == 2 and not handle.spares


def test_after_failed_forks_the_next_spare_is_asked_for_again(template, channel):
    ours, theirs = channel
    handle = template.Handle(ours, pid=0)
    handle.request_spares(2)
    assert theirs.recv(16) == b"F\x02"
    theirs.send(b"Ecould not fork the job's child: one")
    theirs.send(b"Ecould not fork the job's child: two")
    for _ in range(2):
        with pytest.raises(RuntimeError, match="could not fork"):
            handle.spare()
    assert handle.stock() == 0
    # Nothing is on its way now: spare() must ask for one rather than wait for ever.
    _announce_spare(theirs, template, 21)
    got = handle.spare()
    os.close(got[1])
    assert got[0] == 21 and theirs.recv(16) == b"F\x01"
