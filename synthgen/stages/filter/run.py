"""`synthgen filter`: keep the problems worth training on, and say why every other one went.

Reads every turn `generate` wrote (`<run_dir>/generate/`, or `--input DIR`); the first rule that
fires is the row's one reject reason (synthgen.envs.reasons):

1. invalid at generation        the row's own generation reason (format_error, trivial, ...)
2. no scored attempt            no_evidence (every attempt failed on infrastructure)
3. pass rate outside the band   never_solved (0), always_solved (1), else out_of_band; the band
                                [band_low, band_high] is closed, default [0.01, 0.97] (the paper's Section 4.1)
3b. weak tests                  weak_tests: mutation score below --min-mutation-score, or none
                                measured (only with that flag; synthgen.envs.mutation)
3c. guessable                   guessable: chance rate (synthgen.envs.chance) at or above --max-chance-rate;
                                a row without one (older run, --no-chance-probes) is kept, counted unmeasured
4. benchmark overlap            contaminated (synthgen.stages.filter.contamination), only with --reference
5. near-duplicate               near_duplicate (synthgen.stages.filter.dedup) among the rows still standing,
                                across all shards, and against earlier runs' kept sets

Contamination runs before dedup so a contaminated problem never wins a duplicate cluster and
takes its clean twins down with it. Kept rows pass through unchanged to
`filter/kept.part-*.parquet`, rejected rows (with `reject_reason`, `reject_detail`) to
`filter/rejects/`, counts to `filter/stats.json`. A re-run with other settings needs --force; the
folder is built and swapped in as by every whole-folder stage (synthgen.store.readiness.WholeStage).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from rich.console import Console

from synthgen.envs import reasons as R
from synthgen.errors import UserError
from synthgen.stages.filter.settings import DedupSettings, FilterSettings
from synthgen.store.files import file_metadata, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.readiness import WholeStage, read_input
from synthgen.store.records import PROBLEMS, REJECTS_EXTRA, with_fields

STAGE = "filter"
KEPT = "kept"
REJECTS_SHARD = "rejects"
REJECTS = with_fields(PROBLEMS, REJECTS_EXTRA)
STATS_FILE = "stats.json"


# -- reading ----------------------------------------------------------------------------------------
def prior_kept(paths: list[str]) -> pl.DataFrame:
    """Earlier runs' kept problems (run dir -> its filter/ folder, or a folder of Parquet)."""
    frames = [pl.DataFrame(schema=dict.fromkeys(["problem_id", "env", "code", "message"], pl.String))]
    for raw in paths:
        path = Path(raw)
        folder = path / STAGE if (path / STAGE).is_dir() else path
        found = StageDir.at(folder, STAGE).require_complete(hint=" in that run")
        table = found.read_table(["problem_id", "env", "code", "message"])
        frames.append(pl.from_arrow(table))
    return pl.concat(frames)


# -- the rules --------------------------------------------------------------------------------------
def rule_reasons(df: pl.DataFrame, settings: FilterSettings) -> tuple[list[str | None], list[str | None]]:
    """Rules 1-3 per row: (reason or None, detail)."""
    low, high = settings.band_low, settings.band_high
    out: list[tuple[str | None, str | None]] = []
    rows = df.select(
        "turn_id", "valid", "reason", "reason_detail", "pass_rate", "attempts", "scored", "correct", "infra_failures"
    )
    for turn_id, valid, reason, detail, p, attempts, scored, correct, infra in rows.iter_rows():
        if not valid:
            if reason not in R.GENERATION:
                raise UserError(f"row {turn_id} is invalid with reason {reason!r}, not a generation reason code")
            out.append((reason, detail))
        elif not scored or p is None:
            out.append((R.NO_EVIDENCE, f"no scored attempt: {infra} of {attempts} failed on infrastructure"))
        elif p < low or p > high:
            why = R.NEVER_SOLVED if p == 0 else R.ALWAYS_SOLVED if p == 1 else R.OUT_OF_BAND
            out.append((why, f"pass rate {p:.4g} ({correct}/{scored}) outside [{low}, {high}]"))
        else:
            out.append((None, None))
    return [r for r, _ in out], [d for _, d in out]


