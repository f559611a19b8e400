"""SCALER's controller per environment: the update rule, the realisation of a real d, retirement, re-admission."""

from __future__ import annotations

import pytest

from synthgen.online.controller import Curation
from synthgen.online.settings import ControllerSettings
from synthgen.online.worker import EXPLORE, MUTATE, RESPAWN, OnlineRequest, RequestQueue


def curation(envs=("induction", "deduction"), **settings) -> Curation:
    return Curation(list(envs), ControllerSettings(**settings))


def test_d_follows_accuracy_minus_tau_clipped_to_0_and_D():
    c = curation(beta=1.0, tau=0.5, max_level=2, k_slope=1000, k_zero=1000, k_sat=1000)
    c.observe(0, {"induction": (8, 8)})  # acc 1: d 0 -> 0.5
    c.observe(1, {"induction": (6, 8)})  # acc 0.75: d -> 0.75
    assert c.envs["induction"].d == pytest.approx(0.75)
    c.observe(2, {"induction": (0, 8)})  # acc 0: d -> 0.25
    c.observe(3, {"induction": (0, 8)})  # d -> -0.25, clipped to 0
    assert c.envs["induction"].d == 0.0
    for r in range(4, 10):
        c.observe(r, {"induction": (8, 8)})
    assert c.envs["induction"].d == 2.0  # clipped at D
    assert c.envs["deduction"].d == 0.0  # not observed: unchanged


def test_a_real_d_is_realised_as_h_requests_one_level_up():
    c = curation(max_level=4)
    c.envs["induction"].d = 2.3
    assert sorted(c.levels("induction", 10)) == [2] * 7 + [3] * 3  # SCALER's own example
    c.envs["induction"].d = 4.0
    assert c.levels("induction", 3) == [4, 4, 4]


def test_level_bands_slice_the_acceptance_band_from_easy_to_hard():
    c = curation(max_level=4)
    assert c.band(0, 0.125, 0.625) == (0.525, 0.625)
    assert c.band(4, 0.125, 0.625) == (0.125, 0.225)


def test_retirement_rules_and_readmission():
    c = curation(
        envs=("induction", "deduction", "fuzzing"),
        k_zero=3,
        k_sat=2,
        k_slope=4,
        max_level=1,
        beta=1.0,
        tau=0.5,
        readmit_after=8,
    )
    rows = [row for r in range(3) for row in c.observe(r, {"induction": (0, 8)})]
    assert [r["event"] for r in rows if r["event"]] == ["retire"] and "accuracy 0" in rows[-1]["reason"]
    assert c.active_envs() == ["deduction", "fuzzing"]
    rows = [row for r in range(3, 6) for row in c.observe(r, {"deduction": (8, 8)})]
    assert any(r["event"] == "retire" and "d = D" in r["reason"] for r in rows)
    assert c.active_envs() == ["fuzzing"]
    # The last active environment is kept, whatever its numbers say.
    rows = [row for r in range(6, 9) for row in c.observe(r, {"fuzzing": (0, 8)})]
    assert any(r["event"] == "kept" for r in rows) and c.active_envs() == ["fuzzing"]
    rows = c.observe(10, {})
    assert c.active_envs() == ["induction", "fuzzing"] and rows[0]["event"] == "readmit"


def test_a_flat_d_retires_by_its_slope():
    c = curation(envs=("induction", "deduction"), k_slope=4, k_zero=100, k_sat=100, beta=1.0, tau=0.5)
    for r in range(4):  # acc 0.5 = tau: d stays put, slope 0
        c.observe(r, {"induction": (4, 8)})
    assert c.active_envs() == ["deduction"]


def test_state_round_trip():
    c = curation()
    c.observe(0, {"induction": (3, 8)})
    again = curation()
    again.load_state_dict(c.state_dict())
    assert again.state_dict() == c.state_dict()


def test_queue_takes_respawns_first_and_drops_the_oldest_beyond_its_bound():
    q = RequestQueue(max_pending=3)
    assert q.push(OnlineRequest("a", EXPLORE, 0)) == []
    q.push(OnlineRequest("b", MUTATE, 0, env="induction", parent=1))
    q.push(OnlineRequest("x1", RESPAWN, 1, env="induction", parent=1))
    dropped = q.push(OnlineRequest("c", EXPLORE, 1))
    assert [r.request_id for r in dropped] == ["a"]
    taken = q.take(2)
    assert [r.request_id for r in taken] == ["x1", "b"]
    q.push_front(taken)
    again = RequestQueue(3)
    again.load_state_dict(q.state_dict())
    assert [r.request_id for r in again.take(5)] == ["x1", "b", "c"]
