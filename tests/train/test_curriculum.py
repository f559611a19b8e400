"""Curriculum schedules as data: the paper's Tables 2 and 4, the scaling rule, custom files, frontier (fast)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from synthgen.errors import UserError
from synthgen.train.curriculum import (
    NAMES,
    get_schedule,
    resolve_weights,
    schedule_from_dict,
)
from synthgen.train.frontier import FrontierPolicy, group_regret
from synthgen.train.settings import FrontierSettings

# The paper's Tables 2 and 4, transcribed independently of synthgen.train.curriculum: (start, end, easy, medium, hard).
PAPER_TABLES = {
    "soft": [
        (0, 7500, 0.80, 0.15, 0.05),
        (7500, 17500, 0.15, 0.80, 0.05),
        (17500, 30000, 0.15, 0.40, 0.45),
        (30000, 40000, 0.05, 0.15, 0.80),
    ],
    "hard": [(0, 7500, 0.90, 0.05, 0.05), (7500, 17500, 0.05, 0.90, 0.05), (17500, 40000, 0.05, 0.05, 0.90)],
    "classic": [
        (0, 10000, 1, 0, 0),
        (10000, 15000, 0.75, 0.25, 0),
        (15000, 25000, 0, 1, 0),
        (25000, 30000, 0, 0.75, 0.25),
        (30000, 40000, 0, 0, 1),
    ],
    "reverse-hard": [
        (0, 10000, 0, 0, 1),
        (10000, 15000, 0, 0.25, 0.75),
        (15000, 25000, 0, 1, 0),
        (25000, 30000, 0.25, 0.75, 0),
        (30000, 40000, 1, 0, 0),
    ],
    "reverse-medium": [(0, 17500, 0, 1, 0), (17500, 20000, 0.25, 0.75, 0), (20000, 40000, 1, 0, 0)],
    "medium-only": [(0, 40000, 0, 1, 0)],
}


@pytest.mark.parametrize("name", sorted(PAPER_TABLES))
def test_paper_tables_match_spec(name):
    s = get_schedule(name)
    assert s.length == 40000
    assert [(p.start, p.end) for p in s.phases] == [(a, b) for a, b, *_ in PAPER_TABLES[name]]
    easy_bin = "easy_medium" if name == "reverse-medium" else "easy"
    for a, b, e, m, h in PAPER_TABLES[name]:
        for step in (a, b - 1):
            w = s.weights_at(step)
            assert w.get(easy_bin, 0) == pytest.approx(e) and w.get("medium", 0) == pytest.approx(m)
            assert w.get("hard", 0) == pytest.approx(h)


def test_uniform_is_over_problems_and_uniform_bins_over_bins():
    present = {"easy": 5, "medium": 3, "hard": 1}
    w = get_schedule("uniform").weights_at(123)
    assert resolve_weights(w, present) == pytest.approx({"easy": 5 / 9, "medium": 3 / 9, "hard": 1 / 9})
    w = get_schedule("uniform-bins").weights_at(123)
    assert resolve_weights(w, present) == pytest.approx({"easy": 1 / 3, "medium": 1 / 3, "hard": 1 / 3})
    assert set(NAMES) == {"uniform", "uniform-bins", *PAPER_TABLES}


def test_past_the_end_the_last_phase_holds():
    assert get_schedule("classic").weights_at(10**6) == {"hard": 1.0}


def test_scaling_rule_rounds_boundaries_and_drops_empty_phases():
    s = get_schedule("reverse-medium").scaled(400)
    assert [(p.start, p.end) for p in s.phases] == [(0, 175), (175, 200), (200, 400)]
    assert "round(b * 400 / 40000)" in s.scale_note
    tiny = get_schedule("reverse-medium").scaled(4)  # 17500 -> 1.75 -> 2, 20000 -> 2: middle phase gone
    assert [(p.start, p.end) for p in tiny.phases] == [(0, 2), (2, 4)]
    assert "dropped" in tiny.scale_note
    three = get_schedule("reverse-medium").scaled(3)  # 1.3125 -> 1 and exactly 1.5 -> 2 (halves up)
    assert [(p.start, p.end) for p in three.phases] == [(0, 1), (1, 2), (2, 3)]
    same = get_schedule("soft").scaled(50000)
    assert same.phases == get_schedule("soft").phases and "not scaled" in same.scale_note


def test_custom_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("bins: {easy: easy_medium}\nlength: 10\nsteps:\n  0: {medium: 1}\n  4: {easy: 1, hard: 3}\n")
    s = get_schedule(str(path))
    assert s.name == "mine" and s.weights_at(3) == {"medium": 1.0}
    assert s.weights_at(4) == pytest.approx({"easy_medium": 0.25, "hard": 0.75})
    assert s.scaled(5).phases[1].start == 2


def test_custom_file_without_length_is_in_absolute_steps():
    s = schedule_from_dict({"steps": {0: {"medium": 1}, 100: {"easy": 1}}})
    assert s.scaled(10).phases == s.phases and "absolute" in s.scaled(10).scale_note
    assert s.weights_at(99) == {"medium": 1.0} and s.weights_at(10**6) == {"easy": 1.0}
    assert "100 - end" in s.render()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"steps": {5: {"easy": 1}}}, "start at step 0"),
        ({"steps": {0: {"easy": -1}}}, "must be a number"),
        ({"steps": {0: {"easy": 0}}}, "all zero"),
        ({"steps": {0: {"easy": 1}}, "lenght": 3}, "unknown key"),
        ({"steps": {0: {"easy": 1}, 5: {"hard": 1}}, "length": 5}, "above the last start step"),
        ({}, "steps"),
    ],
)
def test_custom_schedule_errors(data, message):
    with pytest.raises(UserError, match=message):
        schedule_from_dict(data)


def test_unknown_curriculum_is_a_user_error():
    with pytest.raises(UserError, match="unknown curriculum"):
        get_schedule("backwards")


def test_missing_bins_share_their_weight():
    assert resolve_weights({"easy": 0.25, "medium": 0.75}, {"medium": 2, "hard": 1}) == {"medium": 1.0}
    assert resolve_weights({"easy_medium": 1.0}, {"medium": 2, "hard": 2}) == {"medium": 0.5, "hard": 0.5}


def test_group_regret():
    assert group_regret([1, 0, 0, 0]) == (0.75, 1, 4)
    assert group_regret([1, 1, 1, 1])[0] == 0 and group_regret([0, 0])[0] == 0
    assert group_regret([1, None, 0, None]) == (0.5, 1, 2)  # infra is not a data point
    assert group_regret([None, None]) is None


def test_frontier_moves_weight_to_the_bin_with_regret_and_lags():
    f = FrontierPolicy(["easy", "medium", "hard"], FrontierSettings(smoothing=0.5, staleness=0.0), lag=2)
    for r in range(30):  # easy always solved, hard never, medium sometimes: medium is the frontier
        f.record(r, {"easy": (2, 0.0, 16, 16), "medium": (2, 1.5, 4, 16), "hard": (2, 0.0, 0, 16)})
    w = f.weights_for_round(30)
    assert w["medium"] > 0.8 and min(w["easy"], w["hard"]) >= 0.1 / 3 - 1e-9  # the floor holds
    assert f.weights_for_round(0) == pytest.approx({"easy": 1 / 3, "medium": 1 / 3, "hard": 1 / 3})
    again = FrontierPolicy(["easy", "medium", "hard"], FrontierSettings(smoothing=0.5, staleness=0.0), lag=2)
    again.load_state_dict(f.state_dict())
    assert again.weights_for_round(30) == w  # replay from saved stats is exact


def test_show_schedule_does_not_import_torch():
    code = (
        "import sys; from synthgen.train.curriculum import describe_schedule; "
        "print(describe_schedule('reverse-medium', 400)); assert 'torch' not in sys.modules"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "17500 - 20000      0.25    0.75" in out and "175 - 200" in out


def test_cli_show_schedule_matches_spec(cli):
    rc, out, _ = cli("train", "--show-schedule", "reverse-medium")
    assert rc == 0
    assert "easy = bin 'easy_medium'" in out
    for line in (
        "0 - 17500      0.00    1.00    0.00",
        "17500 - 20000      0.25    0.75    0.00",
        "20000 - 40000      1.00    0.00    0.00",
    ):
        assert line in out
    rc, out, _ = cli("train", "--show-schedule", "frontier")
    assert rc == 0 and "1[s >= 1] - s/n" in out


def test_cli_a_curriculum_naming_a_bin_the_data_lacks_stops(cli, tmp_path):
    """`train --curriculum hard` on data with no hard bin would train 50/50 easy/medium: it stops instead,
    in one line naming the missing bin, the bins present and the flag that shares the weight out."""
    from tests.helpers.train import write_binned

    data = write_binned(tmp_path, bins=("easy", "medium"))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    rc, out, err = cli(
        "train", "--data", data, "--model", tmp_path / "model", "--curriculum", "hard", "--learning-rate", "1e-6",
        "--output", tmp_path / "out", "--max-steps", "2",
    )  # fmt: skip
    assert rc == 2 and err.strip().count("\n") == 0, err
    assert "'hard' draws from bin(s) hard" in err and "easy (4), medium (4)" in err and "--missing-bins share" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_every_bin_and_every_problem_are_never_mapped_to_a_data_bin():
    s = schedule_from_dict(
        {"bins": {"*": "hard", "**": "easy", "a": "medium"}, "steps": {0: {"*": 1, "**": 1, "a": 2}}}
    )
    assert s.weights_at(0) == pytest.approx({"*": 0.25, "**": 0.25, "medium": 0.5})
    assert s.bins_used() == ["*", "**", "medium"]
