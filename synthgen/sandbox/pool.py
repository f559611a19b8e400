"""SandboxPool: one zygote per worker, driven by one I/O thread; sync and asyncio front ends.

    with SandboxPool() as pool:                     # probes isolation (bwrap first) at start
        result = pool.run_sync(Job("def f(x):\n    return x * 2\n", ("f(2)",), (values.encode(4),)))
        results = pool.run_many(jobs)               # in order, all workers busy
    with SandboxPool(workers=4) as pool:
        result = await pool.run(job)                # any number of concurrent callers
        first, second = await pool.run_twice_for_determinism(job)

Each worker is a zygote (zygote.py says what it does and the messages) running one job at a time.
For each job this process writes the job into a memory file, makes its result, stdout and stderr
pipes, and sends the zygote those descriptors; it then reads the pipes itself, within the job's
caps, and answers as soon as the child's end record arrives. Jobs wait in one queue per group.
The "main" group's zygotes share one PYTHONHASHSEED and random seed (results are reproducible);
the "alt" group, a quarter as large and started on first use, has another and serves the
determinism check.

Health: a worker whose socket closes or that overruns its job's deadline by GRACE_S is killed and
replaced, and its job is reported as `infra`. If workers keep failing to start, queued jobs get
`infra` rather than waiting forever. close() (also at the end of a `with` block, Ctrl+C included,
and at interpreter exit) kills every zygote; each zygote also dies with the pool's I/O thread
(bwrap --die-with-parent, PR_SET_PDEATHSIG), so even SIGKILL of the host leaves no orphans.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import itertools
import json
import os
import selectors
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import weakref

from synthgen.sandbox import isolation as iso
from synthgen.sandbox.results import Job, JobResult, Limits, build_result, infra_result
from synthgen.sandbox.settings import SANDBOX_LIBRARIES, SandboxSettings

GRACE_S = 5.0  # how long past a job's timeout the zygote has to report before it is replaced
START_TIMEOUT_S = 30.0
END_RECORD = b'\x00\x00\x00\x05["E"]'  # child.END_RECORD: every call has reported
_ids = itertools.count()


class Pending:
    """A job waiting for a worker, then running on one: its pipes, what they held, how it ended."""

    def __init__(self, job: Job, future: concurrent.futures.Future, limits: Limits):
        self.job, self.future, self.limits = job, future, limits
        self.id = next(_ids)
        self.fds: list[int] = []  # read ends of the result, stdout and stderr pipes (-1 at EOF)
        self.bufs = [bytearray(), bytearray(), bytearray()]
        self.totals = [0, 0, 0]
        self.end: str | None = None  # "done", or why this process stopped the child
        self.started = 0.0
        self.killed = False

    def claim(self) -> bool:
        """Mark the future running; False if the caller cancelled it meanwhile."""
        return self.future.running() or self.future.set_running_or_notify_cancel()


class Worker:
    def __init__(self, group: Group, proc: subprocess.Popen, sock: socket.socket, log):
        self.group, self.proc, self.sock, self.log = group, proc, sock, log
        self.ready = self.dead = False
        self.job: Pending | None = None
        self.deadline = time.monotonic() + START_TIMEOUT_S

    def last_words(self) -> str:
        """The last line the zygote wrote to its stderr (most start-up failures explain themselves)."""
        self.log.seek(max(0, self.log.seek(0, os.SEEK_END) - 4096))
        lines = self.log.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else ""


class Group:
    def __init__(self, seed: int, size: int, active: bool):
        self.seed, self.size, self.active = seed, size, active
        self.queue: collections.deque[Pending] = collections.deque()
        self.workers: list[Worker] = []
        self.failures = 0
        self.next_spawn = 0.0
        self.last_error = ""


class SandboxPool:
    """A pool of sandboxed zygotes. `isolation`: "auto" (strongest that works), "bwrap" or
    "rlimits-only" (the last only with allow_unsafe=True)."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        isolation: str = "auto",
        allow_unsafe: bool = False,
        python: str | None = None,
        libraries: tuple[str, ...] | list[str] = SANDBOX_LIBRARIES,
    ):
        self.workers = max(1, workers or iso.usable_cpus())
        self.limits = Limits()
        self._plan = iso.choose(isolation, allow_unsafe, python, tuple(libraries))
        self.libraries = self._plan.libraries
        self.isolation = self._plan.level
        self._groups = {"main": Group(0, self.workers, True), "alt": Group(1, max(1, self.workers // 4), False)}
        self._inbox: list[tuple[str, Pending]] = []
        self._busy_s = 0.0  # worker-seconds with a job running, of jobs that ended
        self._lock = threading.Lock()
        self._closing = self._closed = False
        self._stopped_by = ""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._sel = selectors.DefaultSelector()
        self._thread = threading.Thread(target=self._loop, name="sandbox-pool", daemon=True)
        self._thread.start()
        ref = weakref.ref(self)
        self._atexit = lambda: (p := ref()) is not None and p.close()
        atexit.register(self._atexit)

    @classmethod
    def from_settings(cls, sandbox: SandboxSettings, workers: int | None = None, **kwargs) -> SandboxPool:
        """A pool as `sandbox` says: workers, unsafe fallback, interpreter, libraries."""
        return cls(
            workers=workers if workers is not None else sandbox.workers,
            allow_unsafe=sandbox.allow_unsafe,
            python=sandbox.python,
            libraries=tuple(sandbox.libraries),
            **kwargs,
        )

    # ---- public API ------------------------------------------------------------------------

    def submit(self, job: Job, *, group: str = "main") -> concurrent.futures.Future:
        """Queue a job; the future's result is its JobResult (never an exception for job trouble)."""
        if not isinstance(job, Job) or group not in self._groups:
            raise TypeError(
                f"expected a Job and a group in {sorted(self._groups)}, got {type(job).__name__}, {group!r}"
            )
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self._closing:
                raise RuntimeError(
                    "the sandbox pool is closed" + (f" (stopped by {self._stopped_by})" if self._stopped_by else "")
                )
            self._inbox.append((group, Pending(job, future, self.limits)))
        self._wake()
        return future

    async def run(self, job: Job) -> JobResult:
        return await asyncio.wrap_future(self.submit(job))

    def run_sync(self, job: Job) -> JobResult:
        return self.submit(job).result()

    def run_many(self, jobs) -> list[JobResult]:
        futures = [self.submit(job) for job in jobs]
        return [f.result() for f in futures]

    async def run_twice_for_determinism(self, job: Job) -> tuple[JobResult, JobResult]:
        """The job on a main worker and on an "alt" worker (another PYTHONHASHSEED and random seed);
        compare with `first.same_outcome(second)`."""
        first = asyncio.wrap_future(self.submit(job, group="main"))
        second = asyncio.wrap_future(self.submit(job, group="alt"))
        return tuple(await asyncio.gather(first, second))  # type: ignore[return-value]

    def close(self) -> None:
        """Stop every worker (jobs not finished get `infra`) and remove the sandbox folder. Idempotent."""
        with self._lock:
            self._closing = True
            done, self._closed = self._closed, True
        if done:
            return
        self._wake()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=30)
        atexit.unregister(self._atexit)
        shutil.rmtree(self._plan.sandbox_dir, ignore_errors=True)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def busy_seconds(self) -> float:
        """Worker-seconds spent with a job running since the pool started; / (workers x wall time)
        is the sandbox's busy share (monitoring and benchmarks)."""
        now = time.monotonic()
        running = [w.job.started for g in self._groups.values() for w in list(g.workers) if w.job]
        return self._busy_s + sum(now - since for since in running)

    def worker_pids(self, group: str | None = None) -> list[int]:
        """Host pids of the workers (bwrap or python) of one group or all, for monitoring and tests."""
        return [w.proc.pid for name, g in self._groups.items() if group in (None, name) for w in list(g.workers)]

    # ---- the I/O thread ----------------------------------------------------------------------

    def _wake(self) -> None:
        with self._lock:  # (the I/O thread closes the pipe under the same lock when it ends)
            if self._wake_w >= 0:
                try:
                    os.write(self._wake_w, b"x")
                except BlockingIOError:
                    pass  # already awake

    def _loop(self) -> None:
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        try:
            while True:
                with self._lock:
                    inbox, self._inbox = self._inbox, []
                    if self._closing:
                        break
                for name, pending in inbox:
                    self._groups[name].active = True
                    self._groups[name].queue.append(pending)
                now = time.monotonic()
                for group in self._groups.values():
                    self._tend(group, now)
                for key, _ in self._sel.select(self._next_timeout(now)):
                    if key.data is None:
                        while self._read(self._wake_r):
                            pass
                    elif isinstance(key.data, Worker):
                        self._on_message(key.data)
                    else:
                        self._on_pipe(*key.data)
        except BaseException as exc:  # a bug here must not leave callers waiting forever
            self._stopped_by = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            with self._lock:
                self._closing = True
            self._shutdown()

    def _next_timeout(self, now: float) -> float:
        times = [w.deadline for g in self._groups.values() for w in g.workers if not w.ready or w.job]
        times += [g.next_spawn for g in self._groups.values() if g.active and len(g.workers) < g.size]
        return max(0.0, min(times) - now) if times else 1.0

    def _tend(self, group: Group, now: float) -> None:
        """Replace missing workers, enforce deadlines, hand out queued jobs."""
        for worker in list(group.workers):
            if (not worker.ready or worker.job) and now > worker.deadline:
                self._retire(worker, f"sandbox worker did not {'report' if worker.ready else 'start'} in time")
        failing = group.failures >= 3
        if group.active and now >= group.next_spawn and (group.queue or not failing):
            for _ in range(group.size - len(group.workers)):
                self._spawn(group)
        if failing and not any(w.ready for w in group.workers):
            while group.queue:  # keep nothing waiting on a sandbox that cannot start
                self._fail(group.queue.popleft(), f"sandbox workers cannot start: {group.last_error}")
        for worker in group.workers:
            while worker.ready and not worker.job and group.queue:
                pending = group.queue.popleft()
                if pending.claim():  # (not if cancelled while queued)
                    self._send(worker, pending)

    def _spawn(self, group: Group) -> None:
        argv, popen = self._plan.command(group.seed)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log = tempfile.TemporaryFile()  # noqa: SIM115 (the zygote's stderr, kept as long as the worker lives)
        try:
            proc = subprocess.Popen(
                argv, stdin=theirs, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True, **popen
            )
        except OSError as exc:
            ours.close()
            log.close()
            self._failed_start(group, f"could not start a worker: {exc}")
            return
        finally:
            theirs.close()
        ours.setblocking(False)
        worker = Worker(group, proc, ours, log)
        self._sel.register(ours, selectors.EVENT_READ, worker)
        group.workers.append(worker)

    def _send(self, worker: Worker, pending: Pending) -> None:
        """Start `pending` on an idle worker: its job in a memory file, its pipes, one message."""
        job_fd = os.memfd_create("job")
        pipes = [os.pipe() for _ in range(3)]
        try:
            _write_all(job_fd, pending.limits.job_payload(pending.job))
            head = json.dumps({"id": pending.id, "timeout": float(pending.job.timeout_s)}).encode()
            socket.send_fds(worker.sock, [b"J" + head], [job_fd] + [w for _, w in pipes])
        except OSError as exc:
            for fd in [r for r, _ in pipes]:
                os.close(fd)
            self._retire(worker, f"sandbox worker stopped listening: {exc}")
            pending.future.set_result(
                infra_result(pending.job, self.isolation, f"sandbox worker stopped listening: {exc}")
            )
            return
        finally:
            for fd in [job_fd] + [w for _, w in pipes]:
                os.close(fd)
        pending.fds = [r for r, _ in pipes]
        pending.started = time.monotonic()
        for i, fd in enumerate(pending.fds):
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ, (worker, i))
        worker.job, worker.deadline = pending, pending.started + pending.job.timeout_s + GRACE_S

    def _on_pipe(self, worker: Worker, i: int) -> None:
        """Pipe `i` (0 results, 1 stdout, 2 stderr) of the worker's job is readable."""
        pending = worker.job
        if pending is None or pending.fds[i] < 0:
            return  # (an event for a job that has ended already)
        self._drain(pending, i)
        if pending.fds[0] < 0 and pending.end is None and pending.bufs[0].endswith(END_RECORD):
            pending.end = "done"  # every call reported: answer now, without waiting for the exit
            for j in (1, 2):  # it flushed them before its end record: what they hold is all
                self._drain(pending, j)
        if pending.end is not None:
            self._kill_child(worker, pending)
            # With jobs waiting, answer now; when idle, after the exit report: no process outlives its answer.
            if pending.end == "done" and worker.group.queue:
                self._finish(worker, {"end": "done"})

    def _drain(self, pending: Pending, i: int) -> None:
        """Read what pipe `i` holds, within the caps (over one, the child must stop)."""
        keep, out_limit, res_cap = pending.limits.caps(pending.job)
        while pending.fds[i] >= 0:
            try:
                data = os.read(pending.fds[i], 1 << 16)
            except BlockingIOError:
                return
            if not data:
                self._sel.unregister(pending.fds[i])
                os.close(pending.fds[i])
                pending.fds[i] = -1
                return
            pending.totals[i] += len(data)
            if i == 0 and pending.totals[0] > res_cap:
                pending.end = pending.end or "results"
            elif i == 0:
                pending.bufs[0] += data
            else:
                pending.bufs[i] += data[: max(0, keep - len(pending.bufs[i]))]
                if pending.totals[1] + pending.totals[2] > out_limit:
                    pending.end = pending.end or "output"

    def _kill_child(self, worker: Worker, pending: Pending) -> None:
        """Ask the zygote to kill the job's child (once)."""
        if pending.killed:
            return
        pending.killed = True
        try:
            worker.sock.send(b"K" + json.dumps({"id": pending.id}).encode())
        except OSError:
            pass  # the zygote is gone: its socket's end says so

    def _on_message(self, worker: Worker) -> None:
        if worker.dead:
            return
        try:
            msg = worker.sock.recv(1 << 12)
        except BlockingIOError:
            return
        except OSError:
            msg = b""
        if not msg:
            words = worker.last_words()
            self._retire(
                worker,
                "the sandbox's zygote (the template of every job's child) ended" + (f": {words}" if words else ""),
            )
            return
        try:
            kind, body = msg[:1], json.loads(msg[1:])
            if kind == b"R" and not worker.ready:
                worker.ready, worker.group.failures = True, 0
            elif kind == b"X" and worker.job and body["id"] == worker.job.id:
                for i in range(3):  # the child is gone, and every writer with it: take what is left
                    self._drain(worker.job, i)
                self._finish(worker, body)
            elif kind != b"X":
                raise ValueError(f"unexpected message {kind!r}")
        except (ValueError, KeyError, TypeError) as exc:
            self._retire(worker, f"sandbox worker broke the protocol: {exc!r}")

    def _finish(self, worker: Worker, report: dict) -> None:
        """Answer the worker's job from the child's exit report (or "done") and what its pipes held."""
        pending, worker.job = worker.job, None
        self._close_pipes(pending)
        now = time.monotonic()
        self._busy_s += now - pending.started
        header = {"code": None, "signal": None, "cpu": None, **report, "wall": now - pending.started}
        header.update(end=pending.end or report["end"], out_total=pending.totals[1], err_total=pending.totals[2])
        try:
            result = build_result(pending.job, header, [bytes(b) for b in pending.bufs], self.isolation, self.limits)
        except Exception as exc:  # noqa: BLE001 (a bug in judging must not leave the caller waiting)
            result = infra_result(pending.job, self.isolation, f"could not judge the job's results: {exc!r}")
        pending.future.set_result(result)
        self._tend(worker.group, now)

    def _close_pipes(self, pending: Pending) -> None:
        for i, fd in enumerate(pending.fds):
            if fd >= 0:
                self._sel.unregister(fd)
                os.close(fd)
                pending.fds[i] = -1

    def _failed_start(self, group: Group, error: str) -> None:
        """A worker of this group failed to start: back off before the next one (up to 5 s)."""
        group.failures += 1
        group.last_error = error
        group.next_spawn = time.monotonic() + min(5.0, 0.05 * 2**group.failures)

    def _retire(self, worker: Worker, error: str) -> None:
        """Kill a worker; its job, if any, is reported as infra. A replacement follows."""
        if worker.dead:
            return
        worker.dead = True
        self._sel.unregister(worker.sock)
        worker.sock.close()
        iso.kill_worker(worker.proc)
        if worker in worker.group.workers:
            worker.group.workers.remove(worker)
        if not worker.ready:
            words = worker.last_words()
            self._failed_start(worker.group, error + (f" ({words})" if words and words not in error else ""))
        worker.log.close()
        if worker.job:
            pending, worker.job = worker.job, None
            self._close_pipes(pending)
            self._busy_s += time.monotonic() - pending.started
            self._fail(pending, error)

    def _shutdown(self) -> None:
        for group in self._groups.values():
            for worker in list(group.workers):
                self._retire(worker, "the sandbox pool was closed")
            while group.queue:
                self._fail(group.queue.popleft(), "the sandbox pool was closed")
        with self._lock:
            inbox, self._inbox = self._inbox, []
            self._sel.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = -1
        for _, pending in inbox:
            self._fail(pending, "the sandbox pool was closed")

    def _fail(self, pending: Pending, error: str) -> None:
        if pending.claim() and not pending.future.done():
            pending.future.set_result(infra_result(pending.job, self.isolation, error))

    @staticmethod
    def _read(fd: int) -> bytes:
        try:
            return os.read(fd, 4096)
        except BlockingIOError:
            return b""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
