"""`synthgen stats RUN_DIR`: the numbers of a run, from whatever stages it has so far.

Reads (never writes) `seeds/`, `generate/`, `filter/`, `bin/` and `chain/` under the run
directory, each file checked against its schema (a wrong one is exit 2, naming the file and the
column); a stage that is missing is reported as absent, not as an error, and an unfinished one
is counted as far as it is written (`shards_done` says how far). Numbers:

- per stage: rows written (seeds, generated turns, kept and rejected, per bin; chains, links and
  problems of the chain stage);
- per (mode, turn): generated, valid, kept and the mean pass rate of valid rows: the multi-turn
  yield curve;
- reject reasons: generation reasons from the invalid rows, filter reasons from filter/stats.json;
- pass-rate histograms per environment, of valid generated rows and of kept rows;
- multi-turn against single-turn yield (kept problems per seed) when both modes are present;
- token use per role (teacher, student: in and out) and tokens per kept problem; the chain
  stage's own tokens separately;
- the sets the run offers for `train --data` and export (synthgen.stages.stats.training_sets): the
  filter's kept set, the bins together and one by one, the chains and their disjoint baseline,
  each with its folder and counts per split;
- chance levels (synthgen.envs.chance) of the valid generated rows and of the kept ones: their
  distribution, how many a no-skill strategy solves at least half the time, per environment, the
  strategies that won, and the mean pass rate above chance, (p - c) / (1 - c);
- the generate stage's cost in the keys `synthgen plan` estimates: requests, prompt and completion
  tokens, sandbox jobs, GPU-hours and wall time (at the throughput flags), and per kept problem.
  The count is the rows' token columns, as the generate stage's
  live line and stats file count them: prompt tokens once per request, completion tokens
  (reasoning included) once per attempt.

`collect` returns a JSON-ready dict (`--json` prints it as is); synthgen.stages.stats.show renders it with rich.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from synthgen.envs import reasons as R
from synthgen.errors import UserError
from synthgen.stages.plan import cost as costs
from synthgen.stages.stats.settings import StatsSettings
from synthgen.stages.stats.training_sets import training_sets
from synthgen.store.attempts import format_failure_reasons
from synthgen.store.layout import StageDir, running_note
from synthgen.store.measurement import (
    CHANCE_COLUMNS,
    EVIDENCE_COLUMNS,
    MUTATION_COLUMNS,
    chance_summary,
    evidence,
    histogram,
    mutation_summary,
)
from synthgen.turns.report import TOKEN_COLUMNS as TOKENS
from synthgen.turns.report import TOKEN_RULE

GENERATE_COLUMNS = (
    "turn_id",
    "seed_id",
    "lineage_id",
    "env",
    "mode",
    "turn",
    "valid",
    "reason",
    "pass_rate",
    "scored",
    "attempts",
) + TOKENS


def read_columns(stage: StageDir, columns: tuple[str, ...]) -> pl.DataFrame | None:
    """The `columns` of every part of `stage`, each file checked against the schema; None without parts."""
    parts = stage.parts()
    if not parts:
        return None
    stage.check_schema(parts)  # all columns, not only the ones counted here
    return stage.read(columns)


def _json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None


def _hist(values: list, buckets: int) -> list[int]:
    return histogram([v for v in values if v is not None], buckets)


def collect(settings: StatsSettings) -> dict[str, Any]:
    run = Path(settings.run_dir)
    if run.exists() and not run.is_dir():
        raise UserError(f"run directory {run} is a file, not a folder")
    if not run.is_dir():
        raise UserError(f"run directory not found: {run}")
    b = settings.buckets
    out: dict[str, Any] = {"run_dir": str(run), "stages": {}, "histogram_edges": [i / b for i in range(b + 1)]}
    stages = out["stages"]

    seeds = StageDir.of(run, "seeds")
    stages["seeds"] = {"rows": seeds.count_rows()} if seeds.parts() else None

    generate = StageDir.of(run, "generate")
    gen = read_columns(generate, GENERATE_COLUMNS)
    kept_frame = read_columns(StageDir.of(run, "filter"), ("turn_id", "env", "pass_rate"))
    kept_ids = set(kept_frame["turn_id"].to_list()) if kept_frame is not None else None
    filter_stats = _json(run / "filter" / "stats.json")

    if gen is not None:
        stages["generate"] = {
            "rows": gen.height,
            "valid": int(gen["valid"].sum()),
            "invalid": gen.height - int(gen["valid"].sum()),
            "seeds": gen["seed_id"].n_unique(),
            "lineages": gen["lineage_id"].n_unique(),
            "shards_done": len(generate.done_shards()),
        }
    else:
        # Before its first part, a generate that is running is not absent: say so, with its writer.
        note = running_note(generate)
        stages["generate"] = {"state": note} if note else None
    stages["filter"] = (
        None
        if kept_frame is None and filter_stats is None
        else {
            "kept": len(kept_ids or ()),
            "rejected": filter_stats.get("rejected") if filter_stats else None,
            "input_rows": filter_stats.get("input_rows") if filter_stats else None,
        }
    )
    bin_stage = StageDir.of(run, "bin")
    bin_summary = _json(bin_stage.path / "summary.json")
    if bin_summary:
        stages["bin"] = {name: info["written"] for name, info in bin_summary["bins"].items()}
        stages["bin"]["outside"] = bin_summary["outside"]["total"]
    else:
        per_bin: dict[str, list[Path]] = {}
        for part in bin_stage.nested_parts():
            per_bin.setdefault(part.parent.name, []).append(part)
        stages["bin"] = {name: bin_stage.count_rows(parts) for name, parts in sorted(per_bin.items())} or None
    stages["chain"], chain_tokens = _chain(run)
    out["infra"] = _infra(run)
    if not any(stages.values()):
        raise UserError(f"{run} holds no stage output (seeds/, generate/, filter/, bin/ or chain/)")

    out["sets"] = training_sets(run)
    out["reasons"] = {"generation": {}, "filter": {}}
    if gen is not None:
        gen = gen.with_columns(pl.col("turn_id").is_in(list(kept_ids or ())).alias("kept"))
        invalid = gen.filter(~pl.col("valid"))
        out["reasons"]["generation"] = dict(sorted(invalid.group_by("reason").len().iter_rows()))
        out["turns"] = _turns(gen, kept_ids is not None)
        out["modes"] = _modes(gen, kept_ids is not None)
        out["tokens"] = _tokens(gen, len(kept_ids) if kept_ids is not None else None)
        # The same keys as `synthgen plan` estimates, so that an estimate and its outcome compare.
        out["cost"] = costs.counted(gen, len(kept_ids) if kept_ids is not None else None).as_dict(settings)
        if chain_tokens is not None:
            out["tokens"]["chain"] = chain_tokens
        out["pass_rate_histograms"] = {
            "generated_valid": {
                env: _hist(gen.filter(pl.col("valid") & (pl.col("env") == env))["pass_rate"].to_list(), b)
                for env in sorted(gen["env"].unique().to_list())
            }
        }
    if filter_stats:
        out["reasons"]["filter"] = {k: v for k, v in filter_stats.get("reasons", {}).items() if k in R.FILTER and v}
    # Who measured the pass rates and how sure they are (synthgen.store.measurement).
    out["measurement"] = {
        "generated": evidence(read_columns(generate, EVIDENCE_COLUMNS)),
        "straddling": (bin_summary or {}).get("straddling"),
        "mutation": mutation_summary(read_columns(generate, MUTATION_COLUMNS)),
        "chance": {
            "generated": chance_summary(read_columns(generate, CHANCE_COLUMNS)),
            "kept": chance_summary(read_columns(StageDir.of(run, "filter"), CHANCE_COLUMNS)),
        },
    }
    out["student_format_failures"] = format_failure_reasons(
        run, read_columns(generate, ("valid", "format_failures", "failed_examples"))
    )
    if kept_frame is not None:
        out.setdefault("pass_rate_histograms", {})["kept"] = {
            env: _hist(kept_frame.filter(pl.col("env") == env)["pass_rate"].to_list(), b)
            for env in sorted(kept_frame["env"].unique().to_list())
        }
    return out


def _chain(run: Path) -> tuple[dict | None, dict | None]:
    """Chain stage counts (links, chains, problems, tries) and the tokens its own turns used.

    Tokens come from `tries/` (one row per chain turn): `problems/` repeats the hard starts,
    whose tokens the generate stage already counted."""
    dirs = {name: StageDir.of(run, f"chain/{name}") for name in ("links", "problems", "tries", "disjoint")}
    files = sum(len(d.parts()) for d in dirs.values())
    if not files:
        return None, None
    info: dict[str, Any] = {"files": files}
    link_frame = read_columns(dirs["links"], ("chain_id",))
    if link_frame is not None:
        info.update(links=link_frame.height, chains=link_frame["chain_id"].n_unique())
    problems = read_columns(dirs["problems"], ("problem_id",))
    if problems is not None:
        info["problems"] = problems.height
    frame = read_columns(dirs["tries"], TOKENS)
    tokens = None
    if frame is not None:
        info["tries"] = frame.height
        sums = {c: int(frame[c].fill_null(0).sum()) for c in TOKENS}
        tokens = {
            role: {"in": sums[f"{role}_tokens_in"], "out": sums[f"{role}_tokens_out"]}
            for role in ("teacher", "student")
        }
    return info, tokens


def _mean(series: pl.Series) -> float | None:
    value = series.drop_nulls().mean()
    return None if value is None else round(float(value), 4)


def _turns(gen: pl.DataFrame, have_kept: bool) -> list[dict]:
    rows = []
    for (mode, turn), part in sorted(gen.group_by(["mode", "turn"]), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        valid = part.filter(pl.col("valid"))
        rows.append(
            {
                "mode": mode,
                "turn": int(turn),
                "generated": part.height,
                "valid": valid.height,
                "kept": int(part["kept"].sum()) if have_kept else None,
                "mean_pass_rate": _mean(valid["pass_rate"]),
            }
        )
    return rows


def _modes(gen: pl.DataFrame, have_kept: bool) -> dict | None:
    modes = sorted(gen["mode"].unique().to_list())
    if not {"multi", "single"} <= set(modes):
        return None
    out: dict[str, Any] = {}
    for mode in ("multi", "single"):
        part = gen.filter(pl.col("mode") == mode)
        seeds = part["seed_id"].n_unique()
        kept = int(part["kept"].sum()) if have_kept else None
        out[mode] = {
            "seeds": seeds,
            "generated": part.height,
            "valid": int(part["valid"].sum()),
            "kept": kept,
            "kept_per_seed": round(kept / seeds, 4) if kept is not None and seeds else None,
        }
    m, s = out["multi"]["kept_per_seed"], out["single"]["kept_per_seed"]
    out["multi_over_single"] = round(m / s, 3) if m is not None and s else None
    return out


def _tokens(gen: pl.DataFrame, kept: int | None) -> dict:
    sums = {c: int(gen[c].fill_null(0).sum()) for c in TOKENS}
    out: dict[str, Any] = {"kept_problems": kept}
    for role in ("teacher", "student"):
        tin, tout = sums[f"{role}_tokens_in"], sums[f"{role}_tokens_out"]
        out[role] = {
            "in": tin,
            "out": tout,
            "total": tin + tout,
            "per_kept": round((tin + tout) / kept, 1) if kept else None,
        }
    total = out["teacher"]["total"] + out["student"]["total"]
    out["total"] = {"total": total, "per_kept": round(total / kept, 1) if kept else None}
    out["counting"] = TOKEN_RULE
    return out


def _infra(run: Path) -> list[dict[str, Any]]:
    """The shards that the last run left unfinished on infrastructure, with the cause of each kind."""
    found = []
    for stage in ("generate", "chain"):
        for path in sorted((run / stage).glob("stats-*.json")):
            info = _json(path) or {}
            if info.get("infra_failures"):
                found.append(
                    {
                        "stage": stage,
                        "shard": info.get("shard") or path.stem.removeprefix("stats-"),
                        "turns": info["infra_failures"],
                        "causes": info.get("infra_causes", {}),
                    }
                )
    return found


def print_stats(settings: StatsSettings) -> None:
    """`synthgen stats RUN_DIR`: the table on the terminal, or JSON with --json."""
    import json

    from synthgen.stages.stats.show import show

    data = collect(settings)
    if settings.as_json:
        print(json.dumps(data, indent=1, sort_keys=True))
    else:
        show(data, Console())
