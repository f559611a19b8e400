"""The online problem pool: the training set's rows, the Frontier buffer, the draws, SCALER, the requests.

`OnlinePool` is what the trainer and the worker share. Its clock is the optimizer step: every
change happens at a step boundary (synthgen.online.session), in the main thread, in a fixed order,
so the sampler sees one consistent pool and a run resumed from a checkpoint replays the same
changes. The training set (`rows`) is append-only: a problem's registry index is its dataset row
forever, so a round drawn before a later eviction still finds its prompt. Rounds are drawn `lag`
rounds ahead because the dataloader reads ahead of training (as synthgen.train.trainer explains);
`chunk(r)` hands the sampler round r's registry indices.
"""

from __future__ import annotations

import logging
import random
from dataclasses import asdict
from typing import Any

from synthgen.online.buffer import ACTIVE, EASY, EVICTED, RETIRED, Entry, FrontierBuffer
from synthgen.online.controller import Curation
from synthgen.online.worker import (
    ACCEPTED,
    EXPLORE,
    INFRA,
    MUTATE,
    RESPAWN,
    JobOutcome,
    OnlineRequest,
    RequestQueue,
)
from synthgen.store.records import SCORING_COLUMNS

logger = logging.getLogger(__name__)

STATE_VERSION = 1
COPIED = ("parent_id", "seed_id", "code", "message", "pre_test_code", "test_code", "visible_count", "pass_rate")


