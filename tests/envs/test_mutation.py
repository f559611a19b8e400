"""Mutation scores: near misses of f (synthgen.envs.mutants) and baselines run in the sandbox on a
problem's inputs; weak problems score low and `filter --min-mutation-score` drops them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import polars as pl
import pytest

from synthgen.envs import get_env
from synthgen.envs.mutants import KINDS, mutants
from synthgen.envs.mutation import TRIVIAL_INPUTS
from synthgen.envs.problem import Problem
from synthgen.envs.settings import EnvSettings
from synthgen.sandbox.settings import SandboxSettings
from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.records import PROBLEMS, table_from_rows
from tests.helpers.problem_rows import problem_row

STRONG = Problem(
    env="induction",
    code=(
        "def f(xs, k):\n    total = 0\n    for x in xs:\n        if x > k:\n            total += x * 2\n"
        "        else:\n            total -= 1\n    return total\n"
    ),
    inputs=["[1, 5, 7], 4", "[3, 3, 9, 2], 3", "[], 0", "[10, -2], -2", "[4, 4, 5], 4", "[0, 1, 2, 3], 1"],
)
# Its inputs never reach the interesting branch: x % 2 on small numbers, which many near misses match.
WEAK = Problem(
    env="induction",
    code="def f(x):\n    if x > 100:\n        return x * 3 - 7\n    return x % 2\n",
    inputs=["1", "3", "5", "2"],
)
# A constant nearly passes (one output differs from the rest) and no input sits near the edges, so
# x >= 50, x > 51, x // 49, ... pass as well.
NEAR_CONSTANT = Problem(
    env="induction",
    code="def f(x):\n    if x > 50:\n        return x // 50\n    return 0\n",
    inputs=["1", "2", "3", "60"],
)
STRICT_CHECKER = Problem(
    env="fuzzing",
    code="def f(x):\n    return x // 2 if x != 57 else -1\n",
    pre_test_code="def pre_test_f(x):\n    return isinstance(x, int) and not isinstance(x, bool) and 10 <= x < 100\n",
    test_code="def test_f(x):\n    return f(x) == x // 2\n",
    inputs=["20", "57"],
)
LAX_CHECKER = Problem(
    env="fuzzing",
    code="def f(x):\n    return x // 2 if x != 57 else -1\n",
    pre_test_code="def pre_test_f(x):\n    return True\n",
    test_code="def test_f(x):\n    return f(x) == x // 2\n",
    inputs=["20", "57"],
)


def test_mutants_cover_every_kind_once_before_repeating_and_change_only_f():
    code = (
        "LIMIT = 3\n\n\ndef helper(v):\n    return v + 1\n\n\ndef f(xs, k):\n    out = 0\n"
        "    for i in range(len(xs)):\n        if xs[i] > k and not xs[i] == LIMIT:\n            out += xs[i] * 2\n"
        "        else:\n            out -= 1\n    if out < 0:\n        return 0\n    return out\n"
    )
    found = mutants(code, limit=7)
    assert [m.kind for m in found] == list(KINDS)  # round-robin: one of each kind first
    everything = mutants(code, limit=200)
    assert len({m.source for m in everything}) == len(everything) > 20
    for m in everything:
        assert "def helper(v):\n    return v + 1" in m.source and "LIMIT = 3" in m.source
        assert m.source != code
    assert mutants("def g(x):\n    return x + 1\n") == [] and mutants("def f(:") == []


async def _scores(problems, sandbox=None):
    from synthgen.sandbox import SandboxPool

    sandbox = sandbox or SandboxSettings()
    out = []
    with SandboxPool(workers=2) as pool:
        for problem in problems:
            env = get_env(problem.env)
            valid, verdict = await env.validate(problem, pool, EnvSettings(), sandbox)
            assert verdict.valid, verdict
            out.append((valid, await env.mutation_score(valid, pool, sandbox)))
    return out


def test_strong_problems_score_high_and_weak_ones_low():
    (_, strong), (_, weak), (_, near) = asyncio.run(_scores([STRONG, WEAK, NEAR_CONSTANT]))
    assert strong.score >= 0.9 and strong.jobs == 1 and strong.total >= 10
    assert weak.score < 0.6 and "constant" in weak.surviving
    assert near.score < 0.7 and strong.score > near.score
    assert strong.caught == round(strong.score * strong.total)


def test_fuzzing_scores_how_well_the_checker_keeps_trivial_inputs_out():
    (_, strict), (_, lax) = asyncio.run(_scores([STRICT_CHECKER, LAX_CHECKER]))
    assert strict.score == 1.0 and strict.total == len(TRIVIAL_INPUTS)
    # Anything that is not an int crashes f inside test_f, and the lax checker lets it through.
    assert lax.score < 0.5 and "baseline:None" in lax.surviving and "baseline:''" in lax.surviving


@pytest.mark.slow
def test_a_mutant_that_hangs_past_its_budget_is_caught_and_the_rest_still_score():
    # `n -= 1` -> `n += 1` loops forever and swallows the harness's timer (bare except): that job
    # ends on its wall clock; the mutants after it run in the next job.
    looping = Problem(
        env="induction",
        code=(
            "def f(n):\n    steps = 0\n    while n > 0:\n        try:\n            while n > 0:\n"
            "                n -= 1\n                steps += 2\n        except BaseException:\n"
            "            pass\n    return steps\n"
        ),
        inputs=["1", "2", "5"],
    )
    [(_, result)] = asyncio.run(_scores([looping], SandboxSettings(timeout_s=1.0)))
    assert result.jobs >= 2 and result.total >= 8 and result.score >= 0.5


def _row(i: int, problem: Problem, fields: dict) -> dict:
    return problem_row(
        turn_id=f"s{i}/{problem.env}/l{i}/1",
        problem_id=problem.problem_id,
        seed_id=f"s{i}",
        lineage_id=f"l{i}",
        env=problem.env,
        code=problem.code,
        inputs=problem.inputs,
        outputs=problem.outputs,
        pre_test_code=problem.pre_test_code or None,
        test_code=problem.test_code or None,
        message=f"hint number {i} about something different {i * 7}",
        **fields,
    )


def test_filter_drops_the_weak_problems_with_their_reason(cli, tmp_path: Path):
    scored = asyncio.run(_scores([STRONG, WEAK, NEAR_CONSTANT, STRICT_CHECKER, LAX_CHECKER]))
    rows = [_row(i, problem, result.to_fields()) for i, (problem, result) in enumerate(scored)]
    run = tmp_path / "run"
    gen = StageDir(run, "generate")
    gen.write_part("shard-00000-of-00001", 0, table_from_rows(rows, PROBLEMS), file_metadata("generate", "g"))
    gen.mark_done("shard-00000-of-00001", {"settings_hash": "g", "rows": len(rows)})
    rc, _, err = cli("filter", "--run-dir", run, "--min-mutation-score", "0.75", "--no-dedup")
    assert rc == 0, err
    kept = pl.read_parquet(run / "filter" / "kept.part-*.parquet")
    assert sorted(kept["turn_id"].to_list()) == sorted([rows[0]["turn_id"], rows[3]["turn_id"]])
    rejects = pl.read_parquet(run / "filter" / "rejects" / "*.parquet")
    assert set(rejects["reject_reason"]) == {"weak_tests"}
    assert all("below 0.75" in d and "surviving:" in d for d in rejects["reject_detail"])
    stats = json.loads((run / "filter" / "stats.json").read_text())
    assert stats["reasons"]["weak_tests"] == 3
