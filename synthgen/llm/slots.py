"""The request bound of synthgen.llm.client: `max_in_flight` slots, handed out most urgent first.

A plain asyncio.Semaphore serves waiters first come, first served. The turn loop keeps many more
units of work active than there are slots, so requests wait for one; which waiter gets the next
free slot decides how a run ends. Serving first the request whose unit has the most requests still
ahead of it (longest remaining first, the list-scheduling rule for a short makespan) moves every
unit along at about the same pace, so the server stays full until the last requests instead of
draining on a few lineages that started late. Equal priorities are served in arrival order.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools


class PrioritySlots:
    """`size` slots; `await acquire(priority)` waits for one (higher priority first), `release()` frees it."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("size must be >= 1")
        self.free = size
        self._waiters: list[tuple[float, int, asyncio.Future]] = []  # (-priority, arrival, future)
        self._arrival = itertools.count()

    async def acquire(self, priority: float = 0.0) -> None:
        if self.free > 0:  # (a free slot means nobody waits: release hands slots to waiters first)
            self.free -= 1
            return
        future = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (-priority, next(self._arrival), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # the slot was handed over just as the caller gave up: pass it on
            raise

    def release(self) -> None:
        """Free a slot, handing it to the most urgent live waiter."""
        self.free += 1
        while self.free > 0 and self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():  # (a cancelled waiter is skipped here rather than searched for)
                self.free -= 1
                future.set_result(None)
