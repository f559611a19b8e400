"""The fixed set of reason codes a problem can be rejected with, at generation or in `filter`.

Every rejected row carries exactly one of these in its `reason` column (valid rows carry `OK`),
so that `filter` and `stats` can count them; the free-text detail goes to `reason_detail`.
"""

from __future__ import annotations

OK = "ok"

# At generation (set by the environments and the generate loop).
FORMAT_ERROR = "format_error"  # the teacher's answer could not be parsed (or was truncated)
COMPILE_ERROR = "compile_error"  # the code does not compile or does not define what it must
FORBIDDEN = "forbidden"  # imports or calls something nondeterministic or outside-facing
EXECUTION_ERROR = "execution_error"  # raised, timed out or ran out of memory on an input
NONDETERMINISTIC = "nondeterministic"  # different results under two hash seeds
OUTPUT_TOO_LARGE = "output_too_large"  # an output over the size bound
TRIVIAL = "trivial"  # induction: too few distinct outputs, or a trivial function passes
BAD_INPUTS = "bad_inputs"  # too few, too many, duplicate or malformed inputs
INFRA = "infra"  # the teacher request or the sandbox failed; says nothing about the problem
PROMPT_TOO_LONG = "prompt_too_long"  # a prompt plus max_tokens over the server's context: no server could answer

GENERATION = (FORMAT_ERROR, COMPILE_ERROR, FORBIDDEN, EXECUTION_ERROR, NONDETERMINISTIC, OUTPUT_TOO_LARGE)
GENERATION += (TRIVIAL, BAD_INPUTS, INFRA, PROMPT_TOO_LONG)

# In `filter` (on valid problems).
NEVER_SOLVED = "never_solved"  # pass rate 0
ALWAYS_SOLVED = "always_solved"  # pass rate 1
OUT_OF_BAND = "out_of_band"  # pass rate outside the band but neither 0 nor 1
NO_EVIDENCE = "no_evidence"  # no attempt was scored (all infra or formatting failures)
NEAR_DUPLICATE = "near_duplicate"
CONTAMINATED = "contaminated"
WEAK_TESTS = "weak_tests"  # mutation score below --min-mutation-score: near misses of f also pass
GUESSABLE = "guessable"  # chance rate at or above --max-chance-rate: a no-skill strategy earns the reward

FILTER = (NEVER_SOLVED, ALWAYS_SOLVED, OUT_OF_BAND, NO_EVIDENCE, NEAR_DUPLICATE, CONTAMINATED, WEAK_TESTS, GUESSABLE)

ALL = (OK,) + GENERATION + FILTER
