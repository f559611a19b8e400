"""One writer per output: a second process is refused with the holder's pid and host; a killed
holder never blocks anyone."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from synthgen.errors import UserError
from synthgen.store.layout import StageDir

SHARD = StageDir.shard_name(3, 8)


def hold(run_dir, shard: str | None) -> subprocess.Popen:
    """A separate process that takes the lock, says "locked", and keeps it until stdin closes."""
    script = textwrap.dedent(f"""
        import sys
        from synthgen.store.layout import StageDir
        with StageDir({str(run_dir)!r}, "generate").lock({shard!r}):
            print("locked", flush=True)
            sys.stdin.read()
        print("released", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


@pytest.mark.parametrize("shard", [SHARD, None])
def test_second_writer_is_refused_with_the_holders_pid_and_host(tmp_path, shard):
    stage = StageDir(tmp_path, "generate")
    holder = hold(tmp_path, shard)
    try:
        with pytest.raises(UserError) as caught:
            with stage.lock(shard):
                pytest.fail("two writers held one lock")
        message = str(caught.value)
        assert f"by pid {holder.pid} on host {socket.gethostname()}" in message and "\n" not in message
        if shard:
            assert message.startswith(f"shard 3 of generate is being written by pid {holder.pid} on host")
    finally:
        holder.stdin.close()
        assert holder.stdout.readline().strip() == "released"
        holder.wait()
    with stage.lock(shard):  # free again once the holder let go
        pass


def test_a_killed_holder_never_blocks(tmp_path):
    holder = hold(tmp_path, SHARD)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    stage = StageDir(tmp_path, "generate")
    with stage.lock(SHARD):
        pass
    # only the kernel's lock went away with the killed holder; the next holder, having written
    # nothing beside it, deletes the file (and keeps the folder it did not make)
    assert not (stage.path / f".{SHARD}.lock").exists() and stage.path.is_dir()


def test_shard_locks_are_independent_and_reentrant(tmp_path):
    stage = StageDir(tmp_path, "generate")
    holder = hold(tmp_path, SHARD)
    try:
        with stage.lock(StageDir.shard_name(4, 8)):  # another shard of the same stage
            with stage.lock(StageDir.shard_name(4, 8)):  # the same process again: allowed
                pass
    finally:
        holder.stdin.close()
        holder.wait()


def test_lock_under_a_run_dir_that_is_a_file(tmp_path):
    (tmp_path / "run").write_text("not a folder")
    with pytest.raises(UserError, match="is a file"):
        StageDir(tmp_path / "run", "filter")
