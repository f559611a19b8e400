"""SandboxPool: one zygote per worker, each driven by a thread of its own; sync and asyncio front ends.

    with SandboxPool() as pool:                     # probes isolation (bwrap first) at start
        result = pool.run_sync(Job("def f(x):\n    return x * 2\n", ("f(2)",), (values.encode(4),)))
        results = pool.run_many(jobs)               # in order, all workers busy
        result = await pool.run(job)                # from asyncio, any number of concurrent callers
        first, second = await pool.run_twice_for_determinism(job)

A worker runs one job at a time on its zygote (zygote.py says what that does): its thread writes
the job into a memory file, makes the job's result, stdout and stderr pipes, sends the zygote those
descriptors, then reads the pipes itself within the job's caps and answers at the child's end
record (or its exit report). The "main" group's zygotes share one PYTHONHASHSEED and random seed,
so results are reproducible; the "alt" group, a quarter as large and started on first use, has
another and serves the determinism check.

Health: a worker whose zygote dies, breaks the protocol or overruns its job's deadline by GRACE_S
is replaced, and its job is reported as `infra`; a job that finds no worker after START_TRIES
failed starts is `infra` too, never left waiting. close() (also at the end of a `with` block and
at interpreter exit) kills every zygote; zygotes also die with their thread (bwrap
--die-with-parent, PR_SET_PDEATHSIG), so even SIGKILL of the host leaves no orphans.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import itertools
import json
import os
import queue
import select
import shutil
import signal
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
START_TRIES = 3
IDLE_CHECK_S = 1.0  # how often an idle worker looks whether its zygote is still alive
END_RECORD = b'\x00\x00\x00\x05["E"]'  # child.END_RECORD: every call has reported
_ids = itertools.count()


class WorkerGone(Exception):
    """The zygote died, broke the protocol or missed a deadline: it cannot be trusted any more."""


class Worker:
    """One zygote: its process, the socket to it and its stderr (kept for error messages)."""

    def __init__(self, pool: SandboxPool, seed: int):
        argv, popen = pool._plan.command(seed)
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (kept as long as the worker lives)
        self.proc: subprocess.Popen | None = None
        self.started: float | None = None  # when the job running now began
        try:
            self.proc = subprocess.Popen(
                argv, stdin=theirs, stdout=subprocess.DEVNULL, stderr=self.log, start_new_session=True, **popen
            )
        except OSError as exc:
            self.close()
            raise WorkerGone(f"could not start a worker: {exc}") from None
        finally:
            theirs.close()

    def wait_ready(self) -> None:
        if not select.select([self.sock], [], [], START_TIMEOUT_S)[0]:
            raise WorkerGone("sandbox worker did not start in time")
        if self._message()[0] != b"R":
            raise WorkerGone("sandbox worker broke the protocol at start-up")

    def alive(self) -> bool:
        """Whether the zygote still runs (reading the exit reports of jobs answered early)."""
        while select.select([self.sock], [], [], 0)[0]:
            try:
                self._message()
            except WorkerGone:
                return False
        return True

    def last_words(self) -> str:
        """The last line the zygote wrote to its stderr (most failures explain themselves there)."""
        self.log.seek(max(0, self.log.seek(0, os.SEEK_END) - 4096))
        lines = self.log.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:300] if lines else ""

    def close(self) -> None:
        self.sock.close()
        if self.proc is not None:
            iso.kill_worker(self.proc)
        self.log.close()

    def _message(self) -> tuple[bytes, dict]:
        msg = self.sock.recv(1 << 12)
        if not msg:
            words = self.last_words()
            ended = "the sandbox's zygote (the template of every job's child) ended"
            raise WorkerGone(f"{ended}: {words}" if words else ended)
        try:
            return msg[:1], json.loads(msg[1:])
        except ValueError:
            raise WorkerGone("sandbox worker broke the protocol") from None

    def run(self, job_id: int, job: Job, limits: Limits, answer_early) -> dict:
        """Run one job; the header build_result needs, with the pipes' contents under "blobs"."""
        pipes = [os.pipe() for _ in range(3)]
        try:
            with os.fdopen(os.memfd_create("job"), "wb") as job_file:
                job_file.write(limits.job_payload(job))
                job_file.flush()
                head = b"J" + json.dumps({"id": job_id, "timeout": float(job.timeout_s)}).encode()
                try:
                    socket.send_fds(self.sock, [head], [job_file.fileno()] + [w for _, w in pipes])
                except OSError as exc:
                    raise WorkerGone(f"sandbox worker stopped listening: {exc}") from None
                finally:
                    for _, w in pipes:
                        os.close(w)
            return self._collect(job_id, job, limits, [r for r, _ in pipes], answer_early)
        finally:
            for r, _ in pipes:
                os.close(r)

    def _collect(self, job_id: int, job: Job, limits: Limits, reads: list[int], answer_early) -> dict:
        """Read the job's pipes (0 results, 1 stdout, 2 stderr) within the caps until it is done.

        Answers at the child's end record when `answer_early()` (jobs are waiting), else at its
        exit report: when idle, no process outlives its answer."""
        keep, out_limit, res_cap = limits.caps(job)
        bufs, totals, open_fds = [bytearray(), bytearray(), bytearray()], [0, 0, 0], set(reads)
        end, report, killed, started = None, None, False, time.monotonic()
        self.started = started
        poller = select.poll()
        poller.register(self.sock, select.POLLIN)
        for fd in reads:
            os.set_blocking(fd, False)
            poller.register(fd, select.POLLIN)

        def drain(i: int) -> str | None:
            """Read what pipe `i` holds: why the child must stop, if it went over a cap."""
            while reads[i] in open_fds:
                try:
                    data = os.read(reads[i], 1 << 16)
                except BlockingIOError:
                    break
                if not data:
                    open_fds.discard(reads[i])
                    poller.unregister(reads[i])
                    break
                totals[i] += len(data)
                if i == 0 and totals[0] <= res_cap:
                    bufs[0] += data
                elif i > 0:
                    bufs[i] += data[: max(0, keep - len(bufs[i]))]
            if totals[0] > res_cap:
                return "results"
            return "output" if totals[1] + totals[2] > out_limit else None

        while report is None:
            remaining = started + job.timeout_s + GRACE_S - time.monotonic()
            if remaining <= 0:
                raise WorkerGone("sandbox worker did not report in time")
            for fd, _ in poller.poll(remaining * 1000):
                if fd == self.sock.fileno():
                    kind, body = self._message()
                    if kind != b"X":
                        raise WorkerGone(f"sandbox worker broke the protocol: message {kind!r} during a job")
                    if body.get("id") == job_id:  # (else the late report of a job answered early)
                        for i in range(3):  # the child is gone, and every writer with it: take what is left
                            end = end or drain(i)
                        report = body
                else:
                    end = end or drain(reads.index(fd))
            if end is None and reads[0] not in open_fds and bufs[0].endswith(END_RECORD):
                end = "done"  # every call reported (it flushed its output first: the pipes hold all of it)
                for i in (1, 2):
                    end = drain(i) or end
            if end and report is None and not killed:
                killed = True
                try:
                    self.sock.send(b"K" + json.dumps({"id": job_id}).encode())
                except OSError:
                    pass  # the zygote is gone: the socket's end says so next
                if end == "done" and answer_early():
                    report = {}
        self.started = None
        header = {"code": None, "signal": None, "cpu": None, **report, "wall": time.monotonic() - started}
        header.update(end=end or report["end"], out_total=totals[1], err_total=totals[2])
        header["blobs"] = [bytes(b) for b in bufs]
        return header


