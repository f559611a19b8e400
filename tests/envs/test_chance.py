"""Chance levels (synthgen.envs.chance): what a student with no understanding earns, measured per
problem by the environment's own verifier, in the job that scores the mutants."""

from __future__ import annotations

import asyncio
import random

from synthgen.envs import chance, get_env
from synthgen.envs.parsing import canonical_args, split_args
from synthgen.envs.problem import Problem
from synthgen.envs.settings import EnvSettings
from synthgen.sandbox import values
from synthgen.sandbox.settings import SandboxSettings
from synthgen.store.measurement import wilson
from tests.helpers.planted import CONTROLS, PLANTED


async def _measure(problems, mutate=True):
    from synthgen.sandbox import SandboxPool

    sandbox = SandboxSettings()
    out = []
    with SandboxPool(workers=2) as pool:
        for problem in problems:
            env = get_env(problem.env)
            valid, verdict = await env.validate(problem, pool, EnvSettings(), sandbox)
            assert verdict.valid, verdict
            out.append(await env.mutation_score(valid, pool, sandbox, mutate=mutate))
    return out


def test_planted_problems_get_the_rate_their_construction_implies_and_controls_get_0():
    envs = list(PLANTED)
    found = asyncio.run(_measure([PLANTED[e].problem for e in envs] + [CONTROLS[e].problem for e in envs]))
    for env, result in zip(envs, found[: len(envs)]):
        planted = PLANTED[env]
        best = next(o for o in result.chance.outcomes if round(o.rate, 6) == result.chance.rate)
        if planted.drawn:  # a random strategy: the implied p lies in the Wilson interval of its draws
            low, high = wilson(best.successes, best.trials)
            assert best.trials == chance.DRAWS and low <= planted.chance <= high, (env, best)
            assert result.chance.rate == round(best.successes / best.trials, 6)
        else:
            assert result.chance.rate == planted.chance, (env, result.chance.outcomes)
        assert result.chance.winners == list(planted.strategies), env
        # The probes rode in the mutation job: one sandbox job per problem (none for contest's).
        assert result.jobs == (0 if env == "contest" else 1) and result.infra is False
    for env, result in zip(envs, found[len(envs) :]):
        assert result.chance.to_fields() == {"chance_rate": 0.0, "chance_strategies": []}, env
        assert result.score is not None or env == "contest"


def test_without_mutants_the_probes_run_alone_and_say_the_same():
    problems = [PLANTED["abduction"].problem, PLANTED["induction"].problem, CONTROLS["deduction"].problem]
    both = asyncio.run(_measure(problems))
    alone = asyncio.run(_measure(problems, mutate=False))
    for with_mutants, probes_only in zip(both, alone):
        assert probes_only.to_fields() == with_mutants.chance.to_fields()  # no mutation columns
        assert probes_only.jobs == 1 and with_mutants.total > probes_only.total == 0


def test_chance_is_what_the_reward_means_type_strict():
    # Deduction compares type-strictly: a coin flip never writes 1, and `0` is not `0.0` or False.
    one = Problem("deduction", "def f(xs):\n    return xs.count(5)\n", ["[5, 6, 7]"])
    zero = Problem("deduction", "def f(xs):\n    return xs.count(9)\n", ["[5, 6, 7]"])
    echo = Problem("deduction", "def f(xs, k):\n    return sorted(xs)[:k]\n", ["[1, 2], 5"])
    found = asyncio.run(_measure([one, zero, echo], mutate=False))
    assert [r.chance.rate for r in found] == [0.0, 1.0, 1.0]
    coin = next(o for o in found[0].chance.outcomes if o.strategy == "coin")
    assert (coin.successes, coin.trials) == (0, 2)  # True is not 1
    assert "empty:0" in found[1].chance.winners and "empty:0.0" not in found[1].chance.winners
    assert "coin" not in found[1].chance.winners  # nor is False 0
    assert "echo" in found[2].chance.winners  # f returned its first argument on this input


def test_draws_keep_each_arguments_type_and_keyword_and_repeat_for_the_same_problem():
    text = "[1, 2, 3], 'abc', (4, 'x'), {'a': 1.5}, k=7, flag=True, note=None"
    first = chance.draw_arguments(text, 30, chance.rng_for("p1", "random"))
    again = chance.draw_arguments(text, 30, chance.rng_for("p1", "random"))
    other = chance.draw_arguments(text, 30, chance.rng_for("p2", "random"))
    assert first == again and first != other and len(first) == 30
    for drawn in first:
        assert canonical_args(drawn)  # an answer the student's parser accepts
        positional, keywords = split_args(drawn)
        got = [values.decode(values.from_literal(a)) for a in positional]
        assert [type(v) for v in got] == [list, str, tuple, dict] and set(keywords) == {"k", "flag", "note"}
        assert all(type(x) is int and -10 <= x <= 10 for x in got[0]) and len(got[0]) <= 6
        assert set(got[1]) <= set("abc") and len(got[1]) <= 6
        assert type(got[2][0]) is int and type(got[2][1]) is str
        assert all(type(k) is str and type(v) is float for k, v in got[3].items())
        assert keywords["note"] == "None" and keywords["flag"] in ("True", "False")
        assert -14 <= int(keywords["k"]) <= 14
    assert chance.draw_arguments("not an argument list (", 3, random.Random(0)) == []


def test_the_chance_rate_is_the_best_strategy_and_names_every_strategy_reaching_it():
    drawn = chance.ChanceOutcome("random", 20, 40)
    exact = chance.ChanceOutcome("coin", 1, 2)
    result = chance.ChanceResult([exact, drawn, chance.ChanceOutcome("echo", 0, 1)])
    assert result.rate == 0.5 and result.winners == ["coin", "random"]
    assert chance.ChanceResult([chance.ChanceOutcome("echo", 0, 1)]).to_fields() == {
        "chance_rate": 0.0,
        "chance_strategies": [],
    }
    assert chance.ChanceResult().to_fields() == {"chance_rate": None, "chance_strategies": None}
