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
so results are reproducible; jobs whose code names a library (numpy) go to the "heavy" group,
whose zygotes preload it; the "alt" group, a quarter as large, has another seed and serves the
determinism check. Groups other than "main" start on first use.

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
import threading
import time
import weakref

from synthgen.sandbox import isolation as iso
from synthgen.sandbox.results import Job, JobResult, Limits, build_result, infra_result
from synthgen.sandbox.settings import SANDBOX_LIBRARIES, SandboxSettings
from synthgen.sandbox.verdicts import END

GRACE_S = 5.0  # how long past a job's timeout the zygote has to report before it is replaced
START_TRIES = 3
RESULT_POLL_S = 0.005
IDLE_CHECK_S = 1.0  # how often an idle worker looks whether its zygote is still alive
END_RECORD = len(END).to_bytes(4, "big") + END  # as the child writes it: every call has reported
_ids = itertools.count()


class Worker(iso.Zygote):
    """A zygote the pool runs jobs on, one at a time."""

    started: float | None = None  # when the job running now began

    def alive(self) -> bool:
        """Whether the zygote still runs (reading the exit reports of jobs answered early)."""
        while select.select([self.sock], [], [], 0)[0]:
            try:
                self.message()
            except iso.WorkerGone:
                return False
        return True

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
                    raise iso.WorkerGone(f"sandbox worker stopped listening: {exc}") from None
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
            # Records are read every RESULT_POLL_S and at the pipe's end, not each as it comes.
            poller.register(fd, 0 if fd == reads[0] else select.POLLIN)

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
                raise iso.WorkerGone("sandbox worker did not report in time")
            for fd, _ in poller.poll(min(remaining, RESULT_POLL_S) * 1000):
                if fd == self.sock.fileno():
                    kind, body = self.message()
                    if kind != b"X":
                        raise iso.WorkerGone(f"sandbox worker broke the protocol: message {kind!r} during a job")
                    if body.get("id") == job_id:  # (else the late report of a job answered early)
                        for i in range(3):  # the child is gone, and every writer with it: take what is left
                            end = end or drain(i)
                        report = body
                else:
                    end = end or drain(reads.index(fd))
            end = end or drain(0)
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

    def __init__(self, pool: SandboxPool, seed: int, size: int, preload: tuple[str, ...]):
        self.pool, self.seed, self.size, self.preload = pool, seed, size, preload
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
                item = ()  # idle: only look after the zygote
            if item is None:
                break
            if worker is not None and not worker.alive():
                worker = self._retire(worker)
            tries = START_TRIES if self.failures < START_TRIES else 1 if item else 0  # failing: one try a job
            while worker is None and tries and not self.pool._closing:
                worker, tries = self._start(), tries - 1
            if item:
                worker = self._run(worker, *item)
        if worker is not None:
            self._retire(worker)

    def _run(self, worker: Worker | None, job_id: int, job: Job, future) -> Worker | None:
        """Run one job on `worker`, or say why there is none; the worker, or None if it is gone."""
        pool, started = self.pool, time.monotonic()
        if not future.set_running_or_notify_cancel():
            return worker  # cancelled while queued
        try:
            if worker is None:
                raise iso.WorkerGone(f"sandbox workers cannot start: {self.last_error}")
            header = worker.run(job_id, job, pool.limits, lambda: not self.queue.empty())
            result = build_result(job, header, header.pop("blobs"), pool.isolation, pool.limits)
        except iso.WorkerGone as exc:
            if worker is not None:
                worker = self._retire(worker)
            result = infra_result(job, pool.isolation, "the sandbox pool was closed" if pool._closing else str(exc))
        except BaseException as exc:  # a bug here must not leave the caller waiting
            result = infra_result(job, pool.isolation, f"sandbox pool failed: {exc!r}")
        with pool._lock:
            pool._busy_s += time.monotonic() - started
        future.set_result(result)
        return worker

    def _start(self) -> Worker | None:
        """A ready worker, or None after a failed start (the next try waits longer, up to 5 s)."""
        worker = None
        try:
            worker = Worker(self.pool._plan, self.seed, self.preload)
            with self.pool._lock:
                if self.pool._closing:
                    raise iso.WorkerGone("the sandbox pool was closed")
                self.workers.append(worker)  # (from here close() can kill it)
            worker.wait_ready()
            self.failures = 0
            return worker
        except (iso.WorkerGone, OSError) as exc:
            self.last_error = str(exc)  # (a zygote that ended says its last words here)
            if worker:
                self._retire(worker)
        self.failures += 1
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
        self._plan = iso.choose(isolation, allow_unsafe, python, tuple(libraries), probe)
        self.libraries = self._plan.libraries
        self.isolation = self._plan.level
        self._lock = threading.Lock()
        self._closing = False
        self._busy_s = 0.0  # worker-seconds with a job running, of jobs that ended
        # Libraries (numpy) in a zygote's memory cost each fork and exit of its children about 2 ms:
        # jobs whose code names one go to zygotes that preload them, the rest to lean ones; but a
        # library bound from under /tmp is hidden by each job's fresh /tmp, so then every zygote has it.
        self._heavy = tuple(self.libraries.found)
        hidden = any(path.startswith(("/tmp/", "/var/tmp/")) for path in self.libraries.binds)
        self._groups = {
            "main": Group(self, 0, self.workers, self._heavy if hidden else ()),
            "heavy": Group(self, 0, self.workers, self._heavy),
            "alt": Group(self, 1, max(1, self.workers // 4), self._heavy),
        }
        self._route = not hidden and bool(self._heavy)
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
            raise TypeError(f"expected a Job and a group in {sorted(self._groups)}: {type(job).__name__}, {group!r}")
        future: concurrent.futures.Future = concurrent.futures.Future()
        if group == "main" and self._route and any(name in job.code for name in self._heavy):
            group = "heavy"
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


def probe(plan: iso.Plan) -> str | None:
    """Run one job end to end in a zygote at `plan`'s level; None if it worked, else why not."""
    job, worker = Job("def f():\n    return [2, 'a']\n", ("f()",)), None
    try:
        worker = Worker(plan, seed=0)
        worker.wait_ready()
        header = worker.run(-1, job, Limits(), lambda: False)
        verdict = build_result(job, header, header.pop("blobs"), plan.level, Limits()).calls[0]
    except (iso.WorkerGone, OSError) as exc:
        return f"zygote failed its start-up: {exc}"
    finally:
        if worker:
            worker.close()
    return None if verdict.encoded == '[2,"a"]' else f"its self-test failed: {verdict.error}"