class Group:
    """Workers that share a hash seed and a queue: one thread each, started on first use."""

    def __init__(self, pool: SandboxPool, seed: int, size: int):
        self.pool, self.seed, self.size = pool, seed, size
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []
        self.workers: list[Worker] = []  # started, for worker_pids and close
        self.failures = 0
        self.last_error = ""

    def start(self) -> None:
        for _ in range(self.size - len(self.threads)):
            thread = threading.Thread(target=self._serve, name="sandbox-worker", daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self) -> None:
        """One worker's thread: keep a zygote and run the group's jobs on it, one at a time."""
        worker = self._start()
        while True:
            try:
                item = self.queue.get(timeout=IDLE_CHECK_S)
            except queue.Empty:
                if worker is not None and not worker.alive():
                    worker = self._retire(worker)
                if worker is None and self.failures < START_TRIES and not self.pool._closing:
                    worker = self._start()
                continue
            if item is None:
                break
            job_id, job, future = item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            if worker is not None and not worker.alive():
                worker = self._retire(worker)
            tries = 0 if self.pool._closing else START_TRIES if self.failures < START_TRIES else 1
            while worker is None and tries:
                worker, tries = self._start(), tries - 1
            isolation = self.pool.isolation
            if worker is None:
                error = "the sandbox pool was closed" if self.pool._closing else "sandbox workers cannot start: "
                future.set_result(infra_result(job, isolation, error + self.last_error * (not self.pool._closing)))
                continue
            started = time.monotonic()
            try:
                header = worker.run(job_id, job, self.pool.limits, lambda: not self.queue.empty())
                result = build_result(job, header, header.pop("blobs"), isolation, self.pool.limits)
            except WorkerGone as exc:
                worker = self._retire(worker)
                result = infra_result(job, isolation, "the sandbox pool was closed" if self.pool._closing else str(exc))
            except BaseException as exc:  # a bug here must not leave the caller waiting
                result = infra_result(job, isolation, f"sandbox pool failed: {exc!r}")
            self.pool._add_busy(time.monotonic() - started)
            future.set_result(result)
        if worker is not None:
            self._retire(worker)

    def _start(self) -> Worker | None:
        """A ready worker, or None (then the next try waits a little longer, up to 5 s)."""
        try:
            worker = Worker(self.pool, self.seed)
        except WorkerGone as exc:
            error = str(exc)
        else:
            with self.pool._lock:
                closing = self.pool._closing
                if not closing:
                    self.workers.append(worker)
            try:
                if closing:
                    raise WorkerGone("the sandbox pool was closed")
                worker.wait_ready()
                self.failures = 0
                return worker
            except (WorkerGone, OSError) as exc:
                words = worker.last_words()
                self._retire(worker)
                error = str(exc) + (f" ({words})" if words and words not in str(exc) else "")
        self.failures += 1
        self.last_error = error
        if not self.pool._closing:
            time.sleep(min(5.0, 0.05 * 2**self.failures))
        return None

    def _retire(self, worker: Worker) -> None:
        with self.pool._lock:
            if worker in self.workers:
                self.workers.remove(worker)
        worker.close()


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
        self._lock = threading.Lock()
        self._closing = False
        self._busy_s = 0.0  # worker-seconds with a job running, of jobs that ended
        self._groups = {"main": Group(self, 0, self.workers), "alt": Group(self, 1, max(1, self.workers // 4))}
        self._groups["main"].start()
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

    def submit(self, job: Job, *, group: str = "main") -> concurrent.futures.Future:
        """Queue a job; the future's result is its JobResult (never an exception for job trouble)."""
        if not isinstance(job, Job) or group not in self._groups:
            raise TypeError(
                f"expected a Job and a group in {sorted(self._groups)}, got {type(job).__name__}, {group!r}"
            )
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            if self._closing:
                raise RuntimeError("the sandbox pool is closed")
            self._groups[group].start()
            self._groups[group].queue.put((next(_ids), job, future))
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
            if self._closing:
                return
            self._closing = True
            workers = [w for g in self._groups.values() for w in g.workers]
        for group in self._groups.values():
            for _ in group.threads:
                group.queue.put(None)
        for worker in workers:  # a thread waiting on its zygote sees it end
            try:
                os.killpg(worker.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        for group in self._groups.values():
            for thread in group.threads:
                if thread is not threading.current_thread():
                    thread.join(timeout=30)
            while not group.queue.empty():
                item = group.queue.get()
                if item is not None and item[2].set_running_or_notify_cancel():
                    item[2].set_result(infra_result(item[1], self.isolation, "the sandbox pool was closed"))
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
        with self._lock:
            running = [w.started for g in self._groups.values() for w in g.workers if w.started is not None]
        return self._busy_s + sum(now - since for since in running)

    def worker_pids(self, group: str | None = None) -> list[int]:
        """Host pids of the workers (bwrap or python) of one group or all, for monitoring and tests."""
        with self._lock:
            return [w.proc.pid for name, g in self._groups.items() if group in (None, name) for w in g.workers]

    def _add_busy(self, seconds: float) -> None:
        with self._lock:
            self._busy_s += seconds
