"""The curricula outside synthgen: a schedule as dataset indices, drawn as synthgen train draws it (fast)."""

from __future__ import annotations

from collections import Counter

import pytest

from synthgen.errors import UserError
from synthgen.interop.curriculum import CurriculumDraw, ScheduleIndices, schedule_indices
from synthgen.train.curriculum import get_schedule, schedule_from_dict

ROWS = ["easy"] * 6 + ["medium"] * 5 + ["hard"] * 7  # row i's bin
PER_STEP = schedule_from_dict({"steps": {0: {"easy": 1}, 1: {"medium": 1}, 2: {"hard": 1}, 3: {"easy": 1, "hard": 1}}})


def test_each_step_draws_the_schedules_bins_and_walks_a_bin_before_repeating():
    order = ScheduleIndices(ROWS, PER_STEP, batch_size=4, steps=6)
    batches = [order.batch(s) for s in range(6)]
    assert [{ROWS[i] for i in b} for b in batches[:3]] == [{"easy"}, {"medium"}, {"hard"}]
    assert all({ROWS[i] for i in b} <= {"easy", "hard"} for b in batches[3:])
    # Each bin's rows come once before any comes again: the first 6 easy draws are the 6 easy rows.
    easy = [i for b in batches for i in b if ROWS[i] == "easy"]
    assert sorted(easy[:6]) == [i for i, b in enumerate(ROWS) if b == "easy"]
    assert list(order) == [i for b in batches for i in b] and len(order) == 24


def test_deterministic_by_seed_and_equal_to_the_trl_samplers_draw():
    a = list(schedule_indices(ROWS, "uniform", batch_size=3, steps=10, seed=1))
    assert a == list(schedule_indices(ROWS, "uniform", batch_size=3, steps=10, seed=1))
    assert a != list(schedule_indices(ROWS, "uniform", batch_size=3, steps=10, seed=2))
    pytest.importorskip("torch")
    from synthgen.train.trainer import CurriculumRepeatSampler

    schedule = get_schedule("uniform").scaled(10)
    trl = CurriculumRepeatSampler(
        ROWS,
        mini_repeat_count=1,
        batch_size=3,
        repeat_count=1,
        weights_fn=lambda r, s: schedule.weights_at(s),
        steps_per_round=1.0,
        seed=1,
    )
    assert isinstance(trl, CurriculumDraw)  # one implementation of the draw
    assert [i for r in range(10) for i in trl.chunk(r)] == a


def test_the_paper_schedule_is_scaled_to_the_run_and_its_mix_holds_per_phase():
    bins = ["easy_medium"] * 50 + ["medium"] * 50 + ["easy"] * 50
    order = ScheduleIndices(bins, "reverse-medium", batch_size=20, steps=40)
    # reverse-medium over 40 steps: medium only to step 17 (17500 / 1000), then 0.25 / 0.75, then easy(-medium) only.
    assert order.weights(0) == {"medium": 1.0} and order.weights(39) == {"easy_medium": 1.0}
    assert order.weights(18) == pytest.approx({"easy_medium": 0.25, "medium": 0.75})
    assert {bins[i] for s in range(17) for i in order.batch(s)} == {"medium"}
    late = Counter(bins[i] for s in range(20, 40) for i in order.batch(s))
    assert set(late) == {"easy_medium"}


def test_start_step_skips_what_a_resumed_run_trained_on():
    full = ScheduleIndices(ROWS, "soft", batch_size=4, steps=8)
    resumed = ScheduleIndices(ROWS, "soft", batch_size=4, steps=8, start_step=5)
    assert list(resumed) == list(full)[5 * 4 :] and len(resumed) == 12


def test_refuses_what_it_cannot_draw():
    with pytest.raises(UserError, match="frontier"):
        ScheduleIndices(ROWS, "frontier", batch_size=4, steps=8)
    with pytest.raises(UserError, match="unknown curriculum"):
        ScheduleIndices(ROWS, "no-such", batch_size=4, steps=8)
    with pytest.raises(UserError, match="at least one row"):
        ScheduleIndices([], "uniform", batch_size=4, steps=8)


def test_a_bin_the_data_lacks_gives_its_weight_to_the_others(caplog):
    order = ScheduleIndices(["medium"] * 4 + ["hard"] * 4, "classic", batch_size=4, steps=40)
    assert order.weights(0) == {"hard": 0.5, "medium": 0.5}  # classic starts on easy: none here
    assert "easy" in caplog.text
