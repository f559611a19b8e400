"""What the teacher is asked for: explore (a fresh problem from a seed), mutate or respawn a pool problem.

Requests are made where Frontier Learning makes its decisions (a drawn slot explores with
probability phi, a drawn problem mutates with its class's probability) and where a mastered
problem retires (respawn: a harder variant of its lineage). They wait in a bounded queue until
the worker's budget takes them: respawns first (each is a retirement's one chance), then the
others oldest first; past `max_pending` the oldest are dropped (and logged), since a request
made many rounds ago describes a policy that has moved on.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

EXPLORE, MUTATE, RESPAWN = "explore", "mutate", "respawn"
KINDS = (EXPLORE, MUTATE, RESPAWN)


@dataclass
class OnlineRequest:
    request_id: str  # unique in a run; the teacher's request key (its cache key and sampling seed)
    kind: str  # explore | mutate | respawn
    round: int  # the round it was asked in
    env: str | None = None  # None for explore until the worker picks an active environment
    parent: int | None = None  # registry index of the problem to mutate (mutate, respawn)
    level: int | None = None  # SCALER level, set when the worker starts it
    seed_id: str | None = None  # explore: the seed snippet, set when the worker starts it

    def state(self) -> dict[str, Any]:
        return asdict(self)


class RequestQueue:
    def __init__(self, max_pending: int):
        self.max_pending = max_pending
        self.respawns: deque[OnlineRequest] = deque()
        self.others: deque[OnlineRequest] = deque()

    def __len__(self) -> int:
        return len(self.respawns) + len(self.others)

    def push(self, req: OnlineRequest) -> list[OnlineRequest]:
        """Queue `req`; returns the requests dropped to stay within max_pending (oldest first)."""
        (self.respawns if req.kind == RESPAWN else self.others).append(req)
        dropped = []
        while len(self) > self.max_pending:
            lane = self.others if self.others else self.respawns
            dropped.append(lane.popleft())
        return dropped

    def push_front(self, reqs: list[OnlineRequest]) -> None:
        """Put requests back at the head of their lanes (retried after an infrastructure failure)."""
        for req in reversed(reqs):
            (self.respawns if req.kind == RESPAWN else self.others).appendleft(req)

    def take(self, n: int) -> list[OnlineRequest]:
        out = []
        while len(out) < n and (self.respawns or self.others):
            out.append((self.respawns or self.others).popleft())
        return out

    def state_dict(self) -> list[dict[str, Any]]:
        return [r.state() for r in (*self.respawns, *self.others)]

    def load_state_dict(self, rows: list[dict[str, Any]]) -> None:
        self.respawns.clear()
        self.others.clear()
        for row in rows:
            req = OnlineRequest(**row)
            (self.respawns if req.kind == RESPAWN else self.others).append(req)
