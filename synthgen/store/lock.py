"""One writer per output: an advisory `flock` on a small lock file beside what is written.

`flock` belongs to the open file, so the kernel drops it when its holder exits in any way,
kill -9 included: a lock never outlives its process and never needs clearing by hand. The lock
file holds the holder's pid and host, so a second writer can say who it is waiting for:

    shard 3 of generate is being written by pid 1234 on host gpu07; wait for it, or stop it

A lock file is deleted only by its holder, still holding it, and only when nothing else is beside
it (a command that stopped on bad input before writing anything leaves no trace, nor the folders
it made for the lock); a writer that locked a file just deleted sees that the path no longer
names its file and takes the lock again, so two writers never hold locks on different files.
`holder(path)` says who holds a lock now (`synthgen filter` while generate runs). On a shared
filesystem `flock` works across machines where the filesystem supports it (NFSv4; Lustre mounted
with `flock`); where it does not, the write goes ahead unlocked with a warning.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from synthgen.errors import OutOfSpace, UserError, is_out_of_space

# Locks this process holds, by path, with a depth: taking one again inside itself is allowed
# (flock would refuse it, since a second open() is a second open file).
_held: dict[str, int] = {}
_guard = threading.Lock()


@contextmanager
def exclusive(path: Path, what: str, where: Path | str = "") -> Iterator[None]:
    """Hold the lock at `path` for the block; `what` (and `where`) name the output in the refusal."""
    path = Path(path)
    key = os.path.abspath(path)
    with _guard:
        nested = key in _held
        if nested:
            _held[key] += 1
    if nested:
        try:
            yield
        finally:
            with _guard:
                _held[key] -= 1
        return
    made = [p for p in [path.parent, *path.parent.parents] if not p.exists()]  # folders made for the lock only
    fd = None
    for _ in range(100):  # a holder may delete the file between our open and our lock: lock the new one
        fd = _acquire(path, what, where)
        if fd is None or _names(path, fd):
            break
        os.close(fd)
    with _guard:
        _held[key] = 1
    try:
        yield
    finally:
        with _guard:
            del _held[key]
        if fd is not None:
            _tidy(path, made)
            _release(fd)


def _names(path: Path, fd: int) -> bool:
    """Whether `path` still names the open file `fd` (not deleted or replaced since it was opened)."""
    try:
        mine, now = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def _tidy(path: Path, made: list[Path]) -> None:
    """Delete the lock file (still held) and the folders made for it when nothing else is there."""
    try:
        if any(p != path for p in path.parent.iterdir()):
            return
        path.unlink()
        for folder in made:  # innermost first
            folder.rmdir()
    except OSError:  # another writer came, or the folder is not ours to clean: leave it
        return


def holder(path: Path) -> str | None:
    """Who holds the lock at `path` now ("pid 1234 on host gpu07"), or None when nobody does."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not os.pread(fd, 1, 0):  # released (its holder truncates it) or never written: not held
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)  # its holder died without releasing it (kill -9): not held
        return None
    finally:
        os.close(fd)


def _acquire(path: Path, what: str, where: Path | str) -> int | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except NotADirectoryError:
        raise UserError(f"cannot lock {path}: a path above it is a file, not a folder") from None
    except OSError as exc:
        if is_out_of_space(exc):
            raise OutOfSpace(path, exc) from None
        raise UserError(f"cannot create the lock file {path}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        place = f" ({where})" if where else ""
        raise UserError(f"{what} is being written by {holder}; wait for it, or stop it{place}") from None
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        print(f"synthgen: warning: {path.parent} does not support file locks; writing {what} unlocked", file=sys.stderr)
        return None
    record = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S")}
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
    except OSError as exc:
        _release(fd)
        if is_out_of_space(exc):  # the stage could write nothing either: stop before any work
            raise OutOfSpace(path, exc) from None
        raise
    return fd


def _release(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)  # the next refusal must not name a process that has finished
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    """Who holds the lock, from the record it wrote (it may not have written it yet)."""
    try:
        record = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f"pid {int(record['pid'])} on host {record['host']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"
