"""Frontier Learning's buffer: regret, priority, rank-based Zipf draws (a statistical test), eviction, retirement."""

from __future__ import annotations

import math
import random
from collections import Counter
from types import SimpleNamespace

import pytest

from synthgen.online.buffer import EASY, HARD, INFORMATIVE, UNSEEN, Entry, FrontierBuffer
from synthgen.online.log import OnlineLog
from synthgen.online.pool import OnlinePool
from synthgen.online.settings import BufferSettings, OnlineSettings
from synthgen.train.frontier import regret as group_regret


def chi2_sf(x: float, dof: int) -> float:
    """P(chi-square with dof degrees of freedom > x), by the Wilson-Hilferty normal approximation."""
    z = ((x / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


def entry(index: int, window=(), drawn: int = 0) -> Entry:
    e = Entry(index, f"p{index}", "deduction", f"l{index}", "data", 0, drawn)
    e.window.extend(window)
    return e


def buffer_with(windows: list, **settings) -> FrontierBuffer:
    buf = FrontierBuffer(BufferSettings(capacity=len(windows), **settings))
    for i, window in enumerate(windows):
        buf.admit(entry(i, window), 0)
    return buf


def test_regret_is_zero_for_impossible_and_mastered_groups_and_positive_between():
    assert group_regret(0, 8) == 0 and group_regret(8, 8) == 0
    assert group_regret(1, 8) == pytest.approx(0.875) and group_regret(4, 8) == pytest.approx(0.5)
    buf = buffer_with([[], [(0, 8), (8, 8)], [(1, 8), (4, 8)]])
    unseen, extremes, frontier = (buf.entries[i] for i in range(3))
    assert buf.regret(unseen) == 0.5  # R_0 before any group
    assert buf.regret(extremes) == 0 and buf.success(extremes) == 0.5
    assert buf.regret(frontier) == pytest.approx((0.875 + 0.5) / 2)


def test_priority_adds_staleness_and_the_window_keeps_the_newest_groups():
    buf = buffer_with([[(4, 8)]], staleness=0.05, window=2)
    e = buf.entries[0]
    assert buf.priority(e, 10) == pytest.approx(0.5 + 0.05 * 10)
    for group in [(8, 8), (8, 8)]:
        buf.record(0, *group)
    assert list(e.window) == [(8, 8), (8, 8)] and buf.regret(e) == 0 and e.groups == 2


def test_success_classes_set_the_mutation_probability():
    buf = buffer_with([[], [(0, 32)], [(16, 32)], [(32, 32)]])
    classes = [buf.success_class(buf.entries[i]) for i in range(4)]
    assert classes == [UNSEEN, HARD, INFORMATIVE, EASY]
    assert [buf.mutation_probability(buf.entries[i]) for i in range(4)] == [0.0, 0.02, 0.4, 0.25]


@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_draws_follow_the_rank_zipf_distribution(temperature):
    # Ten problems of distinct regret; no staleness, so a draw does not move the ranking.
    buf = buffer_with(
        [[(s, 8)] for s in range(1, 8)] + [[], [(0, 8)], [(8, 8)]], staleness=0.0, zipf_temperature=temperature
    )
    ranked = buf.ranked(0)
    assert ranked[0].index == 0  # 1 of 8 solved: regret 0.875, the highest
    draws = 20_000
    picks = buf.sample(0, draws, random.Random(1))
    observed = Counter(rank for _, rank, _, _ in picks)
    probs = buf.rank_probabilities(len(ranked))
    assert probs == pytest.approx(
        [k ** (-1 / temperature) / sum(j ** (-1 / temperature) for j in range(1, 11)) for k in range(1, 11)]
    )
    chi2 = sum((observed[k + 1] - draws * p) ** 2 / (draws * p) for k, p in enumerate(probs))
    assert chi2_sf(chi2, len(probs) - 1) > 1e-3
    # The same test rejects draws that ignore the ranks: it has the power to fail.
    uniform = sum((observed[k + 1] - draws / 10) ** 2 / (draws / 10) for k in range(10))
    assert chi2_sf(uniform, 9) < 1e-6


def test_admitting_into_a_full_buffer_evicts_the_lowest_priority():
    buf = buffer_with([[(4, 8)], [(8, 8)], [(2, 8)]], staleness=0.0)
    evicted = buf.admit(entry(3, [(3, 8)]), 0)
    assert evicted.index == 1 and evicted.status == "evicted"
    assert sorted(e.index for e in buf.active()) == [0, 2, 3]


def test_mastered_problems_retire_only_with_enough_groups():
    buf = buffer_with([[(8, 8)], [(8, 8), (8, 8)], [(8, 8), (7, 8)]], retire_min_groups=2, retire_at=0.95)
    assert [e.index for e in buf.retire_mastered()] == [1]
    assert buf.entries[1].status == "retired" and buf.entries[2].status == "active"


def test_state_round_trip():
    buf = buffer_with([[(1, 8)], [(8, 8)]])
    buf.entries[0].attempts = [("answer", 1.0), ("wrong", 0.0)]
    again = FrontierBuffer(buf.s)
    again.load_state_dict(buf.state_dict())
    assert again.state_dict() == buf.state_dict()


def pool_of(n: int, windows=None, **buffer) -> OnlinePool:
    online = OnlineSettings(buffer={"capacity": n, **buffer}, worker={"max_pending": 1_000_000})
    geometry = SimpleNamespace(prompts=4, round_of_step=lambda step: step)
    prompt_fn = lambda row: [{"role": "user", "content": row["problem_id"]}]  # noqa: E731
    pool = OnlinePool(online, ["deduction"], 0, geometry, prompt_fn, OnlineLog("unused", "h", enabled=False))
    for i in range(n):
        pool.add({"problem_id": f"p{i}", "env": "deduction", "code": "def f(x):\n    return x"}, origin="data", step=0)
        if windows:
            pool.buffer.entries[i].window.extend(windows[i])
    return pool


def test_each_drawn_slot_explores_with_phi_and_each_drawn_problem_mutates_by_its_class():
    pool = pool_of(6, windows=[[(4, 8)]] * 6, explore=0.3)  # every problem informative: p_mut 0.4
    pool.draw_until(1999, step=0)
    kinds = Counter(r.kind for r in pool.queue.others)
    slots = 2000 * 4
    for count, n, p in ((kinds["explore"], slots, 0.3), (kinds["mutate"], slots - kinds["explore"], 0.4)):
        z = (count - n * p) / math.sqrt(n * p * (1 - p))
        assert abs(z) < 4, (count, n, p)


def test_rounds_are_drawn_once_and_replayed_from_the_schedule():
    pool = pool_of(5)
    pool.draw_until(3, step=0)
    first = [list(pool.chunk(r)) for r in range(4)]
    assert all(len(c) == 4 for c in first)
    assert [pool.chunk(r) for r in range(4)] == first  # the sampler reads the draw, never redraws
    assert pool.late_rounds == 0
    pool.chunk(4)  # not drawn yet: drawn late, and counted
    assert pool.late_rounds == 1
