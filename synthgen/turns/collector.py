"""The cycle collector while a turn loop runs: fewer, larger young collections, and nothing made
before the run walked again.

With thousands of calls queued, each a task with frames, futures and a request body, the default
thresholds (a young collection every 700 allocations, an older one every 10 of those) keep walking
objects that are all alive, and the server waits for requests the client is still building: the
one speed setting of the LLM path that moves bench/llm.py's wall time by more than 5% (its history
in bench/README.md). What is alive when the run starts (imports, settings, the plan) is frozen out
of the collector's way and young collections run every 50,000 allocations; garbage cycles are still
collected, a little later."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_THRESHOLD = 50_000


@contextlib.contextmanager
def quiet_collector(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Within the block, the tuned collector; the thresholds and the frozen set are restored after
    (what a caller had frozen before stays frozen)."""
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    gc.collect()
    gc.freeze()
    gc.set_threshold(young, 20, 20)  # older generations: every 20 of the younger one's collections
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not frozen_before:
            gc.unfreeze()
