"""`train --online` on a CPU: a tiny model as the policy, the scripted server as teacher (and student, with a
learning curve), CurveScorer as the reward, so the policy's pass rates move as if it learned."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from tests.helpers.online import bank_rows, online_settings, write_bin

pytest.importorskip("trl")

pytestmark = [pytest.mark.slow, pytest.mark.train]

GAIN = 10.0  # levels per 100 steps: a level-3 problem (0.5 at step 0) is mastered by step ~15


def train(settings: dict, gain: float = GAIN):
    from synthgen.online.run import run_online
    from synthgen.train.settings import TrainSettings
    from tests.helpers.curve import CurveScorer

    scorer = CurveScorer(gain)
    out = run_online(TrainSettings(**settings), scorer=scorer, callbacks=[scorer.callback()])
    return out, scorer


def table(out, name: str) -> pl.DataFrame:
    return pl.read_parquet(out / "online" / name / "*.parquet")


@pytest.fixture(scope="module")
def online_run(tmp_path_factory, online_run_dir, tiny_policy, curve_server):
    root = tmp_path_factory.mktemp("online")
    out = root / "out"
    # Bank levels 1-4: a level-1 problem is solved almost always from step 0, so the policy masters
    # one while the teacher can still land a harder variant in the band. Levels 2-4 alone leave it
    # to chance: a level-2 problem is seldom drawn (low regret) and is evicted before its window
    # shows mastery, and after step ~20 every level the scripted bank has is too easy for the band.
    data = write_bin(root, bank_rows(levels=(1, 2, 3, 4)))
    settings = online_settings(
        online_run_dir,
        out,
        tiny_policy,
        curve_server.url,
        steps=24,
        buffer={"capacity": 8, "retire_min_groups": 2},
        worker={"budget": 3, "log_every": 1},
        accept={"max_turns": 3},
    )
    settings["data"] = [str(data)]
    return train(settings)


def test_the_pool_grows_and_turns_over(online_run):
    out, _ = online_run
    problems, events, buffer = table(out, "problems"), table(out, "events"), table(out, "buffer")
    origins = problems["origin"].value_counts().to_dict(as_series=False)
    counts = dict(zip(origins["origin"], origins["count"]))
    assert counts["data"] == 8 and counts.get("explore", 0) + counts.get("mutate", 0) >= 3
    assert events.filter(pl.col("event") == "evict").height >= 1
    sizes = buffer.group_by("step").len()
    assert sizes["len"].max() <= 8
    first = set(buffer.filter(pl.col("step") == 0)["registry_index"])
    last = set(buffer.filter(pl.col("step") == buffer["step"].max())["registry_index"])
    assert len(first - last) >= 4  # most of the first buffer has left it
    summary = json.loads((out / "train_summary.json").read_text())
    assert summary["global_step"] == 24 and summary["online"]["late_rounds"] == 0
    # Everything admitted by the worker was measured in SvS's band by the policy that was training.
    admitted = problems.filter(pl.col("origin") != "data")
    assert admitted["pass_rate"].is_between(0.125, 0.625).all() and admitted["policy_step"].max() > 0


def test_mastered_problems_retire_and_their_lineage_asks_for_a_harder_variant(online_run):
    out, _ = online_run
    events, turns = table(out, "events"), table(out, "turns")
    retired = events.filter(pl.col("event") == "retire")
    assert retired.height >= 1 and (retired["success"] > 0.95).all()
    respawns = events.filter(pl.col("event") == "respawn")
    assert set(respawns["registry_index"]) == set(retired["registry_index"])  # respawn probability 1
    ran = turns.filter(pl.col("request_kind") == "respawn")
    assert ran.height >= 1
    problems = table(out, "problems")
    ids = dict(zip(problems["registry_index"], problems["problem_id"]))
    first_turns = ran.filter(pl.col("turn") == 1)
    assert (first_turns["strategy"] == "harder").all()  # a mastered parent: the paper's "harder"
    assert set(first_turns["parent_id"]) <= {ids[i] for i in retired["registry_index"]}
    # A respawned variant that landed in the band continues its parent's lineage.
    lineage = dict(zip(problems["problem_id"], problems["lineage_id"]))
    children = problems.filter(pl.col("origin") == "respawn")
    assert children.height >= 1
    for row in children.iter_rows(named=True):
        assert row["lineage_id"] == lineage[ids[int(row["request_id"][1:])]]


def test_priorities_follow_the_measured_pass_rates(online_run):
    out, _ = online_run
    buffer = table(out, "buffer").filter(pl.col("groups") >= 1)
    # Priority is the windowed regret plus 0.05 per stale round, as Frontier Learning defines it.
    assert ((buffer["priority"] - buffer["regret"] - 0.05 * buffer["staleness"]).abs() < 1e-9).all()
    by_class = buffer.group_by("success_class").agg(pl.col("regret").mean(), pl.col("rank").mean())
    regret = dict(zip(by_class["success_class"], by_class["regret"]))
    assert regret["informative"] > 0.3 > regret.get("too_easy", 0.0)
    # The problems the policy has all but mastered fall down the ranking as their success rises.
    mastered = buffer.filter(pl.col("success") >= 0.95)
    informative = buffer.filter(pl.col("success_class") == "informative")
    assert mastered.height and mastered["rank"].mean() > informative["rank"].mean()


def test_the_run_draws_follow_the_buffer_ranks(online_run):
    out, scorer = online_run
    draws = table(out, "draws")
    for rank, n, p in zip(draws["rank"], draws["candidates"], draws["probability"]):
        assert p == pytest.approx((1 / rank) / sum(1 / k for k in range(1, n + 1)))
    # The ranks drawn over the run against the Zipf expectation (ranks 1, 2, 3-4, 5+).
    bins = [(1, 1), (2, 2), (3, 4), (5, 10_000)]
    observed, expected = [0] * 4, [0.0] * 4
    for rank, n in zip(draws["rank"], draws["candidates"]):
        norm = sum(1 / k for k in range(1, n + 1))
        for i, (lo, hi) in enumerate(bins):
            observed[i] += lo <= rank <= hi
            expected[i] += sum(1 / k for k in range(lo, min(hi, n) + 1)) / norm
    chi2 = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    z = ((chi2 / 3) ** (1 / 3) - (1 - 2 / 27)) / math.sqrt(2 / 27)
    assert 0.5 * math.erfc(z / math.sqrt(2)) > 1e-3
    # What the trainer scored is what the pool drew, round by round.
    drawn = draws.filter(pl.col("round") < 24).sort(["round", "slot"])
    assert [p for _, p, _, _ in scorer.groups] == drawn["problem_id"].to_list()


def test_the_in_process_policy_answers_as_student(tmp_path, online_run_dir, tiny_policy, curve_server):
    out = tmp_path / "out"
    settings = online_settings(
        online_run_dir,
        out,
        tiny_policy,
        curve_server.url,
        steps=2,
        backend="inprocess",
        buffer={"capacity": 4},
        worker={"budget": 2},
        accept={"max_turns": 1},
    )
    settings["online"]["student"] = {"backend": "inprocess", "max_tokens": 8}
    train(settings)
    turns = table(out, "turns").filter(pl.col("valid"))
    assert turns.height >= 1
    assert set(turns["student_model"]) <= {"policy@step-0", "policy@step-1", "policy@step-2"}
    # A random tiny model never answers right: its candidates are too hard and none is admitted.
    assert (turns["pass_rate"] == 0).all() and set(turns["decision"]) == {"too_hard"}
    assert table(out, "problems")["origin"].unique().to_list() == ["data"]


def test_thread_mode_admits_what_finished_at_later_boundaries(tmp_path, online_run_dir, tiny_policy, curve_server):
    out = tmp_path / "out"
    settings = online_settings(
        online_run_dir,
        out,
        tiny_policy,
        curve_server.url,
        steps=8,
        buffer={"capacity": 6, "explore": 1.0},  # every drawn slot asks for a fresh problem
        worker={"budget": 4, "mode": "thread", "drain_s": 120},
    )
    # Each batch trained twice (TRL's mu = 2): a round spans two steps; held-out pass@k at steps 4 and 8.
    settings |= {"num_iterations": 2, "eval": {"steps": 4, "heldout_fraction": 0.2, "samples": 2, "k": [1]}}
    train(settings)
    events = table(out, "events")
    admitted = events.filter((pl.col("event") == "admit") & (pl.col("origin") != "data"))
    assert admitted.height >= 1
    summary = json.loads((out / "online" / "summary.json").read_text())
    assert summary["problems"] == 6 + admitted.height and summary["late_rounds"] == 0
    # 8 steps = 4 rounds of 2 prompts, each scored at the first step of its round.
    scored = table(out, "controller").filter(pl.col("event").is_null())
    assert sorted(set(zip(scored["round"], scored["step"]))) == [(0, 0), (1, 2), (2, 4), (3, 6)]
    evals = (out / "eval_pass_at_k.csv").read_text().splitlines()
    assert evals[0].startswith("step,suite,split") and {line.split(",")[0] for line in evals[1:]} == {"4", "8"}


def test_a_server_student_answers_for_the_policy_synced_every_n_steps(
    tmp_path, online_run_dir, tiny_policy, curve_server
):
    out = tmp_path / "out"
    settings = online_settings(
        online_run_dir, out, tiny_policy, curve_server.url, steps=5, buffer={"capacity": 6, "explore": 1.0}
    )
    settings["online"]["student"]["sync_every"] = 2
    train(settings)
    policy = out / "online" / "policy"
    assert json.loads((policy / "policy_step.json").read_text()) == {"step": 4}
    assert (policy / "config.json").exists() and not list((out / "online").glob(".policy-*"))
    steps = set(table(out, "turns")["policy_step"])
    assert steps and steps <= {0, 2, 4}  # requests name the synced weights, never the live step
