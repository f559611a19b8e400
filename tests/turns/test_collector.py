"""The turn loop's collector settings: young collections far apart, what was alive frozen, and
everything as it was afterwards; garbage cycles made inside are still collected."""

from __future__ import annotations

import gc
import weakref

from synthgen.turns.collector import YOUNG_THRESHOLD, quiet_collector


class _Node:
    pass


def test_thresholds_and_frozen_set_are_set_inside_and_restored_after():
    before = gc.get_threshold()
    with quiet_collector():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0  # what was alive is out of the collector's way
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cycles_made_inside_are_still_collected():
    with quiet_collector():
        node = _Node()
        node.self = node  # a cycle: only the collector frees it
        alive = weakref.ref(node)
        del node
        kept = [[] for _ in range(3 * YOUNG_THRESHOLD)]  # enough live allocations for collections to run
        assert alive() is None
        del kept


def test_restored_when_the_block_raises():
    before = gc.get_threshold()
    try:
        with quiet_collector():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_what_a_caller_froze_before_stays_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with quiet_collector():
            pass
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
