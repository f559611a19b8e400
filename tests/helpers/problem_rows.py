"""A PROBLEMS row for tests: the bookkeeping columns every row must have (counts, tokens, models,
settings hash) filled with plain values, so that a test names only the columns it is about and a
new required column is added here, once (tests.helpers.problem_rows: pytest puts the repository
root on sys.path).

    row = problem_row(turn_id="s/induction/l/1", problem_id=pid, seed_id="s", lineage_id="l",
                      env="induction", code=code, inputs=["1"], outputs=["2"], pass_rate=0.25)
"""

from __future__ import annotations

BOOKKEEPING = dict(
    mode="multi",
    turn=1,
    valid=True,
    reason="ok",
    pass_rate=0.5,
    attempts=32,
    scored=32,
    correct=16,
    format_failures=0,
    infra_failures=0,
    teacher_tokens_in=1,
    teacher_tokens_out=1,
    student_tokens_in=1,
    student_tokens_out=1,
    teacher_model="t",
    student_model="s",
    settings_hash="g",
)


def problem_row(**columns) -> dict:
    """BOOKKEEPING, then `columns` (identity, problem and any bookkeeping value the test needs)."""
    return {**BOOKKEEPING, **columns}
