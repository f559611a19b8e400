"""Data for the train tests: deduction problems per bin and a binned folder, as the bin stage writes it.

Tests import these from here (`from tests.helpers.train import ...`), not from a conftest.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.benchmark_rows import LCB_ROW, write_benchmarks  # noqa: F401 (the benchmarks' local copies)
from tests.helpers.problem_rows import problem_row

BINS = ("easy", "easy_medium", "medium", "hard")
PER_BIN = 4


def deduction_rows(bin_name: str, n: int = PER_BIN) -> list[dict]:
    """n deduction problems `f(x) = x * k + c` with gold outputs in the sandbox's encoding."""
    from synthgen.sandbox.values import encode
    from synthgen.store import records

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

    from synthgen.store import records

    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    for b in bins:
        folder = root / "bin" / b
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(records.table_from_rows(deduction_rows(b, n), schema), folder / "part-00000.parquet")
    return root / "bin"


# Pass rates over 32 attempts: 0 and 1 fall outside the filter's [0.01, 0.97]; 1-3 of 32 are kept by
# the filter but lie below the broad scheme's lowest bin (0.10), so only a filter folder trains on them.
FILTER_RATES = (0.0, 1 / 32, 2 / 32, 3 / 32, 0.25, 0.5, 0.75, 31 / 32, 1.0)


def write_generated(run_dir: Path, rates=FILTER_RATES) -> Path:
    """`run_dir/generate/`, one finished shard of deduction problems with these pass rates."""
    from synthgen.sandbox.values import encode
    from synthgen.store import records
    from synthgen.store.files import file_metadata
    from synthgen.store.layout import StageDir

    rows = []
    for i, rate in enumerate(rates):
        code = f"def f(x):\n    return x * {i + 2} + {i * 7 % 5}\n" + "".join(f"# {w}\n" for w in range(i))
        inputs = [str(i + 1)]
        rows.append(
            problem_row(
                turn_id=f"s{i}/deduction/l{i}/1",
                problem_id=records.problem_id("deduction", code, inputs, ""),
                seed_id=f"s{i}",
                lineage_id=f"l{i}",
                env="deduction",
                code=code,
                inputs=inputs,
                outputs=[encode((i + 1) * (i + 2) + i * 7 % 5)],
                pass_rate=rate,
                correct=round(rate * 32),
            )
        )
    stage = StageDir(run_dir, "generate")
    shard = stage.shard_name(0, 1)
    stage.write_part(shard, 0, records.table_from_rows(rows, records.PROBLEMS), file_metadata("generate", "g"))
    stage.mark_done(shard, {"settings_hash": "g", "rows": len(rows)})
    return stage.path
