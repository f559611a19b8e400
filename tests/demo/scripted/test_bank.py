"""The scripted brain (synthgen.demo.scripted.bank): deterministic, follows the progression, and its
problems and answers hold up in the real environments and sandbox."""

from __future__ import annotations

import pytest

from synthgen.demo.scripted import bank_problems as bp
from synthgen.demo.scripted import cues
from synthgen.demo.scripted.bank import STYLES, UNRECOGNISED, BankResponder, teacher_reply, unit
from synthgen.envs import get_env, reasons
from synthgen.envs.problem import Problem, Reward
from synthgen.envs.settings import EnvSettings, ProgressionSettings
from synthgen.envs.summary import summarize
from synthgen.sandbox.settings import SandboxSettings

ENVS = ("induction", "abduction", "deduction", "fuzzing")


def first_prompt(env: str, seed_text: str = "def area(w, h):\n    return w * h") -> list[dict]:
    return get_env(env).teacher_messages("first", seed_text=seed_text)


def as_problem(b: bp.BankProblem, outputs=()) -> Problem:
    return Problem(b.env, b.code, list(b.inputs), b.message, b.pre_test_code, b.test_code, list(outputs))


def summary(rate: float):
    rewards = [Reward(1.0, "ok", answer="a")] * int(rate * 32) + [Reward(0.0, "ok", answer="b")] * (32 - int(rate * 32))
    return summarize(rewards, ProgressionSettings())


def test_same_request_same_replies_in_any_instance():
    messages = first_prompt("induction")
    a = BankResponder(0).respond(messages, 3, 11, {})
    b = BankResponder(0).respond(messages, 3, 11, {})
    assert a == b and len(a) == 3
    student = get_env("deduction").student_messages(as_problem(bp.build("digits", 2, "deduction", 1)))
    runs = [BankResponder(0).respond(student, 32, seed, {}) for seed in (1, 1, 2)]
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_unrecognised_prompt_gets_n_polite_replies():
    replies = BankResponder().respond([{"role": "user", "content": "hello"}], 2, 0, {})
    assert len(replies) == 2 and all(r.content == UNRECOGNISED for r in replies)


def previous_for(env: str, family: str = "primes", level: int = 3) -> Problem:
    return as_problem(
        bp.build(family, level, env, 0), ["0"] * (5 if env == "induction" else 2 if env == "fuzzing" else 1)
    )


@pytest.mark.parametrize("env", ENVS)
def test_cues_read_back_from_every_template(env):
    """The brain reads the templates' own prose; a template edit that breaks a cue fails here."""
    previous = previous_for(env)
    assert cues.read(first_prompt(env)[0]["content"]) == cues.Cues(env, "first")
    assert cues.snippet(first_prompt(env, "SNIP")[0]["content"]).strip() == "SNIP"
    for strategy in ("easier", "somewhat-easier", "similar", "harder"):
        text = get_env(env).teacher_messages(
            "mutate", previous=previous, summary=summary(0.5), strategy=strategy, feedback="format_error: x"
        )[0]["content"]
        assert cues.read(text) == cues.Cues(env, "mutate", strategy), strategy
        assert bp.code_key(cues.previous_code(text)) == bp.code_key(previous.code)
    for strategy in ("chain-medium", "chain-easy"):
        text = get_env(env).teacher_messages(
            "chain", previous=previous, summary=summary(0.1), target=(0.4, 0.6), strategy=strategy
        )[0]["content"]
        assert cues.read(text) == cues.Cues(env, "chain", strategy), strategy
    student = get_env(env).student_messages(previous)[0]["content"]
    assert cues.read(student) == cues.Cues(env, "solve")


