"""SandboxPool: long-lived zygote workers driven by one I/O thread; sync and asyncio front ends.

    with SandboxPool() as pool:                     # probes isolation (bwrap first) at start
        result = pool.run_sync(Job("def f(x):\n    return x * 2\n", ("f(2)",), (values.encode(4),)))
        results = pool.run_many(jobs)               # in order, all workers busy
    async with SandboxPool(workers=4) as pool:
        result = await pool.run(job)                # any number of concurrent callers
        first, second = await pool.run_twice_for_determinism(job)

Each worker is one zygote (see zygote.py) that runs one job at a time. Jobs wait in one queue per
group and go to idle workers first; when every worker is busy, one more job is queued inside each
zygote's pipe so that it never waits for this process between jobs. No batches, no barriers.
The "main" group's zygotes all start with the same PYTHONHASHSEED and random seed (results are
reproducible); the "alt" group, started on first use, has other seeds and serves the
determinism check. A job queued behind another is re-queued, not failed, if that worker dies.

Health: a worker that dies, breaks the protocol or overruns its job's deadline by GRACE_S is killed
and replaced, and its job is reported as `infra`. A zygote whose template died sends its job's
`infra` with "stop" and exits; it is replaced, and the jobs sent behind that one run elsewhere. If
workers keep failing to start, queued jobs get `infra` rather than waiting forever. close() (also
on exit of a `with` block, Ctrl+C included, and at interpreter exit) kills every zygote and reaps
it; each zygote also dies with the pool's I/O thread (bwrap --die-with-parent, PR_SET_PDEATHSIG),
so even SIGKILL of the host leaves no orphans.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import selectors
import shutil
import subprocess
import threading
import time
import weakref

from synthgen.sandbox import isolation as iso
from synthgen.sandbox.results import Job, JobResult, Limits, build_result, infra_result, split_done_frame
from synthgen.sandbox.settings import SANDBOX_LIBRARIES, SandboxSettings
from synthgen.sandbox.workers import BadFrame, Group, Pending, Worker

GRACE_S = 5.0  # how long past a job's timeout the zygote has to report before it is replaced
PIPELINE_DEPTH = 2  # jobs sent ahead to a zygote, so it never waits for the host between jobs


class SandboxPool:
    """A pool of sandboxed zygotes. `isolation`: "auto" (strongest that works), "bwrap",
    "setuid-netns" or "rlimits-only" (the last only with allow_unsafe=True)."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        isolation: str = "auto",
        allow_unsafe: bool = False,
        python: str | None = None,
        hash_seed: int = 0,
        limits: Limits | None = None,
        libraries: tuple[str, ...] | list[str] = SANDBOX_LIBRARIES,
    ):
        self.workers = max(1, workers or iso.usable_cpus())
        self.limits = limits or Limits()
        self._plan = iso.choose(isolation, allow_unsafe, python, tuple(libraries))
        self.libraries = self._plan.libraries
        self.isolation = self._plan.level
        self._groups = {
            "main": Group("main", hash_seed, self.workers, True),
            "alt": Group("alt", hash_seed + 1, self.workers, False),
        }
        self._inbox: list[tuple[str, Pending]] = []
        self._busy_s = 0.0  # worker-seconds with a job running, of runs of jobs that ended
        self._lock = threading.Lock()
        self._closing = self._closed = False
        self._stopped_by = ""
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
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
        pending = Pending(job, future, self.limits.job_payload(job))
        with self._lock:
            if self._closing:
                raise RuntimeError(
                    "the sandbox pool is closed" + (f" (stopped by {self._stopped_by})" if self._stopped_by else "")
                )
            self._inbox.append((group, pending))
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

    async def __aenter__(self) -> SandboxPool:
        return self

    async def __aexit__(self, *exc) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def busy_seconds(self) -> float:
        """Worker-seconds spent with a job running since the pool started; / (workers x wall time)
        is the sandbox's busy share (monitoring and benchmarks)."""
        now = time.monotonic()
        running = [w.busy_since for g in self._groups.values() for w in list(g.workers)]
        return self._busy_s + sum(now - since for since in running if since is not None)

    def worker_pids(self, group: str | None = None) -> list[int]:
        """Host pids of the zygote processes (bwrap or python) of one group or all, for monitoring and tests."""
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
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        try:
            while True:
                with self._lock:
                    inbox, self._inbox = self._inbox, []
                    closing = self._closing
                if closing:
                    break
                for name, pending in inbox:
                    group = self._groups[name]
                    group.active = True
                    group.queue.append(pending)
                now = time.monotonic()
                for group in self._groups.values():
                    self._tend(group, now)
                timeout = self._next_timeout(now)
                for key, _events in self._sel.select(timeout):
                    if key.data is None:
                        try:
                            while os.read(self._wake_r, 4096):
                                pass
                        except BlockingIOError:
                            pass
                        continue
                    worker, kind = key.data
                    if worker.state == "dead":
                        continue
                    if kind == "in":
                        self._flush(worker)
                    elif kind == "err":
                        self._read_err(worker)
                    else:
                        self._read_out(worker)
        except BaseException as exc:  # a bug here must not leave callers waiting forever
            self._stopped_by = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            with self._lock:
                self._closing = True
            self._shutdown()

    def _next_timeout(self, now: float) -> float:
        times = [w.deadline for g in self._groups.values() for w in g.workers if w.state == "starting" or w.inflight]
        times += [g.next_spawn for g in self._groups.values() if g.active and len(g.workers) < g.size]
        return max(0.0, min(times) - now) if times else 1.0

    def _tend(self, group: Group, now: float) -> None:
        """Replace missing workers, enforce deadlines, hand out queued jobs."""
        for worker in list(group.workers):
            if (worker.state == "starting" or worker.inflight) and now > worker.deadline:
                what = "did not start in time" if worker.state == "starting" else "did not report in time"
                self._retire(worker, f"sandbox worker {what}")
        failing = group.failures >= 3
        if (
            group.active
            and len(group.workers) < group.size
            and now >= group.next_spawn
            and (group.queue or not failing)
        ):
            for _ in range(group.size - len(group.workers)):
                self._spawn(group)
        if failing and not any(w.state == "ready" for w in group.workers):
            while group.queue:  # keep nothing waiting on a sandbox that cannot start
                self._fail_queued(group.queue.popleft(), f"sandbox workers cannot start: {group.last_error}")
        # Idle workers first; then, once every worker is up, one more job queued behind each.
        starting = any(w.state == "starting" for w in group.workers)
        for depth in range(1, 2 if starting else PIPELINE_DEPTH + 1):
            for worker in list(group.workers):
                while worker.state == "ready" and len(worker.inflight) < depth and group.queue:
                    pending = group.queue.popleft()
                    if not pending.claim():
                        continue  # cancelled while queued
                    if not worker.inflight:
                        worker.busy_since = time.monotonic()
                        worker.deadline = worker.busy_since + pending.job.timeout_s + GRACE_S
                    worker.inflight.append(pending)
                    worker.wbuf += pending.payload
                    self._flush(worker)

    def _spawn(self, group: Group) -> None:
        argv, popen = self._plan.command(group.seed)
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                close_fds=True,
                start_new_session=True,
                **popen,
            )
        except OSError as exc:
            group.failed_start(f"could not start a worker: {exc}")
            return
        worker = Worker(group, proc)
        for fd in (worker.out_fd, worker.in_fd, worker.err_fd):
            os.set_blocking(fd, False)
        self._sel.register(worker.out_fd, selectors.EVENT_READ, (worker, "out"))
        self._sel.register(worker.err_fd, selectors.EVENT_READ, (worker, "err"))
        group.workers.append(worker)

    def _flush(self, worker: Worker) -> None:
        try:
            worker.write_some()
        except OSError as exc:
            self._retire(worker, f"sandbox worker stopped reading: {exc}")
            return
        want = selectors.EVENT_WRITE if worker.wbuf else 0
        key = self._sel.get_map().get(worker.in_fd)
        if want and key is None:
            self._sel.register(worker.in_fd, want, (worker, "in"))
        elif not want and key is not None:
            self._sel.unregister(worker.in_fd)

    def _read_err(self, worker: Worker) -> None:
        fd = worker.err_fd
        if not worker.read_err():
            self._sel.unregister(fd)

    def _read_out(self, worker: Worker) -> None:
        try:
            data = os.read(worker.out_fd, 1 << 16)  # a pipe's capacity: bigger reads only churn the allocator
        except BlockingIOError:
            return
        except OSError as exc:
            data = b""
            worker.err_tail += f"\n{exc}".encode()
        if not data:
            tail = worker.err_tail.decode("utf-8", "replace").strip().splitlines()[-1:]
            self._retire(worker, "sandbox worker died" + (f": {tail[0][:300]}" if tail else ""))
            return
        try:
            for frame in worker.frames(data):
                self._on_frame(worker, frame)
        except BadFrame:
            self._retire(worker, "sandbox worker broke the protocol (bad frame length)")

    def _on_frame(self, worker: Worker, frame: bytes) -> None:
        kind = frame[:1]
        if kind == b"R" and worker.state == "starting":
            worker.state = "ready"
            worker.group.failures = 0
            return
        if kind == b"D" and worker.state == "ready" and worker.inflight:
            pending = worker.inflight[0]
            try:
                header, blobs = split_done_frame(frame[1:])
                result = build_result(pending.job, header, blobs, self.isolation, self.limits)
            except Exception as exc:  # noqa: BLE001 (whatever it sent, that worker cannot be trusted)
                self._retire(worker, f"sandbox worker broke the protocol: {exc!r}")
                return
            worker.inflight.popleft()
            now = time.monotonic()
            if worker.inflight:  # the next job starts now
                worker.deadline = now + worker.inflight[0].job.timeout_s + GRACE_S
            else:
                self._idle(worker, now)
            pending.future.set_result(result)
            if header.get("stop"):  # its last frame (the template died): what was sent behind never ran
                self._retire(worker, f"sandbox worker stopped: {result.calls[0].error if result.calls else ''}", False)
            self._tend(worker.group, now)
            return
        self._retire(worker, f"sandbox worker broke the protocol (frame {kind!r} while {worker.state})")

    def _retire(self, worker: Worker, error: str, head_ran: bool = True) -> None:
        """Kill and reap a worker; its job (if any, and `head_ran`) is reported as infra, jobs sent
        behind it are queued again. A replacement follows."""
        if worker.state == "dead":
            return
        was = worker.state
        worker.state = "dead"
        if worker.err_fd >= 0:
            try:  # the last words of a dying worker explain most start-up failures
                worker.err_tail = (worker.err_tail + os.read(worker.err_fd, 1 << 16))[-4096:]
            except OSError:
                pass
        for fd in (worker.out_fd, worker.err_fd, worker.in_fd):
            if fd >= 0 and fd in self._sel.get_map():
                self._sel.unregister(fd)
        iso.kill_worker(worker.proc)
        self._idle(worker, time.monotonic())
        if worker in worker.group.workers:
            worker.group.workers.remove(worker)
        if was == "starting":
            tail = worker.err_tail.decode("utf-8", "replace").strip().splitlines()[-1:]
            worker.group.failed_start(error + (f" ({tail[0][:300]})" if tail and tail[0] not in error else ""))
        if worker.inflight and head_ran:  # the running job failed with the worker; the ones behind it never ran
            head = worker.inflight.popleft()
            head.future.set_result(infra_result(head.job, self.isolation, error))
        if worker.inflight:
            for pending in reversed(worker.inflight):  # re-queued once; lost a second time, it is infra
                if pending.requeued:
                    pending.future.set_result(infra_result(pending.job, self.isolation, error))
                else:
                    pending.requeued = True
                    worker.group.queue.appendleft(pending)
            worker.inflight.clear()

    def _idle(self, worker: Worker, now: float) -> None:
        if worker.busy_since is not None:
            self._busy_s += now - worker.busy_since
            worker.busy_since = None

    def _shutdown(self) -> None:
        for group in self._groups.values():
            for worker in list(group.workers):
                self._retire(worker, "the sandbox pool was closed")
            while group.queue:
                self._fail_queued(group.queue.popleft(), "the sandbox pool was closed")
        with self._lock:
            inbox, self._inbox = self._inbox, []
            self._sel.close()
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = -1
        for _, pending in inbox:
            self._fail_queued(pending, "the sandbox pool was closed")

    def _fail_queued(self, pending: Pending, error: str) -> None:
        if pending.claim():
            pending.future.set_result(infra_result(pending.job, self.isolation, error))