class OnlinePool:
    def __init__(self, online, envs: list[str], seed: int, geometry, prompt_fn, log):
        """`geometry` (synthgen.train.trainer.Geometry): prompts per round and the round of a step."""
        self.online, self.accept, self.envs, self.seed = online, online.accept, list(envs), seed
        self.batch, self.round_of_step = geometry.prompts, geometry.round_of_step
        self.prompt_fn, self.log = prompt_fn, log
        self.buffer = FrontierBuffer(online.buffer)
        self.curation = Curation(self.envs, online.controller)
        self.queue = RequestQueue(online.worker.max_pending)
        self.seeds: dict[str, str] = {}  # seed_id -> snippet, for explorations
        self.rows: list[dict[str, Any]] = []  # the training set, by registry index
        self.problem_rows: list[dict[str, Any]] = []  # the same problems as logged (ONLINE_PROBLEMS rows)
        self.ids: set[str] = set()
        self.draws: dict[int, list[int]] = {}  # round -> registry indices, for rounds not trained yet
        self.next_draw = 0  # the next round to draw
        self.recorded: int = -1  # the newest round whose groups were recorded
        self.late_rounds = 0  # rounds the sampler needed before a boundary drew them (lag too short)
        self.infra_streak = 0  # worker rounds in a row that failed only on infrastructure
        self.split_groups = 0  # prompt groups whose rows were not one problem (processes disagreed)
        self.step = 0
        self.last_snapshot: int | None = None

    # -- the training set ------------------------------------------------------------------------
    def add(self, problem: dict[str, Any], *, origin: str, step: int, request: OnlineRequest | None = None) -> Entry:
        index = len(self.rows)
        round_ = self.round_of_step(step)
        pid = problem["problem_id"]
        logged = dict(registry_index=index, step=step, round=round_, problem_id=pid, env=problem["env"], origin=origin)
        logged |= dict(
            request_id=request.request_id if request else None,
            lineage_id=problem.get("lineage_id") or f"{origin}:{pid}",
            difficulty=problem.get("difficulty") or "online",
            inputs=[str(x) for x in problem.get("inputs") or []],
            outputs=[str(x) for x in problem.get("outputs") or []],
            policy_step=None if origin == "data" else problem.get("policy_step", step),
        )
        logged |= {k: problem.get(k) for k in COPIED}
        self._register(logged)
        self.log.add("problems", logged)
        entry = Entry(index, logged["problem_id"], logged["env"], logged["lineage_id"], origin, round_, round_)
        if problem.get("scored"):  # the policy's acceptance answers are its first group
            entry.window.append((int(problem["correct"]), int(problem["scored"])))
            entry.groups = 1
        evicted = self.buffer.admit(entry, round_)
        self.event(step, "admit", entry, origin=origin, request=request, pass_rate=problem.get("pass_rate"))
        if evicted is not None and self.buffer.success_class(evicted) == EASY:
            # The lowest priority is often a problem the policy solves every time: that is mastery,
            # whether the retirement sweep saw enough groups or a new problem needed the slot first.
            evicted.status = RETIRED
            self._retired(evicted, step, "mastered (the lowest priority when the buffer was full)")
        elif evicted is not None:
            self.event(step, "evict", evicted, detail="lowest priority in a full buffer")
        return entry

    def _register(self, logged: dict[str, Any]) -> None:
        row = {k: logged.get(k) for k in SCORING_COLUMNS}
        row["problem_id"], row["difficulty"] = logged["problem_id"], logged["difficulty"]
        row["prompt"] = [{"role": str(m["role"]), "content": str(m["content"])} for m in self.prompt_fn(row)]
        row["registry_index"] = logged["registry_index"]
        self.rows.append(row)
        self.problem_rows.append(logged)
        self.ids.add(logged["problem_id"])

    # -- the sampler's side ------------------------------------------------------------------------
    def chunk(self, round_: int) -> list[int]:
        if round_ in self.draws:
            return self.draws[round_]
        if round_ < self.next_draw:  # a round trained before a resume, replayed only to be skipped
            return [0] * self.batch
        self.late_rounds += 1
        logger.warning("online: round %d was needed before a boundary drew it (the read-ahead lag is short)", round_)
        self.draw_until(round_, self.step)
        return self.draws[round_]

    def draw_until(self, last_round: int, step: int) -> None:
        while self.next_draw <= last_round:
            self._draw(self.next_draw, step)
            self.next_draw += 1

    def _draw(self, round_: int, step: int) -> None:
        s = self.online.buffer
        rng = random.Random(f"{self.seed}:draw:{round_}")
        if not self.buffer.active():
            logger.warning("online: no active problem in the buffer at round %d; drawing from retired ones", round_)
        picks = self.buffer.sample(round_, self.batch, rng)
        self.draws[round_] = [e.index for e, *_ in picks]
        for slot, (e, rank, prob, candidates) in enumerate(picks):
            explore = rng.random() < s.explore
            mutate = not explore and rng.random() < self.buffer.mutation_probability(e)
            if explore:
                self.request(OnlineRequest(f"r{round_}s{slot}e", EXPLORE, round_), step)
            if mutate:
                self.request(OnlineRequest(f"r{round_}s{slot}m", MUTATE, round_, env=e.env, parent=e.index), step)
            row = dict(step=step, round=round_, slot=slot, registry_index=e.index, problem_id=e.problem_id, env=e.env)
            self.log.add(
                "draws", dict(row, rank=rank, candidates=candidates, probability=prob, explore=explore, mutate=mutate)
            )

    def request(self, req: OnlineRequest, step: int) -> None:
        for dropped in self.queue.push(req):
            self.event(step, "drop", None, request=dropped, detail=f"more than {self.queue.max_pending} waiting")

    # -- the trainer's side --------------------------------------------------------------------
    def record_round(self, round_: int, groups: list[tuple[int, list, list]], step: int) -> None:
        """Round r's groups: (registry index, rewards (None = infra), answer texts) per prompt."""
        if round_ <= self.recorded:  # re-scored after a resume in the middle of a round: counted once
            return
        self.recorded = round_
        per_env: dict[str, list[int]] = {}
        for index, rewards, texts in groups:
            scored = [r for r in rewards if r is not None]
            solved = sum(1 for r in scored if r >= 0.5)
            self.buffer.record(index, solved, len(scored), list(zip(texts, rewards)))
            acc = per_env.setdefault(self.rows[index]["env"], [0, 0])
            acc[0] += solved
            acc[1] += len(scored)
        for row in self.curation.observe(round_, {e: (s, n) for e, (s, n) in per_env.items()}):
            self.log.add("controller", {"step": step, **row})
        for r in [r for r in self.draws if r < round_]:
            del self.draws[r]

    def retire_mastered(self, step: int) -> None:
        for e in self.buffer.retire_mastered():
            self._retired(e, step, "mastered")

    def _retired(self, e: Entry, step: int, why: str) -> None:
        """Log a retirement; with probability `respawn` its lineage asks the teacher for a harder variant."""
        self.event(step, "retire", e, detail=why)
        rng = random.Random(f"{self.seed}:respawn:{e.index}")
        if rng.random() < self.online.buffer.respawn:
            req = OnlineRequest(f"x{e.index}", RESPAWN, self.round_of_step(step), env=e.env, parent=e.index)
            self.request(req, step)
            self.event(step, "respawn", e, request=req, detail="asks for a harder variant")

    def apply(self, outcomes: list[JobOutcome], step: int) -> list[OnlineRequest]:
        """Admit accepted candidates (in request order), log the rest; returns requests to retry (infra)."""
        retry = []
        for out in sorted(outcomes, key=lambda o: o.job.request.request_id):
            req = out.job.request
            for row in out.turns:
                self.log.add("turns", {**row, "step": step})
            if out.status == INFRA:
                retry.append(req)
                self.event(step, "infra", None, request=req, detail=out.detail)
            elif out.status == ACCEPTED and out.row["problem_id"] in self.ids:
                self.event(step, "reject", None, request=req, pass_rate=out.pass_rate, detail="duplicate")
            elif out.status == ACCEPTED:
                self.add({**out.row, "difficulty": "online"}, origin=req.kind, step=step, request=req)
            else:
                self.event(step, "reject", None, request=req, pass_rate=out.pass_rate, detail=out.status)
        self.infra_streak = self.infra_streak + 1 if outcomes and len(retry) == len(outcomes) else 0
        self.queue.push_front(retry)
        return retry

    # -- the log -------------------------------------------------------------------------------------
    def event(self, step, kind, entry, *, origin=None, request=None, pass_rate=None, detail=None) -> None:
        t = self.round_of_step(step)
        row = {"step": step, "round": t, "event": kind, "pass_rate": pass_rate, "detail": detail}
        if entry is not None:
            row |= {**self._figures(entry, t), "origin": origin or entry.origin}
        if request is not None:
            row |= {"request_id": request.request_id, "request_kind": request.kind}
            row.setdefault("env", request.env)
        self.log.add("events", row)

    def snapshot(self, step: int) -> None:
        if step == self.last_snapshot:  # the end of a run may fall on a logging boundary
            return
        self.last_snapshot = step
        t = self.round_of_step(step)
        for rank, e in enumerate(self.buffer.ranked(t), 1):
            staleness, kind = max(0, t - e.last_drawn), self.buffer.success_class(e)
            row = {"step": step, "round": t, **self._figures(e, t), "rank": rank}
            self.log.add("buffer", {**row, "staleness": staleness, "success_class": kind})

    def _figures(self, e: Entry, t: int) -> dict[str, Any]:
        """A problem's identity and buffer figures at round t, as the events and buffer logs hold them."""
        b = self.buffer
        row = dict(registry_index=e.index, problem_id=e.problem_id, env=e.env, origin=e.origin, groups=len(e.window))
        return dict(row, success=b.success(e), regret=b.regret(e), priority=b.priority(e, t))

    def counts(self) -> dict[str, int]:
        statuses = [e.status for e in self.buffer.entries.values()]
        counts = {status: statuses.count(status) for status in (ACTIVE, RETIRED, EVICTED)}
        return {"problems": len(self.rows), **counts, "pending": len(self.queue)}

    # -- checkpoints ------------------------------------------------------------------------------
    def state_dict(self, step: int, in_flight: list[OnlineRequest] = ()) -> dict[str, Any]:
        first = self.round_of_step(step)
        return {
            "version": STATE_VERSION,
            "step": step,
            "registry_size": len(self.rows),
            "next_draw": self.next_draw,
            "recorded": self.recorded,
            "draws": {str(r): v for r, v in self.draws.items() if r >= first},
            "buffer": self.buffer.state_dict(),
            "curation": self.curation.state_dict(),
            # Requests still running in a worker thread are waiting again after a resume.
            "queue": [asdict(r) for r in in_flight] + self.queue.state_dict(),
            "late_rounds": self.late_rounds,
            "infra_streak": self.infra_streak,
        }

    def load_state_dict(self, state: dict[str, Any], problems: list[dict[str, Any]]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"online state version {state.get('version')} (this synthgen reads {STATE_VERSION})")
        problems = sorted(problems, key=lambda p: p["registry_index"])
        if [p["registry_index"] for p in problems] != list(range(state["registry_size"])):
            raise ValueError(
                f"the problems log holds {len(problems)} problems, the checkpoint expects {state['registry_size']}"
            )
        self.rows, self.problem_rows, self.ids = [], [], set()
        for p in problems:
            self._register(p)
        self.step = state["step"]
        self.next_draw, self.recorded = state["next_draw"], state["recorded"]
        self.draws = {int(r): list(v) for r, v in state["draws"].items()}
        self.buffer.load_state_dict(state["buffer"])
        self.curation.load_state_dict(state["curation"])
        self.queue.load_state_dict(state["queue"])
        self.late_rounds, self.infra_streak = state["late_rounds"], state["infra_streak"]