def test_student_cues_read_the_values_shown():
    induction = Problem(
        "induction",
        "def f(x):\n    return x + 1",
        ["1", "2", "3"],
        "Add one.",
        outputs=["2", "3", "4"],
        visible_count=2,
    )
    text = get_env("induction").student_messages(induction)[0]["content"]
    assert cues.induction_hint(text) == "Add one." and cues.induction_pairs(text) == [("1", "2"), ("2", "3")]
    from synthgen.sandbox import values

    single = Problem("abduction", "def f(x):\n    return [x]", ["'a, b'"], outputs=[values.encode(["a, b"])])
    assert cues.abduction_target(get_env("abduction").student_messages(single)[0]["content"]) == "['a, b']"
    deduction = Problem("deduction", single.code, ["'a, b'"], outputs=single.outputs)
    assert cues.deduction_call(get_env("deduction").student_messages(deduction)[0]["content"]) == "'a, b'"


@pytest.mark.parametrize("env", ENVS)
def test_progression(env):
    brain = BankResponder(0)
    family, level, variant, how = brain.choose(first_prompt(env)[0]["content"])
    assert how == "first" and level in (1, 2) and family in bp.FAMILY_ORDER
    previous = previous_for(env)
    for strategy, rate, want in (
        ("harder", 0.9, 4),
        ("easier", 0.0, 2),
        ("somewhat-easier", 0.2, 2),
        ("similar", 0.5, 3),
    ):
        text = get_env(env).teacher_messages("mutate", previous=previous, summary=summary(rate))[0]["content"]
        fam, lvl, var, how = brain.choose(text)
        assert (fam, lvl, how) == ("primes", want, strategy)
        if strategy == "similar":
            assert var != 0
    for strategy in ("chain-medium", "chain-easy"):
        text = get_env(env).teacher_messages("chain", previous=previous, strategy=strategy)[0]["content"]
        assert brain.choose(text)[:2] == ("primes", 2)


def test_levels_stay_in_range_and_unknown_previous_falls_back():
    brain = BankResponder(0)
    top = as_problem(bp.build("words", 5, "deduction"), ["0"])
    text = get_env("deduction").teacher_messages("mutate", previous=top, summary=summary(1.0))[0]["content"]
    assert brain.choose(text)[1] == 5
    stranger = Problem("deduction", "def f(x):\n    return x - 12345", ["1"], outputs=["-12344"])
    text = get_env("deduction").teacher_messages("mutate", previous=stranger, summary=summary(0.5))[0]["content"]
    assert brain.choose(text)[3] == "unknown"


def test_flaw_rate_is_about_ten_percent():
    brain = BankResponder(0)
    flawed = 0
    for i in range(300):
        reply = brain.respond(first_prompt("abduction", f"seed {i}"), 1, i, {})[0]
        try:
            problem = get_env("abduction").parse_teacher(reply.content)
            clean = "import os" not in problem.code and "hash(" not in problem.code and problem.inputs != ["None"]
            clean = clean and problem.code.count("):") >= 1
        except Exception:
            clean = False
        flawed += not clean
    assert 0.05 <= flawed / 300 <= 0.16


@pytest.mark.parametrize("style", sorted(set(STYLES)))
@pytest.mark.parametrize("env", ENVS)
def test_every_style_parses(env, style):
    problem = bp.build("coins", 3, env, 2)
    for i in range(200):  # find a draw that picks this style
        if STYLES[int(_u(i) * len(STYLES))] == style:
            break
    content, reasoning = teacher_reply(problem, "similar", None, (i,))
    parsed = get_env(env).parse_teacher(content)
    assert parsed.inputs == problem.inputs and reasoning


def _u(i):
    return unit(i, "style")


FLAWS = {
    "format": reasons.FORMAT_ERROR,
    "execution": reasons.EXECUTION_ERROR,
    "forbidden": reasons.FORBIDDEN,
    "syntax": reasons.COMPILE_ERROR,
    "nondeterministic": reasons.NONDETERMINISTIC,
    "trivial": reasons.TRIVIAL,
}


