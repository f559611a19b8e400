"""One online run's state beside TRL: the pool, the worker driver, the log, and what a step boundary does.

The trainer calls `begin` when training starts, the pool's `record_round` when a round is scored,
`boundary` after every optimizer step and `save` with every checkpoint; `restore` rebuilds the
pool from a checkpoint (its state file plus the Parquet log cut back to its step).

Under several training processes the worker runs on the main process only; what it decided at
a boundary (how many requests it took, their outcomes) is broadcast, and every process applies
the same changes, so every process's pool and sampler stay identical.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from synthgen.envs import DEFAULT_ENVIRONMENTS
from synthgen.errors import InfraIncomplete, UserError
from synthgen.online.log import OnlineLog
from synthgen.online.pool import OnlinePool
from synthgen.online.worker import EXPLORE, OnlineRequest, make_jobs
from synthgen.store.files import write_text_atomic

log = logging.getLogger(__name__)

STATE_FILE = "online_state.json"
MAX_INFRA_ROUNDS = 3  # worker rounds in a row with nothing but infrastructure failures before the run stops


class OnlineSession:
    def __init__(self, settings, out: Path, geometry, prompt_fn, *, main: bool = True, world: int = 1):
        self.settings, self.online, self.g = settings, settings.online, geometry
        self.main, self.world = main, world
        self.root = Path(out) / "online"
        self.log = OnlineLog(self.root, settings.settings_hash(), enabled=main)
        # The teacher writes for --online-envs, else for the environments training is limited to, else the
        # paper's four (the contest environment holds imported problems, which a teacher does not write).
        envs = list(self.online.envs) or list(settings.envs) or list(DEFAULT_ENVIRONMENTS)
        self.pool = OnlinePool(self.online, envs, settings.seed, geometry, prompt_fn, self.log)
        self.driver = None
        self.synced_step: int | None = None  # the newest policy checkpoint written for a server student

    # -- set-up ----------------------------------------------------------------------------------
    def seed_pool(self, rows: list[dict[str, Any]]) -> int:
        """The buffer's first problems: `initial` of the data's rows (default: up to its capacity)."""
        n = self.online.worker.initial
        n = self.online.buffer.capacity if n is None else n
        for row in rows[:n]:
            self.pool.add({**row, "scored": 0}, origin="data", step=0)
        return min(n, len(rows))

    def fill(self, min_pool: int) -> None:
        """Before step 0: explorations until the buffer holds `min_pool` problems."""
        budget = self.online.worker.budget
        for attempt in range(self.online.worker.warmup_rounds):
            if len(self.pool.buffer.active()) >= min_pool:
                break
            for i in range(budget):
                self.pool.request(OnlineRequest(f"w{attempt}n{i}", EXPLORE, 0), 0)
            self._worker_round(0, run_now=True)
        self.log.flush()
        if not self.pool.buffer.active():
            raise UserError(
                f"online: no problem landed in the acceptance band [{self.online.accept.low}, "
                f"{self.online.accept.high}] in {self.online.worker.warmup_rounds} worker rounds; start from "
                "--data, or widen the band"
            )

    # -- the trainer's hooks ------------------------------------------------------------------
    def begin(self, step: int) -> None:
        self.pool.step = step
        if step == 0:  # the buffer training starts from (a resumed run has its snapshot in the log)
            self.pool.snapshot(0)
        self.pool.draw_until(self.g.round_of_step(step) + self.g.lag, step)

    def boundary(self, step: int) -> None:
        pool, worker = self.pool, self.online.worker
        pool.step = step
        pool.retire_mastered(step)
        if step % worker.refresh_every == 0:
            self._worker_round(step)
        if step % worker.log_every == 0:
            pool.snapshot(step)
            self.log.flush()
        pool.draw_until(self.g.round_of_step(step) + self.g.lag, step)

    def policy_step(self, step: int) -> int:
        """The step whose weights answer as the student: the live one, or the last synced checkpoint
        (the starting model, step 0, until the first sync)."""
        return (self.synced_step or 0) if self.online.student.sync_every else step

    def _worker_round(self, step: int, *, run_now: bool = False) -> None:
        pool, policy_step = self.pool, self.policy_step(step)
        take = self._shared(self.driver.capacity(self.online.worker.budget) if self.main else 0)
        jobs, skipped = make_jobs(pool, pool.queue.take(take), policy_step)
        for req, why in skipped:
            pool.event(step, "skip", None, request=req, detail=why)
        outcomes = []
        if self.main:  # (the only process with a driver)
            outcomes = (self.driver.run if run_now else self.driver.exchange)(jobs, policy_step)
        pool.apply(self._shared(outcomes), step)
        if pool.infra_streak >= MAX_INFRA_ROUNDS:
            raise InfraIncomplete(
                f"online: {pool.infra_streak} worker rounds in a row failed on infrastructure (the teacher's or the "
                "policy's server); the last checkpoint holds the pool, re-run with --resume"
            )

    def _shared(self, value):
        """The main process's `value` on every process (a no-op with one process)."""
        if self.world <= 1:
            return value
        from accelerate.utils import broadcast_object_list

        box = [value]
        broadcast_object_list(box, from_process=0)
        return box[0]

    # -- checkpoints and the end ----------------------------------------------------------------
    def save(self, folder: Path, step: int) -> None:
        if not self.main:
            return
        self.log.flush()  # rows first: a state file never refers to rows that are not on disk
        in_flight = self.driver.in_flight() if self.driver else []
        state = {"pool": self.pool.state_dict(step, in_flight), "synced_step": self.synced_step}
        state["settings_hash"] = self.settings.settings_hash()
        write_text_atomic(Path(folder) / STATE_FILE, json.dumps(state))

    def restore(self, folder: Path) -> int:
        state = json.loads((Path(folder) / STATE_FILE).read_text(encoding="utf-8"))
        if state.get("settings_hash") != self.settings.settings_hash():
            log.warning("online: resuming %s with other settings than the run that wrote it", folder)
        step = int(state["pool"]["step"])
        self.log.truncate_after(step)
        problems = [p for p in self.log.read("problems").to_pylist() if p["step"] <= step]
        try:
            self.pool.load_state_dict(state["pool"], problems)
        except ValueError as exc:
            raise UserError(f"online: cannot resume from {folder}: {exc}") from None
        self.synced_step = state.get("synced_step")
        return step

    def finish(self, step: int, *, write: bool = True) -> dict[str, Any]:
        """Stop the worker (thread mode: what finished while draining is still logged); final log and summary."""
        if self.driver is not None:
            self.driver.close(self.online.worker.drain_s)
            late = self.driver.collect()
            self.driver = None
            if late and write:
                self.pool.apply(late, step)
        if not write:
            self.log.flush()
            return self.pool.counts()
        self.pool.snapshot(step)
        self.log.flush()
        pool = self.pool
        summary = {**pool.counts(), "late_rounds": pool.late_rounds, "split_groups": pool.split_groups, "step": step}
        if self.main:
            write_text_atomic(self.root / "summary.json", json.dumps(summary, indent=2))
        return summary

    def sync_policy(self, trainer, step: int) -> None:
        """Write the policy for a server student (every sync_every steps); requests then name this step."""
        every = self.online.student.sync_every
        if not every or step % every:
            return
        target = self.root / "policy"
        staging = self.root / f".policy-{step}"
        trainer.save_model(str(staging))  # every process takes part (sharded models gather here)
        if self.main:
            (staging / "policy_step.json").write_text(json.dumps({"step": step}), encoding="utf-8")
            old = self.root / ".policy-old"
            shutil.rmtree(old, ignore_errors=True)
            if target.exists():
                target.rename(old)
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        self.synced_step = step
