"""The pool's view of its zygotes: a job waiting or sent (Pending), one zygote process with its
pipes and buffers (Worker), and the workers that share one seed and one queue (Group).

The I/O thread of synthgen.sandbox.pool owns all of these; nothing here is thread-safe.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import struct
import subprocess
import time

from synthgen.sandbox.results import Job

START_TIMEOUT_S = 30.0
MAX_FRAME = 1 << 30
_U32 = struct.Struct(">I")


class BadFrame(ValueError):
    """A zygote sent a frame length no frame can have: it cannot be trusted any more."""


class Pending:
    __slots__ = ("job", "future", "payload", "requeued")

    def __init__(self, job: Job, future: concurrent.futures.Future, payload: bytes):
        self.job, self.future, self.payload = job, future, payload
        self.requeued = False

    def claim(self) -> bool:
        """Mark the future running; False if the caller cancelled it meanwhile."""
        return self.requeued or self.future.set_running_or_notify_cancel()


class Worker:
    def __init__(self, group: Group, proc: subprocess.Popen):
        self.group, self.proc = group, proc
        self.out_fd, self.in_fd, self.err_fd = proc.stdout.fileno(), proc.stdin.fileno(), proc.stderr.fileno()
        self.rbuf, self.wbuf = bytearray(), bytearray()
        self.err_tail = b""
        self.state = "starting"  # -> "ready" -> "dead"
        self.inflight: collections.deque[Pending] = collections.deque()  # sent, in order; the head runs
        self.deadline = time.monotonic() + START_TIMEOUT_S
        self.busy_since: float | None = None  # when its current run of back-to-back jobs began

    def write_some(self) -> None:
        """Write what the pipe takes of the buffered jobs (OSError: the zygote stopped reading)."""
        try:
            while self.wbuf:
                n = os.write(self.in_fd, self.wbuf)
                del self.wbuf[:n]
        except BlockingIOError:
            pass

    def read_err(self) -> bool:
        """Keep the tail of the zygote's stderr; False once it is closed."""
        try:
            data = os.read(self.err_fd, 1 << 16)
        except BlockingIOError:
            return True
        if not data:
            self.err_fd = -1
            return False
        self.err_tail = (self.err_tail + data)[-4096:]
        return True

    def frames(self, data: bytes):
        """The complete frames that `data` finishes, in order (BadFrame: a length no frame can have)."""
        self.rbuf += data
        buf = self.rbuf
        while len(buf) >= 4 and self.state != "dead":
            (n,) = _U32.unpack_from(buf, 0)
            if n == 0 or n > MAX_FRAME:
                raise BadFrame(n)
            if len(buf) < 4 + n:
                break
            frame = bytes(buf[4 : 4 + n])
            del buf[: 4 + n]
            yield frame


class Group:
    def __init__(self, name: str, seed: int, size: int, active: bool):
        self.name, self.seed, self.size, self.active = name, seed, size, active
        self.queue: collections.deque[Pending] = collections.deque()
        self.workers: list[Worker] = []
        self.failures = 0
        self.next_spawn = 0.0
        self.last_error = ""

    def failed_start(self, error: str) -> None:
        """A worker of this group failed to start: back off before the next one (up to 5 s)."""
        self.failures += 1
        self.last_error = error
        self.next_spawn = time.monotonic() + min(5.0, 0.05 * 2**self.failures)
