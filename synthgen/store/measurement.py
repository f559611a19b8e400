"""How a pass rate was measured, and how sure it is: the columns every measured row carries.

A pass rate is k correct of n scored attempts of one student. Two things make it usable evidence:

- **An interval.** The 95% Wilson score interval over the n attempts (`pass_rate_low`,
  `pass_rate_high`). Wilson rather than a Beta posterior: it needs no prior to defend, is closed
  form (no scipy; a polars expression computes it for a whole table), stays inside [0, 1] and is
  not degenerate at k = 0 or k = n (the plain normal interval is [0, 0] there), and its coverage
  is close to nominal for the n = 8..64 attempts synthgen uses; with a uniform prior the Beta
  posterior's equal-tailed interval differs from it by well under 1/n.
- **Provenance.** The student model (as the server named it) and its endpoint, reasoning effort,
  temperature, M, the sandbox's isolation level and the synthgen version, as flat columns (a
  Parquet reader needs nothing beside the file), plus `measured_by`: a hash of everything that
  decides the pass rate's distribution. The endpoint is recorded but not hashed: it says where
  the model ran, not what was measured (each Slurm task has its own server address), as
  `RoleSettings.unhashed` treats it for requests. Two rows with the same `measured_by` were
  measured the same way; `bin` refuses to mix different ones in one bin unless told.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from synthgen.store.records import content_hash

Z95 = 1.959963984540054  # the normal quantile of 0.975
INTERVAL_COLUMNS = ("pass_rate_low", "pass_rate_high")


def wilson_exprs(correct: pl.Expr, scored: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """The Wilson score interval of correct/scored as polars expressions (null where scored is 0 or null)."""
    n, z2 = scored.cast(pl.Float64), Z95 * Z95
    p = correct.cast(pl.Float64) / n
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * (p * (1 - p) / n + z2 / (4 * n * n)).sqrt() / (1 + z2 / n)
    ok = scored.is_not_null() & (scored > 0)
    # Exact at the ends (rounding would leave 0.9999999999999999 for k = n).
    low = pl.when(ok & (correct <= 0)).then(0.0).when(ok).then(pl.max_horizontal(pl.lit(0.0), centre - half))
    high = pl.when(ok & (correct >= scored)).then(1.0).when(ok).then(pl.min_horizontal(pl.lit(1.0), centre + half))
    return low, high


def wilson(correct: int, scored: int) -> tuple[float | None, float | None]:
    """`wilson_exprs` for one pass rate in plain math (it runs once a turn on the event loop, where a polars
    query per call is too slow); (None, None) without a scored attempt."""
    if scored <= 0:
        return None, None
    p, z2 = correct / scored, Z95 * Z95
    centre = (p + z2 / (2 * scored)) / (1 + z2 / scored)
    half = Z95 * math.sqrt(p * (1 - p) / scored + z2 / (4 * scored * scored)) / (1 + z2 / scored)
    low = 0.0 if correct <= 0 else max(0.0, centre - half)
    high = 1.0 if correct >= scored else min(1.0, centre + half)
    return low, high


def with_intervals(df: pl.DataFrame) -> pl.DataFrame:
    """`df` with `pass_rate_low`/`pass_rate_high`, filled where null (rows of older runs, imported
    sets) from the pass rate and `scored`: k = round(pass_rate * scored)."""
    scored = pl.col("scored") if "scored" in df.columns else pl.lit(None, dtype=pl.Int64)
    computed = wilson_exprs((pl.col("pass_rate") * scored).round(0), scored.cast(pl.Float64))
    return df.with_columns(
        pl.coalesce(pl.col(name) if name in df.columns else pl.lit(None, dtype=pl.Float64), value).alias(name)
        for name, value in zip(INTERVAL_COLUMNS, computed)
    )


def measurement_key(
    *,
    student_model: str,
    effort: str | None,
    temperature: float,
    top_p: float,
    max_tokens: int,
    attempts: int,
    isolation: str | None,
    version: str,
) -> str:
    """The `measured_by` id: everything that decides what a pass rate is a sample of."""
    return content_hash(
        "measurement", student_model, effort, temperature, top_p, max_tokens, attempts, isolation, version
    )


def provenance(student, attempts: int, served_model: str, isolation: str | None) -> dict[str, Any]:
    """The provenance columns of a row whose pass rate `student` (RoleSettings) measured."""
    from synthgen import __version__

    return {
        "student_endpoint": student.base_url,
        "student_effort": student.reasoning_effort,
        "student_temperature": float(student.temperature),
        "sandbox_isolation": isolation,
        "synthgen_version": __version__,
        "measured_by": measurement_key(
            student_model=served_model,
            effort=student.reasoning_effort,
            temperature=float(student.temperature),
            top_p=float(student.top_p),
            max_tokens=int(student.max_tokens),
            attempts=attempts,
            isolation=isolation,
            version=__version__,
        ),
    }


def describe(row: dict[str, Any]) -> str:
    """One line a reader can quote: 'gpt-oss-120b (effort low, temperature 1, M=32, sandbox X)'."""
    model = row.get("student_model") or "an unrecorded student"
    bits = []
    if row.get("student_effort"):
        bits.append(f"effort {row['student_effort']}")
    if row.get("student_temperature") is not None:
        bits.append(f"temperature {row['student_temperature']:g}")
    if row.get("attempts"):
        bits.append(f"M={row['attempts']}")
    if row.get("sandbox_isolation"):
        bits.append(f"sandbox {row['sandbox_isolation']}")
    endpoints = row.get("student_endpoint")
    if endpoints:
        endpoints = [endpoints] if isinstance(endpoints, str) else list(endpoints)
        bits.append(f"at {', '.join(endpoints)}")
    if row.get("synthgen_version"):
        bits.append(f"synthgen {row['synthgen_version']}")
    return f"{model} ({', '.join(bits)})" if bits else model


MEASUREMENT_GROUP = ("measured_by", "student_model", "student_effort", "student_temperature", "attempts")
MEASUREMENT_GROUP += ("sandbox_isolation", "synthgen_version", "student_endpoint")


def measurements(df: pl.DataFrame) -> list[dict[str, Any]]:
    """The distinct measurements among rows (one dict per `measured_by`, with its row count),
    most rows first; rows without provenance (older runs) form one group with measured_by None."""
    cols = [c for c in MEASUREMENT_GROUP if c in df.columns]
    if "measured_by" not in cols:
        return [{"measured_by": None, "rows": df.height}] if df.height else []
    firsts = df.group_by("measured_by", maintain_order=True).agg(
        *[pl.col(c).first() for c in cols if c not in ("measured_by", "student_endpoint")],
        *([pl.col("student_endpoint").drop_nulls().unique().sort()] if "student_endpoint" in cols else []),
        pl.len().alias("rows"),
    )
    return sorted(firsts.to_dicts(), key=lambda r: (-r["rows"], str(r["measured_by"])))


# The parts of a measurement that its rows record, in the words a message uses. `measured_by` also
# hashes the student's top_p and max_tokens, which no column records.
RECORDED = (
    ("student_model", "student model"),
    ("student_effort", "student effort"),
    ("student_temperature", "student temperature"),
    ("attempts", "attempts"),
    ("sandbox_isolation", "sandbox"),
    ("synthgen_version", "synthgen version"),
)


def shown(value: Any) -> str:
    """A recorded value as a message shows it: 1.0 as 1, None as none."""
    if value is None:
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(name, before, after) for each recorded part in which two measurements (rows, or entries of
    `measurements`) differ; empty when the columns agree (their measured_by may still differ, in
    top_p or max_tokens). A part either side does not have is not compared."""
    shared = [(name, before[c], after[c]) for c, name in RECORDED if c in before and c in after]
    return [(name, a, b) for name, a, b in shared if a != b]  # 1 == 1.0: an int and a float may agree


