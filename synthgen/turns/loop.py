"""The turn-loop runner: how generate, chain and calibrate run their turns, whatever they are for.

A stage says *what* to do (a `TurnStage`: its folders, its plan of work units, what one unit
does); `TurnLoop` says *how*: it opens the LLM client (with the shard's request cache) and the
sandbox pool, resumes the shard from the rows on disk, keeps units running, writes one row per
finished turn through a buffered, atomic writer (with --keep-attempts, the student's attempts too,
before their rows: synthgen.store.attempts), shows live progress and writes the shard's stats file.

A unit spends part of its life in the sandbox and between turns, holding no request, so the loop
keeps many more units going (`max_active`, bounded by memory) than requests in flight
(`max_in_flight`), which keeps the server full. Queued requests get a slot longest-remaining first
(`turns_left`), so units move at about the same pace and the tail drains with the server still
full. The plan is consumed lazily: memory holds only the units in progress.

How a run ends:
- every unit finished: the stage's `finish` writes its other outputs, the shard gets its `.done`
  marker and later runs skip it;
- SIGTERM / SIGINT: no new turns start, running ones are cancelled at once (`catch_signals`),
  finished rows are flushed and `errors.Interrupted` is raised (exit 143 / 130);
- some turns failed on infrastructure: their units stop there (a later turn would build on one
  that never finished), finished rows and the stats file are saved and `InfraIncomplete` is raised
  (exit 3) with no marker. A re-run redoes exactly the unfinished units (the request cache replays
  every answer already paid for), so the final rows equal those of an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import gc
import signal
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from synthgen import errors
from synthgen.errors import InfraIncomplete, is_out_of_space
from synthgen.store.attempts import AttemptsShardWriter, KeepAttempts, attempt_rows, attempts_dir
from synthgen.store.layout import StageDir
from synthgen.store.paths import output_folder
from synthgen.store.readiness import check_finished
from synthgen.store.records import PROBLEMS
from synthgen.turns.collector import quiet_collector
from synthgen.turns.report import TOKEN_COLUMNS, LiveProgress, TurnStats, summary_table, write_stats
from synthgen.turns.settings import KeepAttemptsSettings, TurnLoopSettings
from synthgen.turns.turn import TurnOutcome, TurnRequest, TurnRunner

_END = object()  # the plan has no more units


@dataclass
class UnitsLeft:
    """What a shard still has to do: the units left (lazy) and the figures progress shows."""

    items: Iterable[Any]  # units not finished yet, in a stable order; consumed lazily
    units_total: int  # units of the whole shard
    units_done: int  # units finished before this run
    turns_todo: int  # teacher turns the units left are expected to take (the stage corrects it live)
    resumed_keys: set[str] = field(default_factory=set)  # turn ids on disk that the units left redo


class TurnStage(ABC):
    """A stage that runs teacher turns: what it reads and writes, and what one unit of work does."""

    name: str = ""  # "generate" | "chain": names the request cache, console lines, the stats file
    units: str = "units"  # what a unit is called on the progress line and in the stats file

    def __init__(self, settings: TurnLoopSettings):
        self.settings = settings
        # Set by `prepare` when the input was read partially on purpose (--allow-partial): it goes
        # into every part's metadata and the marker, so later stages and readers can tell.
        self.input_meta: dict[str, Any] = {}

    @abstractmethod
    def rows_dir(self) -> StageDir:
        """The folder of one PROBLEMS row per finished teacher turn."""

    @property
    def teacher_samples(self) -> int:
        """Answers asked of one teacher request (the single-turn baseline asks for K)."""
        return 1

    def finished_dir(self) -> StageDir:
        """The folder whose shard marker says this stage's shard is finished (written last)."""
        return self.rows_dir()

    def stats_path(self, shard: str) -> Path:
        return self.rows_dir().path / f"stats-{shard}.json"

    def prepare(self) -> None:  # noqa: B027 (an optional hook, not an abstract step)
        """Read the inputs; runs before any output is touched (bad input -> UserError, exit 2)."""

    @abstractmethod
    def plan(self, parts: list[Path]) -> UnitsLeft:
        """The units left, given the shard's parts already on disk (none: a fresh shard). Read only
        the columns needed (`read_rows`); `resumed_keys` names the rows the units left will redo."""

    @abstractmethod
    async def run_unit(self, item: Any, loop: TurnLoop) -> bool:
        """Run one unit through `loop.turn(...)`; when a turn comes back None (an infrastructure
        failure), stop early and return False: the unit is not done."""

    def marker_info(self) -> dict[str, Any]:
        """Extra figures for the rows' `.done` marker."""
        return {}

    def complete_finished(self, loop: TurnLoop) -> None:  # noqa: B027 (an optional hook)
        """The shard was finished by an earlier run: write what that run was killed before writing."""

    def finish(self, loop: TurnLoop) -> str:
        """After every unit finished and the rows are marked: write other outputs; return a title."""
        title = f"{self.name} {loop.shard}: {loop.writer.written} rows in {self.rows_dir().path}"
        if loop.writer.keeping:
            title += f", {loop.writer.attempts_written} attempts in {loop.writer.attempts.path}"
        return title


