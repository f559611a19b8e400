"""Data for the train tests: deduction problems per bin and a binned folder, as the bin stage writes it.

Tests import these from here (`from train_helpers import ...`), not from conftest: with several
test folders, a module named `conftest` is whichever folder's was imported first.
"""

from __future__ import annotations

from pathlib import Path

from problem_rows import problem_row

BINS = ("easy", "easy_medium", "medium", "hard")
PER_BIN = 4


def deduction_rows(bin_name: str, n: int = PER_BIN) -> list[dict]:
    """n deduction problems `f(x) = x * k + c` with gold outputs in the sandbox's encoding."""
    from synthgen import records
    from synthgen.sandbox.values import encode

    rows = []
    for i in range(n):
        k, c = BINS.index(bin_name) + 2, i
        code = f"def f(x):\n    return x * {k} + {c}\n"
        inputs = [str(i + 1)]
        rows.append(
            problem_row(
                turn_id=f"{bin_name}/{i}",
                problem_id=records.problem_id("deduction", code, inputs, ""),
                seed_id="seed",
                lineage_id=f"lin-{bin_name}-{i}",
                env="deduction",
                code=code,
                inputs=inputs,
                outputs=[encode((i + 1) * k + c)],
                settings_hash="test",
                difficulty=bin_name,
            )
        )
    return rows


def write_binned(root: Path, bins=BINS, n: int = PER_BIN) -> Path:
    """`root/bin/<difficulty>/part-00000.parquet`, as the bin stage lays it out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from synthgen import records

    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    for b in bins:
        folder = root / "bin" / b
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(records.table_from_rows(deduction_rows(b, n), schema), folder / "part-00000.parquet")
    return root / "bin"
