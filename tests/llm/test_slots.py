"""The request bound hands free slots to the most urgent waiter first, in arrival order among equals."""

from __future__ import annotations

import asyncio

from synthgen.llm.client import PrioritySlots


async def _served_order(slots: PrioritySlots, priorities: list[float]) -> list[int]:
    order: list[int] = []

    async def one(i: int, priority: float) -> None:
        await slots.acquire(priority)
        order.append(i)

    waiters = [asyncio.create_task(one(i, p)) for i, p in enumerate(priorities)]
    await asyncio.sleep(0)  # every waiter queues
    for _ in priorities:
        slots.release()
        await asyncio.sleep(0)
    await asyncio.gather(*waiters)
    return order


async def test_higher_priority_first_then_arrival_order():
    slots = PrioritySlots(1)
    await slots.acquire()  # the one slot is taken: everyone below waits
    assert await _served_order(slots, [1, 5, 3, 5, 1]) == [1, 3, 2, 0, 4]


async def test_a_free_slot_is_taken_at_once_and_the_bound_holds():
    slots = PrioritySlots(2)
    await slots.acquire(0)
    await slots.acquire(9)
    blocked = asyncio.create_task(slots.acquire(100))
    await asyncio.sleep(0)
    assert not blocked.done()  # two of two taken, whatever the priority
    slots.release()
    await blocked
    assert slots.free == 0


async def test_a_waiter_that_gives_up_does_not_take_or_lose_a_slot():
    slots = PrioritySlots(1)
    await slots.acquire()
    quitter = asyncio.create_task(slots.acquire(10))
    stayer = asyncio.create_task(slots.acquire(1))
    await asyncio.sleep(0)
    quitter.cancel()
    await asyncio.sleep(0)
    slots.release()  # goes to the one still waiting, not to the cancelled one
    await stayer
    slots.release()
    assert slots.free == 1
    # Handed over just as the waiter was cancelled: the slot passes on rather than leaking.
    await slots.acquire()
    late = asyncio.create_task(slots.acquire(5))
    await asyncio.sleep(0)
    slots.release()
    late.cancel()
    await asyncio.gather(late, return_exceptions=True)
    assert slots.free == 1