EVIDENCE_COLUMNS = ("valid", "pass_rate", "scored", *INTERVAL_COLUMNS, *MEASUREMENT_GROUP)


def evidence(frame: pl.DataFrame | None) -> dict[str, Any] | None:
    """What `stats`, `report` and `export` say about a set of rows' pass rates: who measured them
    (one entry per measurement, with a sentence) and how wide their 95% intervals are."""
    if frame is None:
        return None
    if "valid" in frame.columns:
        frame = frame.filter(pl.col("valid"))
    frame = with_intervals(frame.filter(pl.col("pass_rate").is_not_null()))
    if frame.height == 0:
        return {"rows": 0, "measurements": [], "interval_width_mean": None, "interval_width_max": None}
    width = (frame["pass_rate_high"] - frame["pass_rate_low"]).drop_nulls()
    found = [{**m, "described": describe(m)} for m in measurements(frame)]
    return {
        "rows": frame.height,
        "measurements": found,
        "interval_width_mean": round(float(width.mean()), 4) if len(width) else None,
        "interval_width_max": round(float(width.max()), 4) if len(width) else None,
    }


MUTATION_COLUMNS = ("env", "turn", "valid", "mutation_score", "surviving_mutants")


def mutation_summary(frame: pl.DataFrame | None, buckets: int = 10) -> dict[str, Any] | None:
    """The mutation scores of valid rows (synthgen.envs.mutation): distribution, per environment
    and turn, and the kinds of near misses that survived most; None without any score."""
    if frame is None:
        return None
    if "valid" in frame.columns:
        frame = frame.filter(pl.col("valid"))
    frame = frame.filter(pl.col("mutation_score").is_not_null())
    if frame.height == 0:
        return None
    scores = frame["mutation_score"]
    per = (
        frame.group_by("env", "turn")
        .agg(pl.len().alias("n"), pl.col("mutation_score").mean().round(4).alias("mean"))
        .sort("env", "turn")
    )
    kinds = frame["surviving_mutants"].explode().drop_nulls().value_counts(sort=True)
    return {
        "rows": frame.height,
        "mean": round(float(scores.mean()), 4),
        "quantiles": {f"p{q}": round(float(scores.quantile(q / 100, "nearest")), 4) for q in (10, 25, 50, 75, 90)},
        "histogram": histogram(scores.to_list(), buckets),
        "by_env_turn": per.to_dicts(),
        "surviving_kinds": {k: int(n) for k, n in kinds.iter_rows()},
    }


