"""The request bound of synthgen.llm.client: `max_in_flight` slots, handed out most urgent first.

A plain asyncio.Semaphore serves waiters first come, first served. The turn loop keeps many more
units of work active than there are slots, so requests wait for one; which waiter gets the next
free slot decides how a run ends. Serving first the request whose unit has the most requests still
ahead of it (longest remaining first, the list-scheduling rule for a short makespan) moves every
unit along at about the same pace, so the server stays full until the last requests instead of
draining on a few lineages that started late. Equal priorities are served in arrival order.

At most `per_turn` slots are handed out per event-loop turn. Building a request costs the client
milliseconds of CPU and its body leaves in a task of its own (aiohttp), one turn later: when
hundreds of slots are free at once (a run's start), granting them all in one turn builds every
request before the first is on the wire, and the server idles for the whole time (0.5-0.9 s for
256 requests on 2 cores). Granting a few per turn puts the first requests on the wire within
milliseconds while the rest are built; the same total work, the server busy sooner.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

PER_TURN = 16


class PrioritySlots:
    """`size` slots; `await acquire(priority)` waits for one (higher priority first), `release()` frees it."""

    def __init__(self, size: int, per_turn: int = PER_TURN):
        if size < 1 or per_turn < 1:
            raise ValueError("size and per_turn must be >= 1")
        self.free = size
        self.per_turn = per_turn
        self._waiters: list[tuple[float, int, asyncio.Future]] = []  # (-priority, arrival, future)
        self._arrival = itertools.count()
        self._granted = 0  # slots handed out in this loop turn
        self._turn_pending = False  # a callback at the next turn resets the count

    async def acquire(self, priority: float = 0.0) -> None:
        if self.free > 0 and not self._waiters and self._granted < self.per_turn:
            self.free -= 1
            self._granted += 1
            self._new_turn_soon()
            return
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (-priority, next(self._arrival), future))
        self._grant()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as the caller gave up: pass it on
            raise

    def release(self) -> None:
        self.free += 1
        self._grant()

    def _grant(self) -> None:
        """Hand free slots to the most urgent live waiters, up to this turn's allowance."""
        while self.free > 0 and self._waiters and self._granted < self.per_turn:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():  # (a cancelled waiter is skipped here rather than searched for)
                self.free -= 1
                future.set_result(None)
                self._granted += 1
        if self._granted:  # this turn's count is reset next turn, which serves whoever still waits
            self._new_turn_soon()

    def _new_turn_soon(self) -> None:
        if not self._turn_pending:
            self._turn_pending = True
            asyncio.get_running_loop().call_soon(self._next_turn)

    def _next_turn(self) -> None:
        self._turn_pending = False
        self._granted = 0
        self._grant()