def mutation_reasons(df: pl.DataFrame, alive: np.ndarray, minimum: float | None) -> dict[int, str]:
    """Rule 3b: {row: detail} for rows among `alive` whose mutation score is below `minimum` or missing."""
    if minimum is None:
        return {}
    hits: dict[int, str] = {}
    cols = ["mutation_score", "mutants", "mutants_caught", "surviving_mutants"]
    for i, (score, total, caught, surviving) in enumerate(df.select(cols).iter_rows()):
        if not alive[i]:
            continue
        if score is None:
            hits[i] = "no mutation score was measured (generated with --no-mutation-score, or by an older synthgen)"
        elif score < minimum:
            kinds = ", ".join(f"{k} x{n}" for k, n in Counter(surviving or []).most_common())
            hits[i] = f"mutation score {score:.3g} ({caught}/{total} caught) below {minimum}; surviving: {kinds}"
    return hits


def chance_reasons(df: pl.DataFrame, alive: np.ndarray, maximum: float | None) -> tuple[dict[int, str], dict]:
    """Rule 3c: {row: detail} for rows among `alive` whose chance rate is at or above `maximum`, and a summary."""
    if "chance_rate" not in df.columns:
        return {}, {"max_chance_rate": maximum, "guessable": 0, "unmeasured": int(alive.sum())}
    hits: dict[int, str] = {}
    unmeasured = 0
    cols = ["chance_rate", "chance_strategies", "pass_rate"]
    for i, (rate, strategies, p) in enumerate(df.select(cols).iter_rows()):
        if not alive[i]:
            continue
        if rate is None:
            unmeasured += 1
        elif maximum is not None and rate >= maximum:
            won = ", ".join(strategies or []) or "?"
            hits[i] = f"chance rate {rate:.3g} (by {won}) at or above {maximum:g}; pass rate {p:.4g}"
    return hits, {"max_chance_rate": maximum, "guessable": len(hits), "unmeasured": unmeasured}


def contamination_reasons(df: pl.DataFrame, alive: np.ndarray, settings: FilterSettings) -> tuple[dict[int, str], dict]:
    """Rule 4: {row: detail} for contaminated rows among `alive`, and a summary."""
    from synthgen.stages.filter import contamination as C

    cfg = settings.contamination
    if not cfg.references and not cfg.benchmarks:
        return {}, {"references": [], "benchmarks": {}, "contaminated": 0}
    refs = C.load_references(cfg.references, cfg.columns) if cfg.references else []
    bench_refs, versions = C.benchmark_references(cfg.benchmarks, cfg.data_dir)
    index = C.ReferenceIndex(refs + bench_refs, cfg.ngram)
    hits: dict[int, str] = {}
    cols = ["code", "message", "inputs", "pre_test_code", "test_code"]
    for i, row in enumerate(df.select(cols).iter_rows()):
        if alive[i]:
            detail = index.check(C.problem_text(*row), cfg.min_matches)
            if detail:
                hits[i] = detail
    by_minhash = {}
    if bench_refs:
        rows = np.flatnonzero(alive)
        sub = df[rows.tolist()]
        texts = list(zip(sub["code"].to_list(), sub["message"].to_list()))
        # The benchmarks' signatures use seed 1 whatever the run's dedup seed, the same for every run.
        params = DedupSettings(num_perm=settings.dedup.num_perm, ngram=settings.dedup.ngram, seed=1)
        found = C.minhash_matches(texts, bench_refs, params, cfg.minhash_threshold)
        by_minhash = {int(rows[k]): detail for k, detail in found.items()}
    for i, detail in by_minhash.items():
        hits.setdefault(i, detail)
    matched = {name: sum(f" {name}:" in detail for detail in hits.values()) for name in versions}
    summary = {
        "references": [str(r) for r in cfg.references],
        "reference_texts": len(refs) + len(bench_refs),
        "reference_ngrams": len(index),
        "ngram": cfg.ngram,
        "benchmarks": {name: {**v, "matched": matched[name]} for name, v in versions.items()},
        "minhash_threshold": cfg.minhash_threshold if bench_refs else None,
        "minhash_matches": len(by_minhash),
        "contaminated": len(hits),
    }
    return hits, summary


