"""How the generation worker interleaves with training: at step boundaries (sync) or beside it (thread).

`SyncDriver` runs a worker round inside the step-boundary callback while training waits: one
event loop kept for the run, the worker's clients opened once. Its outcomes depend only on the
policy's weights and the requests, so a resumed run replays them exactly; it is the only mode
the in-process student allows (the model must not train while it samples).

`ThreadDriver` runs the worker in a background thread with its own event loop: requests handed
over at a boundary run while training goes on, and what finished joins the pool at the next
boundary. A slow teacher (gpt-oss-120b at high effort takes minutes) then costs no training
time; the price is that which outcomes land at which step depends on timing, so a resumed run
continues from the checkpoint's pool (requests that were running are queued again) rather than
replaying the original run exactly. A bug in the worker is raised in the training thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

from synthgen.online.requests import OnlineRequest
from synthgen.online.worker import JobOutcome, OnlineWorker, TeacherJob


class WorkerFactory:
    """Opens the worker's clients in whichever event loop runs it (clients are bound to their loop)."""

    def __init__(self, online, turn_settings, sandbox_pool, make_student, cache_dir: Path, settings_hash: str):
        self.online, self.turn_settings, self.sandbox_pool = online, turn_settings, sandbox_pool
        self.make_student, self.cache_dir, self.settings_hash = make_student, Path(cache_dir), settings_hash

    @asynccontextmanager
    async def open(self):
        from synthgen.llm.client import LLMClient
        from synthgen.online.student import PolicyLLM
        from synthgen.turns.turn import TurnRunner

        o = self.online
        teacher = LLMClient(
            o.teacher, o.teacher, o.llm, max_in_flight=o.max_in_flight, cache_path=self.cache_dir / "teacher.sqlite"
        )
        llm = PolicyLLM(teacher, self.make_student())
        try:
            await llm.preflight(o.llm.wait_ready_s)  # a wrong URL or model: exit 2 before any training
            runner = TurnRunner(llm, self.sandbox_pool, self.turn_settings, self.settings_hash)
            yield OnlineWorker(runner, o.accept), llm.student
        finally:
            await llm.aclose()


class SyncDriver:
    mode = "sync"

    def __init__(self, factory: WorkerFactory):
        self.factory = factory
        self.loop = asyncio.new_event_loop()
        self._context = None
        self.worker: OnlineWorker | None = None
        self.student = None

    def start(self) -> None:
        self._context = self.factory.open()
        self.worker, self.student = self.loop.run_until_complete(self._context.__aenter__())

    def run(self, jobs: list[TeacherJob], step: int) -> list[JobOutcome]:
        """Run `jobs` now and return their outcomes (training waits)."""
        if not jobs:
            return []
        self.student.policy_step = step
        return self.loop.run_until_complete(self.worker.run_many(jobs))

    def exchange(self, jobs: list[TeacherJob], step: int) -> list[JobOutcome]:
        return self.run(jobs, step)

    def capacity(self, budget: int) -> int:
        return budget

    def in_flight(self) -> list[OnlineRequest]:
        return []

    def close(self, drain_s: float = 0.0) -> None:
        if self._context is not None:
            self.loop.run_until_complete(self._context.__aexit__(None, None, None))
            self._context = None
        self.loop.close()


class ThreadDriver:
    mode = "thread"

    def __init__(self, factory: WorkerFactory):
        self.factory = factory
        self.loop: asyncio.AbstractEventLoop | None = None
        self.worker: OnlineWorker | None = None
        self.student = None
        self._cond = threading.Condition()
        self._done: list[JobOutcome] = []
        self._running: dict[str, OnlineRequest] = {}
        self._tasks: set = set()
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="synthgen-online-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        self._raise()

    def _main(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._serve())
        finally:
            self.loop.close()

    async def _serve(self) -> None:
        try:
            async with self.factory.open() as (worker, student):
                self.worker, self.student, self._stop = worker, student, asyncio.Event()
                self._ready.set()
                await self._stop.wait()
                for task in list(self._tasks):
                    task.cancel()
                await asyncio.gather(*self._tasks, return_exceptions=True)
        except BaseException as exc:  # raised in the training thread at its next call
            self._error = exc
        finally:
            self._ready.set()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def submit(self, jobs: list[TeacherJob], step: int) -> None:
        self._raise()
        self.student.policy_step = step
        with self._cond:
            for job in jobs:
                self._running[job.request.request_id] = job.request
        for job in jobs:
            asyncio.run_coroutine_threadsafe(self._one(job), self.loop)

    async def _one(self, job: TeacherJob) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            out = await self.worker.run(job)
        except asyncio.CancelledError:
            return  # stopped at the end: the request stays "running" and is saved as waiting
        except BaseException as exc:
            with self._cond:
                self._error = exc
                self._cond.notify_all()
            return
        finally:
            self._tasks.discard(task)
        with self._cond:
            self._running.pop(job.request.request_id, None)
            self._done.append(out)
            self._cond.notify_all()

    def collect(self) -> list[JobOutcome]:
        with self._cond:
            out, self._done = self._done, []
        self._raise()
        return out

    def exchange(self, jobs: list[TeacherJob], step: int) -> list[JobOutcome]:
        """What finished since the last boundary; `jobs` start now and land at a later boundary."""
        done = self.collect()
        if jobs:
            self.submit(jobs, step)
        return done

    def run(self, jobs: list[TeacherJob], step: int) -> list[JobOutcome]:
        """Run `jobs` and wait for them (the fill before step 0); earlier outcomes stay collected."""
        ids = {j.request.request_id for j in jobs}
        self.submit(jobs, step)
        with self._cond:
            self._cond.wait_for(lambda: self._error is not None or not (ids & set(self._running)))
            mine = [o for o in self._done if o.job.request.request_id in ids]
            self._done = [o for o in self._done if o.job.request.request_id not in ids]
        self._raise()
        return mine

    def capacity(self, budget: int) -> int:
        with self._cond:
            return max(0, budget - len(self._running))

    def in_flight(self) -> list[OnlineRequest]:
        with self._cond:
            return sorted(self._running.values(), key=lambda r: r.request_id)

    def close(self, drain_s: float = 0.0) -> None:
        deadline = time.monotonic() + drain_s
        with self._cond:
            while self._running and self._error is None and time.monotonic() < deadline:
                self._cond.wait(timeout=max(0.0, deadline - time.monotonic()))
        if self.loop is not None and self._stop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=60)
