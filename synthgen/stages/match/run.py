"""`synthgen match SOURCE --like TARGET --output OUT`: SOURCE subsampled to TARGET's pass-rate histogram.

The paper compares synthetic sets at matched difficulty (its Figs. 5, 7 and 16-18): a comparison
of two sets is fair only when their pass-rate histograms agree. Both sets are read as `train
--data` reads them; only scorable problems count. Per environment present in both, pass rates
fall into the `attempts + 1` buckets round(p * attempts); the source keeps round(N * q_b) problems
of bucket b, q_b the target's share, for the largest N its counts allow (buckets it lacks are
counted against the distance), chosen by sha256 of the seed and the problem id. The distance is
the total variation between the normalised histograms (0 = the same mix, 1 = no overlap),
reported before and after.

OUT gets `part-00000.parquet` (PROBLEMS plus `difficulty`) and `match.json` with the figures. An
environment of SOURCE that TARGET lacks is left out, and said so.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console

from synthgen.errors import UserError
from synthgen.stages.bin.run import rank
from synthgen.stages.match.settings import MatchSettings
from synthgen.store.files import file_metadata, write_parquet_atomic, write_text_atomic
from synthgen.store.record_checks import BINNED_SPEC
from synthgen.store.records import table_from_rows

SUMMARY = "match.json"


def bucket(rate: float, attempts: int) -> int:
    return min(attempts, max(0, round(rate * attempts)))


def distance(a: Counter, b: Counter) -> float:
    """Total variation between the normalised histograms `a` and `b` (1.0 when either is empty)."""
    na, nb = sum(a.values()), sum(b.values())
    if not na or not nb:
        return 1.0
    return 0.5 * sum(abs(a[k] / na - b[k] / nb) for k in set(a) | set(b))


def fit(source: Counter, target: Counter) -> dict[int, int]:
    """Problems to keep per bucket: round(N * q_b) for the largest N the source's counts allow."""
    total = sum(target.values())
    shares = {b: n / total for b, n in target.items() if source.get(b)}
    if not shares:
        return {}
    # Rounded to the nearest count, a bucket's share of N fits while round(N * q) <= s; search N down
    # from the bound that ignores rounding.
    n = int(min(source[b] / q for b, q in shares.items())) + 1
    while n > 0 and any(round(n * q) > source[b] for b, q in shares.items()):
        n -= 1
    return {b: round(n * q) for b, q in shares.items() if round(n * q)}


def match_env(rows: list[dict], like: list[dict], attempts: int, seed: int) -> tuple[list[dict], dict[str, Any]]:
    """One environment: the kept rows and its figures (sizes, buckets the source lacks, distances)."""
    by_bucket: dict[int, list[dict]] = {}
    for row in rows:
        by_bucket.setdefault(bucket(row["pass_rate"], attempts), []).append(row)
    source = Counter({b: len(r) for b, r in by_bucket.items()})
    target = Counter(bucket(row["pass_rate"], attempts) for row in like)
    kept: list[dict] = []
    for b, n in sorted(fit(source, target).items()):
        kept += sorted(by_bucket[b], key=lambda r: rank(seed, r["problem_id"]))[:n]
    after = Counter(bucket(row["pass_rate"], attempts) for row in kept)
    figures = {
        "source": len(rows),
        "target": len(like),
        "kept": len(kept),
        "buckets_missing": sorted(b for b in target if not source.get(b)),
        "distance_before": round(distance(source, target), 4),
        "distance_after": round(distance(after, target), 4),
    }
    return sorted(kept, key=lambda r: r["problem_id"]), figures


def _read(folder: Path) -> list[dict]:
    from synthgen.train.data import read_problem_rows, scorable

    rows = [r for r in scorable(read_problem_rows([folder]), [folder], None) if r.get("pass_rate") is not None]
    if not rows:
        raise UserError(f"{folder}: no scorable problem with a pass rate")
    return rows


def run(settings: MatchSettings, console: Console | None = None) -> dict[str, Any]:
    console = console or Console(stderr=True, soft_wrap=True)
    out = Path(settings.output)
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / SUMMARY).is_file():
        raise UserError(f"{out} is not empty and holds no earlier match ({SUMMARY}); choose another folder")
    source, like = _read(Path(settings.source)), _read(Path(settings.like))
    envs_like = {r["env"] for r in like}
    kept: list[dict] = []
    report: dict[str, Any] = {
        "source": str(settings.source),
        "like": str(settings.like),
        "attempts": settings.attempts,
        "seed": settings.seed,
        "envs": {},
        "left_out_envs": sorted({r["env"] for r in source} - envs_like),
    }
    for env in sorted({r["env"] for r in source} & envs_like):
        mine, theirs = ([r for r in rows if r["env"] == env] for rows in (source, like))
        rows, figures = match_env(mine, theirs, settings.attempts, settings.seed)
        kept += rows
        report["envs"][env] = figures
    if not kept:
        raise UserError(f"no problem of {settings.source} matches {settings.like} (no shared environment or bucket)")
    columns = BINNED_SPEC.schema.names
    table = table_from_rows([{k: r.get(k) for k in columns} for r in kept], BINNED_SPEC.schema)
    meta = file_metadata("match", settings.settings_hash(), {"settings": settings.hashed_view()})
    for old in out.glob("*.parquet") if out.is_dir() else []:
        old.unlink()
    write_parquet_atomic(out / "part-00000.parquet", table, meta)
    write_text_atomic(out / SUMMARY, json.dumps(report, indent=1, sort_keys=True) + "\n")
    for env, f in report["envs"].items():
        gaps = len(f["buckets_missing"])
        missing = f", {gaps} target bucket(s) absent from the source" if gaps else ""
        console.print(
            f"match {env}: kept {f['kept']} of {f['source']} (target {f['target']}); pass-rate histograms differ "
            f"by {f['distance_before']:.3f} before, {f['distance_after']:.3f} after (0 = the same mix){missing}"
        )
    if report["left_out_envs"]:
        console.print(f"match: left out {', '.join(report['left_out_envs'])} (not in {settings.like})")
    console.print(f"match: wrote {len(kept)} problems to {out} (train --data {out})")
    return report