def dedup_reasons(
    df: pl.DataFrame, alive: np.ndarray, settings: FilterSettings, prior: pl.DataFrame
) -> tuple[dict[int, str], dict]:
    """Rule 5: {row: detail} for near-duplicates among `alive` rows, and a summary. Per cluster the
    row with pass rate closest to 0.5 stays (ties: lowest turn, then turn_id); a cluster that holds
    an earlier run's kept problem keeps none of the new rows."""
    from synthgen.stages.filter import dedup

    cfg = settings.dedup
    rows = np.flatnonzero(alive)
    if not cfg.enabled or len(rows) == 0:
        return {}, {"enabled": cfg.enabled, "clusters": 0, "near_duplicates": 0}
    started = time.perf_counter()
    sub = df[rows.tolist()]
    texts = list(zip(sub["code"].to_list(), sub["message"].to_list()))
    texts += list(zip(prior["code"].to_list(), prior["message"].to_list()))
    envs = sub["env"].to_list() + prior["env"].to_list()
    groups = None
    if cfg.per_env:
        codes = {e: k for k, e in enumerate(sorted(set(envs)))}
        groups = np.array([codes[e] for e in envs], dtype=np.int64)
    labels = dedup.near_duplicate_labels(texts, cfg, groups=groups, workers=cfg.workers)
    n_new = len(rows)
    pass_rates = sub["pass_rate"].to_list()
    turns = sub["turn"].to_list()
    turn_ids = sub["turn_id"].to_list()
    pids = sub["problem_id"].to_list()
    prior_ids = prior["problem_id"].to_list()
    hits: dict[int, str] = {}
    clusters, against = dedup.clusters_of(labels), 0
    for group in clusters:
        new = [k for k in group if k < n_new]
        old = [k for k in group if k >= n_new]
        if old:
            for k in new:
                hits[int(rows[k])] = f"near-duplicate of earlier-run problem {prior_ids[old[0] - n_new]}"
            against += len(new)
            continue
        keep = min(new, key=lambda k: (round(abs((pass_rates[k] or 0.0) - 0.5), 9), turns[k], turn_ids[k]))
        for k in new:
            if k != keep:
                hits[int(rows[k])] = (
                    f"near-duplicate of problem {pids[keep]} (turn {turn_ids[keep]}, "
                    f"pass rate {pass_rates[keep]:.4g}; cluster of {len(new)})"
                )
    summary = {
        "enabled": True,
        "threshold": cfg.threshold,
        "num_perm": cfg.num_perm,
        "ngram": cfg.ngram,
        "signature": cfg.signature,
        "lsh_bands_rows": list(dedup.lsh_shape(cfg.threshold, cfg.num_perm, cfg.recall_weight)),
        "compared": n_new,
        "earlier_run_problems": prior.height,
        "clusters": len(clusters),
        "near_duplicates": len(hits),
        "of_earlier_runs": against,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return hits, summary


def decide(
    df: pl.DataFrame, settings: FilterSettings, prior: pl.DataFrame
) -> tuple[list[str | None], list[str | None], dict[str, Any]]:
    """Every row's reject reason (None = kept) and detail, plus the rule summaries."""
    reasons, details = rule_reasons(df, settings)
    alive = np.array([r is None for r in reasons], dtype=bool)
    for i, detail in mutation_reasons(df, alive, settings.min_mutation_score).items():
        reasons[i], details[i], alive[i] = R.WEAK_TESTS, detail, False
    hits, chance = chance_reasons(df, alive, settings.max_chance_rate)
    for i, detail in hits.items():
        reasons[i], details[i], alive[i] = R.GUESSABLE, detail, False
    hits, contamination = contamination_reasons(df, alive, settings)
    for i, detail in hits.items():
        reasons[i], details[i], alive[i] = R.CONTAMINATED, detail, False
    hits, near = dedup_reasons(df, alive, settings, prior)
    for i, detail in hits.items():
        reasons[i], details[i] = R.NEAR_DUPLICATE, detail
    return reasons, details, {"chance": chance, "contamination": contamination, "dedup": near}


# -- the stage --------------------------------------------------------------------------------------
def summarize(df: pl.DataFrame, reasons: list[str | None], settings: FilterSettings, extra: dict) -> dict:
    frame = df.select("env", "turn", "mode").with_columns(pl.Series("reject", reasons, dtype=pl.String))
    kept = frame.filter(pl.col("reject").is_null())
    counts = dict.fromkeys(R.GENERATION + R.FILTER, 0)
    counts.update(frame.drop_nulls("reject").group_by("reject").len().iter_rows())
    by_env = {}
    for env in sorted(frame["env"].unique().to_list()):
        part = frame.filter(pl.col("env") == env)
        by_env[env] = {
            "input": part.height,
            "kept": part["reject"].null_count(),
            "reasons": dict(sorted(part.drop_nulls("reject").group_by("reject").len().iter_rows())),
        }
    by_turn = {
        str(t): {"input": n, "kept": kept.filter(pl.col("turn") == t).height}
        for t, n in sorted(frame.group_by("turn").len().iter_rows())
    }
    return {
        "stage": STAGE,
        "settings_hash": settings.settings_hash(),
        "settings": settings.hashed_view(),
        "input_rows": df.height,
        "kept": kept.height,
        "rejected": df.height - kept.height,
        "reasons": counts,
        "by_env": by_env,
        "by_turn": by_turn,
        **extra,
    }


def _write_parts(stage: StageDir, shard: str, table: pa.Table, rows_per_part: int, meta: dict) -> int:
    parts = max(1, -(-table.num_rows // rows_per_part))
    for i in range(parts):
        stage.write_part(shard, i, table.slice(i * rows_per_part, rows_per_part), meta)
    return parts


class FilterStage(WholeStage):
    """Reads generate's rows; builds filter/ (kept parts, rejects/, stats.json)."""

    settings: FilterSettings

    def prepare(self) -> None:
        s = self.settings
        self.found = read_input(
            StageDir.input_of(s.run_dir, "generate", s.input_dir), s.allow_partial, self.console, STAGE
        )

    def up_to_date(self, info: dict) -> bool:
        stats = self.output.path / STATS_FILE
        if info.get("input") != self.found.fingerprint() or not stats.is_file():
            return False
        self.console.print(f"filter: {self.output.path} is up to date with {self.found.stage.path}; nothing to do")
        self.summary = json.loads(stats.read_text())
        return True

    def build(self, build: StageDir) -> dict:
        settings, found = self.settings, self.found
        read_from = found.fingerprint()  # before reading: a marker never names input it did not read
        table = found.read_table()
        prior = prior_kept(settings.dedup.against if settings.dedup.enabled else [])
        df = pl.from_arrow(table)
        reasons, details, extra = decide(df, settings, prior)
        keep = pa.array([r is None for r in reasons], type=pa.bool_())
        self.summary = summarize(df, reasons, settings, {"input": str(found.stage.path), **found.metadata(), **extra})
        meta = file_metadata(STAGE, self.digest, {"settings": settings.hashed_view(), **found.metadata()})
        kept = table.filter(keep)
        n_parts = _write_parts(build, KEPT, kept, settings.rows_per_part, meta)
        if settings.rejects:
            rejects = build.sub(REJECTS_SHARD)
            dropped = table.filter(pc.invert(keep))
            why = [r for r in reasons if r is not None]
            detail = [d for r, d in zip(reasons, details) if r is not None]
            for field, values in zip(REJECTS_EXTRA, (why, detail)):
                dropped = dropped.append_column(field, pa.array(values, pa.string()))
            _write_parts(rejects, REJECTS_SHARD, dropped.cast(REJECTS), settings.rows_per_part, meta)
            rejects.mark_done(REJECTS_SHARD, {"settings_hash": self.digest, "rows": dropped.num_rows})
        write_text_atomic(build.path / STATS_FILE, json.dumps(self.summary, indent=1, sort_keys=True) + "\n")
        return {"input": read_from, "rows": kept.num_rows, "parts": n_parts, **found.metadata()}


def run(settings: FilterSettings, *, force: bool = False, console: Console | None = None) -> dict:
    stage = FilterStage(settings, StageDir(settings.run_dir, STAGE), console)
    if stage.run(force):
        stats = stage.summary
        reasons = ", ".join(f"{k} {v}" for k, v in stats["reasons"].items() if v) or "none"
        stage.console.print(f"filter: kept {stats['kept']} of {stats['input_rows']} rows; rejected: {reasons}")
    return stage.summary