# -- chance level (synthgen.envs.chance) --------------------------------------------------------------
CHANCE_COLUMNS = ("env", "valid", "pass_rate", "chance_rate", "chance_strategies")
GUESSABLE_AT = 0.5  # the chance rate from which the summaries count a problem as guessable (a coin flip's)


def above_chance_expr() -> pl.Expr:
    """The pass rate above chance, (p - c) / (1 - c): the share of the room chance leaves that the
    student took (Cohen's kappa for one rater against a no-skill baseline). 0 at chance, 1 when
    always solved, negative when the student does worse than the no-skill strategy; null without a
    chance rate or at c = 1, where the reward says nothing about skill."""
    p, c = pl.col("pass_rate"), pl.col("chance_rate")
    return pl.when(c.is_not_null() & (c < 1)).then((p - c) / (1 - c)).otherwise(None)


def histogram(values: list[float | None], buckets: int = 20) -> list[int]:
    """Counts of values in `buckets` equal slices of [0, 1] (1.0 goes to the last)."""
    counts = [0] * buckets
    for v in values:
        if v is not None:
            counts[min(buckets - 1, max(0, int(v * buckets)))] += 1
    return counts


def _stats(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    series = pl.Series(values, dtype=pl.Float64)
    return {
        "n": len(values),
        "mean": round(float(series.mean()), 4),
        **{f"p{q}": round(float(series.quantile(q / 100, "nearest")), 4) for q in (10, 50, 90)},
        "max": round(float(series.max()), 4),
    }


def chance_summary(frame: pl.DataFrame | None, buckets: int = 10) -> dict[str, Any] | None:
    """The chance rates of valid rows: how many were measured, their distribution, per environment
    (with how many sit at a coin flip's rate or above, and at 1), the strategies that won, and the
    mean pass rate above chance; None without any row."""
    if frame is None or "chance_rate" not in frame.columns:
        return None
    if "valid" in frame.columns:
        frame = frame.filter(pl.col("valid"))
    if frame.height == 0:
        return None
    measured = frame.filter(pl.col("chance_rate").is_not_null())

    def counts(rates: list[float]) -> dict[str, int]:
        return {"guessable": sum(v >= GUESSABLE_AT for v in rates), "always": sum(v >= 1 for v in rates)}

    by_env = {}
    for env in sorted(frame["env"].unique().to_list()):
        rates = measured.filter(pl.col("env") == env)["chance_rate"].to_list()
        unmeasured = frame.filter(pl.col("env") == env).height - len(rates)
        by_env[env] = {**_stats(rates), "unmeasured": unmeasured, **counts(rates)}
    won = measured["chance_strategies"].explode().drop_nulls() if "chance_strategies" in measured.columns else None
    kinds = won.str.split(":").list.first().value_counts(sort=True) if won is not None and len(won) else None
    above = None
    if "pass_rate" in measured.columns:
        values = measured.select(above_chance_expr().alias("a"))["a"].drop_nulls()
        above = round(float(values.mean()), 4) if len(values) else None
    rates = measured["chance_rate"].to_list()
    return {
        "rows": frame.height,
        "measured": measured.height,
        **{k: v for k, v in _stats(rates).items() if k != "n"},
        "guessable_at": GUESSABLE_AT,
        **counts(rates),
        "histogram": histogram(rates, buckets),
        "by_env": by_env,
        "strategies": {str(k): int(n) for k, n in kinds.iter_rows()} if kinds is not None else {},
        "mean_pass_rate_above_chance": above,
    }


def integrity_table(frame: pl.DataFrame | None, order: list[str] | None = None) -> list[dict[str, Any]]:
    """Per (environment, bin): the distribution of chance rates, mutation scores and 95% interval
    widths of the pass rates, the card's integrity section (rows of older runs without a chance rate
    count as unmeasured)."""
    if frame is None or frame.height == 0:
        return []
    frame = with_intervals(frame) if "pass_rate" in frame.columns else frame
    if "pass_rate_low" in frame.columns:
        frame = frame.with_columns((pl.col("pass_rate_high") - pl.col("pass_rate_low")).alias("_width"))
    if "difficulty" not in frame.columns:
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias("difficulty"))
    rank = {name: i for i, name in enumerate(order or [])}
    out = []
    groups = frame.group_by("env", "difficulty").agg(pl.len()).rows()
    for env, difficulty, _ in sorted(groups, key=lambda g: (str(g[0]), rank.get(g[1], len(rank)), str(g[1]))):
        part = frame.filter((pl.col("env") == env) & pl.col("difficulty").eq_missing(difficulty))
        chance, score, width = (
            part[c].drop_nulls().to_list() if c in part.columns else []
            for c in ("chance_rate", "mutation_score", "_width")
        )
        out.append(
            {
                "env": env,
                "bin": difficulty,
                "rows": part.height,
                "chance": {**_stats(chance), "guessable": sum(1 for v in chance if v >= GUESSABLE_AT)},
                "mutation": _stats(score),
                "width": _stats(width),
            }
        )
    return out
