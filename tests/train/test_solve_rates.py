"""The paper's Fig. 9 metric: cumulative solve rate per split, on hand-made rounds (fast, pure Python)."""

from __future__ import annotations

from synthgen.train.solve_rates import CumulativeSolveRates, append_csv, truncate_csv


def figures(rates: CumulativeSolveRates, round_: int) -> dict[str, tuple]:
    return {r["bin"]: (r["seen"], r["solved_ever"], r["cumulative_solve_rate"]) for r in rates.rows(round_, round_)}


def test_a_problem_counts_from_its_first_solve_and_stays_counted():
    rates = CumulativeSolveRates({"easy": 4, "hard": 2})
    # round 0: e1 solved (3 of 8), e2 never; h1 never.   round 1: e1 not solved now, e2 solved.
    # round 2: e3 drawn and not solved, h1 solved once.   round 3: nothing new solved.
    rates.update(0, [("easy", "e1", 3), ("easy", "e2", 0), ("hard", "h1", 0)])
    rates.update(1, [("easy", "e1", 0), ("easy", "e2", 1)])
    rates.update(2, [("easy", "e3", 0), ("hard", "h1", 1)])
    rates.update(3, [("easy", "e1", 0), ("easy", "e3", 0), ("hard", "h2", 0)])
    assert figures(rates, 0) == {"easy": (2, 1, 0.25), "hard": (1, 0, 0.0)}
    assert figures(rates, 1) == {"easy": (2, 2, 0.5), "hard": (1, 0, 0.0)}
    assert figures(rates, 2) == {"easy": (3, 2, 0.5), "hard": (1, 1, 0.5)}
    assert figures(rates, 3) == {"easy": (3, 2, 0.5), "hard": (2, 1, 0.5)}  # an unsolved round takes nothing back
    # A per-round rate would fall to 0 in round 3; the cumulative one never falls.
    rows = [rates.rows(r, r) for r in range(4)]
    for split in ("easy", "hard"):
        series = [next(x["cumulative_solve_rate"] for x in rs if x["bin"] == split) for rs in rows]
        assert series == sorted(series)
    assert next(x for x in rows[3] if x["bin"] == "hard")["solved_of_seen"] == 0.5


def test_resume_forgets_the_rounds_it_will_redo(tmp_path):
    rates = CumulativeSolveRates({"easy": 2})
    rates.update(0, [("easy", "a", 0)])
    rates.update(1, [("easy", "a", 2), ("easy", "b", 1)])
    again = CumulativeSolveRates({"easy": 2})
    again.load_state_dict(rates.state_dict())
    again.forget_from(1)
    assert figures(again, 5) == {"easy": (1, 0, 0.0)}
    path = tmp_path / "c.csv"
    append_csv(path, ["round", "x"], [{"round": 0, "x": 1}, {"round": 1, "x": 2}, {"round": 2, "x": 3}])
    truncate_csv(path, 1)
    assert path.read_text().splitlines() == ["round,x", "0,1"]