@pytest.mark.parametrize("flaw", FLAWS)
@pytest.mark.parametrize("env", ENVS)
async def test_each_flaw_is_rejected_for_its_reason(pool, env, flaw):
    if flaw == "trivial" and env != "induction":
        pytest.skip("trivial functions are an induction flaw")
    content, _ = teacher_reply(bp.build("text", 2, env, 0), "first", flaw, ("flaw", 3))
    try:
        problem = get_env(env).parse_teacher(content)
    except Exception as exc:
        assert getattr(exc, "reason", None) == FLAWS[flaw]
        return
    _, verdict = await get_env(env).validate(problem, pool, EnvSettings(), SandboxSettings())
    expected = FLAWS[flaw]
    if env == "fuzzing" and flaw == "execution":
        expected = reasons.BAD_INPUTS  # pre_test_f(None) says "invalid" before anything can crash
    assert verdict.reason == expected, verdict


async def check_bank_problem(pool, family: str, level: int, env: str, n: int) -> None:
    """The problem validates, and the brain's student is right exactly when it decided to be."""
    brain = BankResponder(0)
    problem, verdict = await get_env(env).validate(
        as_problem(bp.build(family, level, env, 0)), pool, EnvSettings(), SandboxSettings()
    )
    assert verdict.valid, (family, level, env, verdict)
    messages = get_env(env).student_messages(problem)
    replies = brain.respond(messages, n, 5, {})
    rewards = await get_env(env).rewards(problem, [r.content for r in replies], pool, SandboxSettings())
    p = bp.SOLVE_PROBABILITY[level - 1]
    text = messages[0]["content"]
    for i, (reply, reward) in enumerate(zip(replies, rewards)):
        want = 1.0 if unit(0, 5, text, i, "solve") < p else 0.0
        assert reward.value == want, (family, level, env, i, reward, reply.content)


@pytest.mark.parametrize("env", ENVS)
async def test_bank_sample_validates_and_scores(pool, env):
    import asyncio

    await asyncio.gather(
        *(
            check_bank_problem(pool, family, 1 + (index + ENVS.index(env)) % bp.LEVELS, env, 8)
            for index, family in enumerate(bp.FAMILY_ORDER)
        )
    )


@pytest.mark.slow
@pytest.mark.parametrize("env", ENVS)
async def test_whole_bank_validates_and_scores(pool, env):
    import asyncio

    await asyncio.gather(
        *(
            check_bank_problem(pool, family, level, env, 12)
            for family in bp.FAMILY_ORDER
            for level in range(1, bp.LEVELS + 1)
        )
    )


async def test_student_pass_rate_follows_the_level(pool):
    brain = BankResponder(0)
    env = get_env("deduction")
    for level in (1, 3, 5):
        problem, _ = await env.validate(
            as_problem(bp.build("runs", level, "deduction", 0)), pool, EnvSettings(), SandboxSettings()
        )
        replies = brain.respond(env.student_messages(problem), 64, 1, {})
        rewards = await env.rewards(problem, [r.content for r in replies], pool, SandboxSettings())
        rate = sum(r.value for r in rewards) / len(rewards)
        assert abs(rate - bp.SOLVE_PROBABILITY[level - 1]) < 0.2


def test_induction_wrong_answers_include_memorised_pairs():
    brain = BankResponder(0)
    b = bp.build("spans", 4, "induction", 0)
    outputs = [repr(bp.level_of("spans", 4).run(x)) for x in b.inputs]
    from synthgen.sandbox import values

    problem = Problem(
        "induction", b.code, b.inputs, b.message, outputs=[values.from_literal(o) for o in outputs], visible_count=3
    )
    replies = brain.respond(get_env("induction").student_messages(problem), 64, 3, {})
    assert any("seen == key(" in r.content for r in replies)


def test_code_index_covers_every_level_and_env():
    index = bp.code_index()
    for family in bp.FAMILY_ORDER:
        for level in range(1, bp.LEVELS + 1):
            for env in ENVS:
                assert index[bp.code_key(bp.build(family, level, env, 3).code)] == (family, level)
