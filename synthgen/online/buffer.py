"""Frontier Learning's level buffer, with one synthgen problem per level: regret, priority, Zipf draws.

Faro et al. (Section 3.3, Algorithm 1, Table 6); the paper's rules and numbers, and where synthgen
departs from them, are in synthgen.online's docstring. Here a group is one problem's G rollouts in
one training round (s successes of n scored, infra left out); ties in the ranking go to the older
problem, and eviction takes the lowest priority (ties: the oldest). A problem mastered over
`retire_min_groups` groups retires (beyond the paper; synthgen.online.pool also retires, rather than
evicts, a too-easy problem a full buffer drops).

Pure Python and deterministic: every random choice takes a `random.Random` from the caller.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from synthgen.train.frontier import regret

ACTIVE, RETIRED, EVICTED = "active", "retired", "evicted"
UNSEEN, HARD, INFORMATIVE, EASY = "unseen", "too_hard", "informative", "too_easy"


@dataclass
class Entry:
    """One problem in the buffer: its registry index (its row in the training dataset) and its record."""

    index: int
    problem_id: str
    env: str
    lineage_id: str
    origin: str  # data | explore | mutate | respawn
    admitted_round: int
    last_drawn: int  # the round it was last drawn in (its admission round until then)
    window: deque = field(default_factory=deque)  # (solved, scored) of its newest groups
    groups: int = 0  # groups ever recorded
    status: str = ACTIVE
    attempts: list = field(default_factory=list)  # the newest group's (answer text, reward) pairs

    def state(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "window"}
        data["window"] = [list(g) for g in self.window]
        return data


class FrontierBuffer:
    """The buffer of active problems; `settings` is a synthgen.online.settings.BufferSettings."""

    def __init__(self, settings):
        self.s = settings
        self.entries: dict[int, Entry] = {}  # every problem ever admitted, by registry index

    # -- what a problem's record says -------------------------------------------------------
    def regret(self, e: Entry) -> float:
        scored = [(s, n) for s, n in e.window if n > 0]
        if not scored:
            return self.s.initial_regret
        return sum(regret(s, n) for s, n in scored) / len(scored)

    def success(self, e: Entry) -> float | None:
        n = sum(n for _, n in e.window)
        return sum(s for s, _ in e.window) / n if n else None

    def priority(self, e: Entry, t: int) -> float:
        return self.regret(e) + self.s.staleness * max(0, t - e.last_drawn)

    def success_class(self, e: Entry) -> str:
        rate = self.success(e)
        if rate is None:
            return UNSEEN
        if rate < self.s.informative_low:
            return HARD
        if rate > self.s.informative_high:
            return EASY
        return INFORMATIVE

    def mutation_probability(self, e: Entry) -> float:
        s = self.s
        chance = {UNSEEN: s.mutate_unseen, HARD: s.mutate_hard, INFORMATIVE: s.mutate_informative, EASY: s.mutate_easy}
        return chance[self.success_class(e)]

    def mastered(self, e: Entry) -> bool:
        rate = self.success(e)
        return len(e.window) >= self.s.retire_min_groups and rate is not None and rate > self.s.retire_at

    # -- the buffer ---------------------------------------------------------------------------
    def active(self) -> list[Entry]:
        return [e for e in self.entries.values() if e.status == ACTIVE]

    def ranked(self, t: int, pool: list[Entry] | None = None) -> list[Entry]:
        """Active problems (or `pool`) by priority at round t, highest first; ties: the older first."""
        return sorted(self.active() if pool is None else pool, key=lambda e: (-self.priority(e, t), e.index))

    def rank_probabilities(self, n: int) -> list[float]:
        """P(rank k), k = 1..n: proportional to k^(-1/T) (rank-based Zipf)."""
        weights = [k ** (-1.0 / self.s.zipf_temperature) for k in range(1, n + 1)]
        total = sum(weights)
        return [w / total for w in weights]

    def sample(self, t: int, k: int, rng: random.Random) -> list[tuple[Entry, int, float, int]]:
        """k independent draws at round t: (entry, rank from 1, its probability, problems ranked); marks
        them drawn at t.

        With no active problem left (all retired or evicted), the draw falls back to every problem
        ever admitted, so training never stops for want of a prompt (the caller logs it)."""
        pool = self.active() or list(self.entries.values())
        if not pool:
            raise RuntimeError("the online buffer is empty: nothing to draw")
        ranked = self.ranked(t, pool)
        probs = self.rank_probabilities(len(ranked))
        picks = rng.choices(range(len(ranked)), weights=probs, k=k)
        out = [(ranked[i], i + 1, probs[i], len(ranked)) for i in picks]
        for e, *_ in out:
            e.last_drawn = t
        return out

    def record(self, index: int, solved: int, scored: int, attempts: list | None = None) -> None:
        """One group of `index`'s rollouts (a problem no longer active keeps its record, unused)."""
        e = self.entries.get(index)
        if e is None or scored <= 0:
            return
        e.window.append((int(solved), int(scored)))
        while len(e.window) > self.s.window:
            e.window.popleft()
        e.groups += 1
        if attempts is not None:
            e.attempts = list(attempts)

    def admit(self, e: Entry, t: int) -> Entry | None:
        """Add `e`; when the buffer is full, the lowest priority at round t is evicted and returned."""
        evicted = None
        active = self.active()
        if len(active) >= self.s.capacity:
            evicted = min(active, key=lambda x: (self.priority(x, t), x.index))
            evicted.status = EVICTED
        self.entries[e.index] = e
        return evicted

    def retire_mastered(self) -> list[Entry]:
        """Retire every active problem the policy has mastered; returns them, oldest first."""
        out = [e for e in self.active() if self.mastered(e)]
        for e in out:
            e.status = RETIRED
        return sorted(out, key=lambda e: e.index)

    # -- checkpoints ----------------------------------------------------------------------------
    def state_dict(self) -> list[dict[str, Any]]:
        return [e.state() for e in sorted(self.entries.values(), key=lambda e: e.index)]

    def load_state_dict(self, rows: list[dict[str, Any]]) -> None:
        self.entries = {}
        for row in rows:
            window = deque((int(s), int(n)) for s, n in row.get("window", []))
            attempts = [(str(a), r) for a, r in row.get("attempts", [])]
            e = Entry(**{**row, "window": window, "attempts": attempts})
            self.entries[e.index] = e
