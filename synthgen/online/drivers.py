"""The generation worker's driver: a background thread with its own event loop (clients are bound
to their loop); a bug in the worker is raised in the training thread.

`sync` (the default): a worker round runs at the step boundary while training waits, so outcomes
depend only on the policy's weights and the requests and a resumed run replays them exactly; the
only mode the in-process student allows (the model must not train while it samples).
`thread`: what is handed over at a boundary runs while training goes on and joins the pool at the
next boundary, so a slow teacher (minutes per answer) costs no training time; which outcome lands
at which step then depends on timing, and a resumed run continues from the checkpoint's pool
(running requests queued again) rather than replaying the run exactly.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from synthgen.online.worker import JobOutcome, OnlineRequest, OnlineWorker, TeacherJob


class WorkerDriver:
    def __init__(self, online, turn_settings, sandbox_pool, make_student, cache_dir: Path, settings_hash: str):
        self.online, self.turn_settings, self.sandbox_pool = online, turn_settings, sandbox_pool
        self.make_student, self.cache_dir, self.settings_hash = make_student, Path(cache_dir), settings_hash
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
        from synthgen.llm.client import LLMClient
        from synthgen.online.student import PolicyLLM
        from synthgen.turns.turn import TurnRunner

        o = self.online
        try:
            teacher = LLMClient(
                o.teacher, o.teacher, o.llm, max_in_flight=o.max_in_flight, cache_path=self.cache_dir / "teacher.sqlite"
            )
            llm = PolicyLLM(teacher, self.make_student())
            try:
                await llm.preflight(o.llm.wait_ready_s)  # a wrong URL or model: exit 2 before any training
                runner = TurnRunner(llm, self.sandbox_pool, self.turn_settings, self.settings_hash)
                self.worker, self.student, self._stop = OnlineWorker(runner, o.accept), llm.student, asyncio.Event()
                self._ready.set()
                await self._stop.wait()
                for task in list(self._tasks):
                    task.cancel()
                await asyncio.gather(*self._tasks, return_exceptions=True)
            finally:
                await llm.aclose()
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
        """sync: run `jobs` now (training waits); thread: what finished since the last boundary, while
        `jobs` start now and land at a later boundary."""
        if self.online.worker.mode == "sync":
            return self.run(jobs, step)
        done = self.collect()
        if jobs:
            self.submit(jobs, step)
        return done

    def run(self, jobs: list[TeacherJob], step: int) -> list[JobOutcome]:
        """Run `jobs` and wait for them (also the fill before step 0); earlier outcomes stay collected."""
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
        with self._cond:
            self._cond.wait_for(lambda: not self._running or self._error is not None, timeout=drain_s)
        if self.loop is not None and self._stop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=60)