class TurnLoop:
    """Runs a TurnStage's units for one shard; see the module docstring."""

    def __init__(self, stage: TurnStage, *, force: bool = False, console: Console | None = None):
        self.stage, self.force = stage, force
        self.settings = stage.settings
        self.console = console or Console(stderr=True)
        self.shard = StageDir.shard_name(self.settings.shard, self.settings.num_shards)
        self.digest = self.settings.settings_hash()
        self.failures: Counter = Counter()  # infra failures of this run, by kind
        self.causes: dict[str, str] = {}  # the first "<kind>: <message>" of each kind: why it failed
        self.stats = TurnStats(units=stage.units)
        self.runner: TurnRunner | None = None
        self.progress: LiveProgress | None = None
        self.writer: AttemptsShardWriter | None = None
        # --keep-attempts solved|all: what is kept of each measured problem, and where (None: this
        # stage has no such setting; synthgen.store.attempts).
        keeping = isinstance(self.settings, KeepAttemptsSettings)
        self.keep: KeepAttempts = self.settings.keep_attempts if keeping else "none"
        self.attempts = attempts_dir(self.settings.run_dir, stage.name) if keeping else None
        self._active: set[asyncio.Task] = set()  # the units running now
        # For the stats file, once the run has served: the sandbox's isolation, the LLM usage,
        # and the worker-seconds the sandbox was busy and the mutation scores' share of them.
        self._isolation: str | None = None
        self._usage: dict[str, Any] = {}
        self._usage_line = ""
        self._sandbox_s: tuple[float | None, float | None] = (None, None)

    # -- what a stage calls from run_unit -----------------------------------------------------
    async def turn(self, req: TurnRequest, completion=None) -> TurnOutcome | None:
        """Run one turn and keep its row; None when it failed on infrastructure (stop the unit)."""
        return await self._keep(await self.runner.run(req, completion))

    async def measure(self, req: TurnRequest, row: dict[str, Any], problem) -> TurnOutcome | None:
        """The student part of a turn on an existing problem (calibrate); keeps its row like `turn`."""
        return await self._keep(await self.runner.measure(req, row, problem))

    async def _keep(self, outcome: TurnOutcome) -> TurnOutcome | None:
        if not outcome.finished:
            self.failures[outcome.infra] += 1
            self.causes.setdefault(outcome.infra, outcome.cause or outcome.infra)
            return None
        kept = []
        if self.keep != "none" and outcome.summary is not None:
            kept = attempt_rows(outcome.row, outcome.answers, outcome.rewards, self.keep, self.stage.name)
        if self.writer.add(outcome.row, kept):  # False: the row was on disk already (a resumed unit)
            self.stats.record(outcome.row)
            self.progress.advance()
        return outcome

    def expect_turns(self, delta: int) -> None:
        """The unit now expects `delta` more (negative: fewer) turns than the plan said."""
        self.progress.expect(delta)

    @property
    def llm(self):
        return self.runner.llm

    # -- the run --------------------------------------------------------------------------------
    def run(self) -> StageDir:
        return asyncio.run(self.run_async())

    async def run_async(self) -> StageDir:
        output_folder(self.settings.run_dir, "--run-dir")
        done_dir = self.stage.finished_dir()
        with done_dir.lock(self.shard):  # one writer per shard: a second process gets exit 2
            return await self._run_locked(done_dir)

    async def _run_locked(self, done_dir: StageDir) -> StageDir:
        stage, settings = self.stage, self.settings
        if check_finished(done_dir, self.shard, self.digest, self.force, cached=True):
            self.console.print(f"{stage.name}: {self.shard} already finished in {done_dir.path}; skipping")
            self._note_attempts_not_kept()
            stage.complete_finished(self)
            return done_dir
        stage.prepare()
        self.writer = AttemptsShardWriter(
            stage.rows_dir(),
            self.shard,
            PROBLEMS,
            self.digest,
            attempts=self.attempts,
            keep=self.keep,
            max_rows=settings.max_buffer_rows,
            extra_meta={"settings": settings.hashed_view(), **stage.input_meta},
        )
        plan = stage.plan(self.writer.resume(force=self.force))
        self.writer.skip(plan.resumed_keys)
        self.stats.units_total, self.stats.units_done = plan.units_total, plan.units_done
        if self.writer.written:
            self.console.print(
                f"{stage.name}: resuming {self.shard}: {self.writer.written} rows on disk, "
                f"{plan.units_total - plan.units_done} {stage.units} to go"
            )
        with quiet_collector():
            caught = await self._run_plan(plan)
        self.writer.flush()
        whole = self._shard_stats()
        info = {
            "shard": self.shard,
            "num_shards": settings.num_shards,
            "settings_hash": self.digest,
            "isolation": self._isolation,
            "sandbox_busy_s": self._sandbox_s[0],
            "mutation_sandbox_s": self._sandbox_s[1],
            "finished": not caught and not self.failures,
            "infra_failures": dict(sorted(self.failures.items())),
            "infra_causes": dict(sorted(self.causes.items())),
        }
        write_stats(stage.stats_path(self.shard), whole, self._usage, info)
        if caught:
            raise errors.Interrupted(caught[0], stage.name)
        if self.failures:
            raise InfraIncomplete(self.failure_line())
        self.writer.finish({self.stage.units: plan.units_total, **stage.marker_info(), **stage.input_meta})
        title = stage.finish(self)
        self.console.print(summary_table(whole, self._usage_line, title))
        return done_dir

    def _note_attempts_not_kept(self) -> None:
        """A finished shard is skipped whatever --keep-attempts says now (it is not in the settings
        hash): say so when the attempts it kept are not the ones asked for."""
        if self.attempts is None or self.keep == "none":
            return
        kept = (self.attempts.done_info(self.shard) or {}).get("keep_attempts", "none")
        if kept != self.keep:
            self.console.print(
                f"[yellow]{self.stage.name}: {self.shard} was finished with --keep-attempts {kept}, so its "
                f"attempts are not kept as {self.keep}; use --force to run it again and keep them[/yellow]"
            )

    def failure_line(self) -> str:
        n = sum(self.failures.values())
        # Each cause is "<kind>: <message>"; the kind is said already.
        kinds = "; ".join(
            f"{kind} x{count}: {self.causes[kind].removeprefix(f'{kind}: ') or self.causes[kind]}"
            for kind, count in self.failures.most_common()
        )
        return (
            f"{n} turn{'s' if n != 1 else ''} failed on infrastructure ({kinds}); "
            "finished rows are saved, re-run to retry them"
        )

    async def _run_plan(self, plan: UnitsLeft) -> list[int]:
        """Run the plan's units; returns the stop signals caught (empty when it ran to the end)."""
        settings = self.settings
        stop = asyncio.Event()
        caught: list[int] = []
        handled = catch_signals(stop, caught, self._cancel_units)
        cache = Path(settings.run_dir) / "cache" / f"{self.stage.name}-{self.shard}.sqlite"
        try:
            await self._serve(plan, cache, stop)
        except Exception as exc:
            if is_out_of_space(exc) and not isinstance(exc, errors.OutOfSpace):  # the request cache (SQLite)
                raise errors.OutOfSpace(cache, exc) from None
            raise
        finally:
            for signum, previous in handled.items():
                signal.signal(signum, previous)  # the CLI's handler again (start-up, the last writes)
            self.writer.flush()  # finished rows reach disk on any exit, a bug included
        return caught

    async def _serve(self, plan: UnitsLeft, cache: Path, stop: asyncio.Event) -> None:
        """Open the LLM client (its request cache) and the sandbox, and run the plan's units."""
        from synthgen.llm.client import LLMClient
        from synthgen.sandbox import SandboxPool

        settings = self.settings
        say = lambda line: self.console.print(line, markup=False, highlight=False, soft_wrap=True)  # noqa: E731
        async with LLMClient.from_settings(settings, cache_path=cache, notify=say) as llm:
            # A wrong URL or model, max_tokens over the context: exit 2 before any work.
            samples = {"teacher": self.stage.teacher_samples, "student": settings.attempts}
            await llm.preflight(settings.llm.wait_ready_s, samples)
            with SandboxPool.from_settings(settings.sandbox) as pool:
                self._isolation = pool.isolation
                self.runner = TurnRunner(llm, pool, settings, self.digest)
                done = self.writer.written
                total = done + plan.turns_todo
                self.progress = LiveProgress(
                    self.stats, llm, self.console, settings, label=self.stage.name, total=total, done=done
                )
                with self.progress:
                    await self._keep_running(iter(plan.items), settings.active_bound(), stop)
                self._sandbox_s = (round(pool.busy_seconds(), 3), round(self.runner.mutation_sandbox_s, 3))
            self._usage, self._usage_line = llm.usage.as_dict(), llm.usage.summary()

    async def _keep_running(self, pending, max_active: int, stop: asyncio.Event) -> None:
        """Keep up to `max_active` units running; start no new one once `stop` is set.

        Finished units report through a queue (not `asyncio.wait` over all of them), so a loop
        over thousands of units costs the same per unit as one over a few."""
        finished: asyncio.Queue[asyncio.Task] = asyncio.Queue()
        active = self._active
        stopper = asyncio.create_task(stop.wait())
        stopper.add_done_callback(finished.put_nowait)
        exhausted = False
        try:
            while True:
                while not exhausted and not stop.is_set() and len(active) < max_active:
                    item = next(pending, _END)
                    if item is _END:
                        exhausted = True
                        break
                    task = asyncio.create_task(self._unit(item))
                    task.add_done_callback(finished.put_nowait)
                    active.add(task)
                if not active:
                    return
                try:
                    done = [await asyncio.wait_for(finished.get(), timeout=0.5)]
                except asyncio.TimeoutError:
                    done = []
                while not finished.empty():
                    done.append(finished.get_nowait())
                for task in done:
                    if task is not stopper:
                        active.discard(task)
                        if not task.cancelled():  # (a signal cancels the units at once)
                            task.result()  # a bug in one unit should fail the run loudly, not vanish
                self.progress.refresh()
                if stop.is_set():
                    for task in active:
                        task.cancel()
                    await asyncio.gather(*active, return_exceptions=True)
                    return
        finally:
            stopper.cancel()

    def _cancel_units(self) -> None:
        """Stop every running unit now (a signal): on a busy loop, waiting for `_keep_running` to
        notice the stop would let thousands of units keep working for many loop iterations."""
        side = self.runner.side_tasks if self.runner is not None else ()
        for task in [*self._active, *side]:
            task.cancel()

    async def _unit(self, item: Any) -> None:
        if await self.stage.run_unit(item, self):
            self.stats.units_done += 1

    def _shard_stats(self) -> TurnStats:
        """Turn statistics recounted from every row of the shard on disk (also after a resume)."""
        s = self.stats
        whole = TurnStats(units=s.units, units_total=s.units_total, units_done=s.units_done, started=s.started)
        columns = ["turn", "valid", "reason", "pass_rate", "attempts", *TOKEN_COLUMNS]
        for part in self.stage.rows_dir().shard_parts(self.shard):
            for row in pl.read_parquet(part, columns=columns).iter_rows(named=True):
                whole.record(row)
        return whole


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def catch_signals(stop: asyncio.Event, caught: list[int], cancel) -> dict[int, Any]:
    """SIGTERM/SIGINT set `stop` and `cancel()` the running work instead of killing the process;
    returns the signals handled, each with the handler it had before.

    Not `loop.add_signal_handler`: its callback joins the end of the ready queue, behind thousands
    of units' callbacks (seconds of CPU). This puts the stop at the head of the queue: it runs
    between two callbacks, and every callback still queued finds its unit cancelled and unwinds."""
    loop = asyncio.get_running_loop()

    def stop_now(signum: int) -> None:
        caught.append(signum)
        # Nothing made before the signal needs the cycle collector any more: without this the
        # unwinding of thousands of units runs full collections over the whole heap (seconds).
        gc.freeze()
        stop.set()
        cancel()

    def on_signal(signum: int, frame) -> None:
        handle = loop.call_soon_threadsafe(stop_now, signum)  # (also wakes a loop waiting in select)
        ready = getattr(loop, "_ready", None)  # asyncio's own loops: a deque of the callbacks ready
        if ready and ready[-1] is handle:
            ready.pop()
            ready.appendleft(handle)

    handled = {}
    for signum in STOP_SIGNALS:
        try:
            handled[signum] = signal.signal(signum, on_signal)
        except ValueError:  # not the main thread: signals stay with whoever handles them
            continue
    return handled


def read_rows(parts: list[Path], columns: list[str]) -> pl.DataFrame | None:
    """`columns` of a shard's own parts (written by this stage under these settings), or None."""
    if not parts:
        return None
    return pl.concat([pl.read_parquet(part, columns=columns) for part in parts], how="vertical_relaxed")
