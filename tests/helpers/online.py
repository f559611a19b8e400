"""Helpers for the online tests: bank problems as training data, a binned folder, run settings.

The problems come from the scripted server's bank (our own functions, gold outputs by calling
them), so `CurveScorer` and the scripted student both know their level.
"""

from __future__ import annotations

from pathlib import Path

from synthgen.demo.scripted import bank_problems as bp
from synthgen.store import records
from tests.helpers.problem_rows import problem_row

FAMILIES = ("digits", "runs", "text", "brackets", "primes", "ops")
LEVEL_BINS = {1: "easiest", 2: "easy", 3: "medium", 4: "hard"}  # a bank level's bin in the data


def bank_rows(levels=(2, 3, 4), families=FAMILIES, env: str = "deduction") -> list[dict]:
    """Deduction problems of the bank, one per (family, level), as PROBLEMS rows with a difficulty."""
    from synthgen.sandbox.values import encode

    rows = []
    for family in families:
        for level in levels:
            p = bp.build(family, level, env, 0)
            outputs = [encode(bp.level_of(family, level).run(x)) for x in p.inputs]
            rows.append(
                problem_row(
                    turn_id=f"{family}/{level}",
                    problem_id=records.problem_id(env, p.code, p.inputs, ""),
                    seed_id="bank",
                    lineage_id=f"bank-{family}",
                    env=env,
                    code=p.code,
                    inputs=p.inputs,
                    outputs=outputs,
                    pass_rate=bp.SOLVE_PROBABILITY[level - 1],
                    correct=round(32 * bp.SOLVE_PROBABILITY[level - 1]),
                    teacher_model="scripted",
                    student_model="scripted",
                    settings_hash="test",
                    difficulty=LEVEL_BINS.get(level, "medium"),
                )
            )
    return rows


def write_bin(root: Path, rows: list[dict]) -> Path:
    """`root/bin/<difficulty>/part-00000.parquet`, as the bin stage lays it out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = records.with_fields(records.PROBLEMS, [pa.field("difficulty", pa.string(), nullable=False)])
    for difficulty in sorted({r["difficulty"] for r in rows}):
        folder = root / "bin" / difficulty
        folder.mkdir(parents=True, exist_ok=True)
        chosen = [r for r in rows if r["difficulty"] == difficulty]
        pq.write_table(records.table_from_rows(chosen, schema), folder / "part-00000.parquet")
    return root / "bin"


def online_settings(
    run_dir: Path, out: Path, model: Path, url: str, *, steps: int, backend: str = "server", **online
) -> dict:
    """TrainSettings fields of a small online run against a scripted server (teacher, and student unless in-process)."""
    sections = {key: online.pop(key) for key in ("buffer", "worker", "accept", "controller") if key in online}
    return {
        "run_dir": str(run_dir),
        "data": [str(run_dir / "bin")],
        "model": str(model),
        "recipe": "tiny-cpu",
        "max_steps": steps,
        "output": str(out),
        "save_steps": 2,
        "online": {
            "enabled": True,
            "teacher": {"base_url": url},
            "student": {"backend": backend, "base_url": url, "model": "openai/gpt-oss-120b", "max_tokens": 4096},
            **sections,
            **online,
        },
    }
