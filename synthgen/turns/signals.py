"""How a stage that runs turns stops on SIGTERM or SIGINT: at once, saving what is done (the turn
loop writes its rows and exits 143 or 130), even with thousands of units queued."""

from __future__ import annotations

import asyncio
import gc
import signal
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def catch_signals(stop: asyncio.Event, caught: list[int], cancel) -> dict[int, Any]:
    """SIGTERM/SIGINT set `stop` and `cancel()` the running work instead of killing the process;
    returns the signals handled, each with the handler it had before.

    Not `loop.add_signal_handler`: its callback joins the end of the loop's ready queue, and with
    thousands of units one loop turn runs thousands of callbacks (parsing, static checks,
    mutants: seconds of CPU) before it. A plain handler puts the stop at the head of the queue
    instead: it runs as soon as the callback now running returns (between two callbacks, so no
    future is cancelled in the middle of code that is completing it), and every callback still
    queued finds its unit cancelled and unwinds instead of working."""
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
