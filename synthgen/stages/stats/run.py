"""`synthgen stats RUN_DIR`: the numbers of a run, from whatever stages it has so far.

Reads (never writes) the run's stage folders, each file checked against its schema (a wrong one is
exit 2 naming the file and the column); a missing stage is reported as absent, an unfinished one
counted as far as it is written (`shards_done`). Besides rows per stage: yield per (mode, turn),
reject reasons, pass-rate histograms, multi- against single-turn yield, token use per role (the
chain stage's apart: `problems/` repeats hard starts generate already paid for), the sets offered
to `train --data`, chance levels, and generate's cost in the keys `synthgen plan` estimates, so an
estimate and its outcome compare line by line.

`collect` returns a JSON-ready dict (`--json` prints it); synthgen.stages.stats.show renders it.
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
from synthgen.store.run_info import check_run_dir, read_json
from synthgen.turns.report import TOKEN_COLUMNS as TOKENS
from synthgen.turns.report import TOKEN_RULE

GENERATE_COLUMNS = ("turn_id", "seed_id", "lineage_id", "env", "mode", "turn", "valid", "reason", "pass_rate")
GENERATE_COLUMNS += ("scored", "attempts", *TOKENS)


def read_columns(stage: StageDir, columns: tuple[str, ...]) -> pl.DataFrame | None:
    """The `columns` of every part of `stage`, each file checked against the schema; None without parts."""
    parts = stage.parts()
    if not parts:
        return None
    stage.check_schema(parts)  # all columns, not only the ones counted here
    return stage.read(columns)


def _histograms(frame: pl.DataFrame, buckets: int) -> dict[str, list[int]]:
    """A pass-rate histogram per environment of `frame`."""
    return {
        env: histogram(part["pass_rate"].drop_nulls().to_list(), buckets)
        for (env,), part in sorted(frame.group_by("env"), key=lambda kv: kv[0][0])
    }


def collect(settings: StatsSettings) -> dict[str, Any]:
    run = check_run_dir(settings.run_dir)
    b = settings.buckets
    out: dict[str, Any] = {"run_dir": str(run), "stages": {}, "histogram_edges": [i / b for i in range(b + 1)]}
    stages = out["stages"]

    seeds = StageDir(run, "seeds")
    stages["seeds"] = {"rows": seeds.count_rows()} if seeds.parts() else None

    generate = StageDir(run, "generate")
    gen = read_columns(generate, GENERATE_COLUMNS)
    kept_frame = read_columns(StageDir(run, "filter"), ("turn_id", "env", "pass_rate"))
    kept_ids = set(kept_frame["turn_id"].to_list()) if kept_frame is not None else None
    filter_stats = read_json(run / "filter" / "stats.json")

    if gen is not None:
        valid = int(gen["valid"].sum())
        stages["generate"] = {"rows": gen.height, "valid": valid, "invalid": gen.height - valid}
        stages["generate"].update(seeds=gen["seed_id"].n_unique(), lineages=gen["lineage_id"].n_unique())
        stages["generate"]["shards_done"] = len(generate.done_shards())
    else:
        # Before its first part, a generate that is running is not absent: say so, with its writer.
        note = running_note(generate)
        stages["generate"] = {"state": note} if note else None
    stages["filter"] = None
    if kept_frame is not None or filter_stats is not None:
        known = {k: (filter_stats or {}).get(k) for k in ("rejected", "input_rows")}
        stages["filter"] = {"kept": len(kept_ids or ()), **known}
    bin_stage = StageDir(run, "bin")
    bin_summary = read_json(bin_stage.path / "summary.json")
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
        n_kept = len(kept_ids) if kept_ids is not None else None
        out["tokens"] = _tokens(gen, n_kept)
        # The same keys as `synthgen plan` estimates, so that an estimate and its outcome compare.
        out["cost"] = costs.counted(gen, n_kept).as_dict(settings)
        if chain_tokens is not None:
            out["tokens"]["chain"] = chain_tokens
        out["pass_rate_histograms"] = {
            "generated_valid": _histograms(gen.with_columns(pass_rate=pl.when("valid").then("pass_rate")), b)
        }
    if filter_stats:
        out["reasons"]["filter"] = {k: v for k, v in filter_stats.get("reasons", {}).items() if k in R.FILTER and v}
    out["measurement"] = {
        "generated": evidence(read_columns(generate, EVIDENCE_COLUMNS)),
        "straddling": (bin_summary or {}).get("straddling"),
        "mutation": mutation_summary(read_columns(generate, MUTATION_COLUMNS)),
        "chance": {
            "generated": chance_summary(read_columns(generate, CHANCE_COLUMNS)),
            "kept": chance_summary(read_columns(StageDir(run, "filter"), CHANCE_COLUMNS)),
        },
    }
    out["student_format_failures"] = format_failure_reasons(
        run, read_columns(generate, ("valid", "format_failures", "failed_examples"))
    )
    if kept_frame is not None:
        out.setdefault("pass_rate_histograms", {})["kept"] = _histograms(kept_frame, b)
    return out


def _chain(run: Path) -> tuple[dict | None, dict | None]:
    """Chain stage counts (links, chains, problems, tries) and the tokens its own turns used."""
    dirs = {name: StageDir(run, f"chain/{name}") for name in ("links", "problems", "tries", "disjoint")}
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
    if frame is not None:
        info["tries"] = frame.height
    return info, None if frame is None else _role_tokens(frame)


def _role_tokens(frame: pl.DataFrame) -> dict[str, dict[str, int]]:
    sums = {c: int(frame[c].fill_null(0).sum()) for c in TOKENS}
    return {r: {"in": sums[f"{r}_tokens_in"], "out": sums[f"{r}_tokens_out"]} for r in ("teacher", "student")}


def rounded_mean(series: pl.Series) -> float | None:
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
                "mean_pass_rate": rounded_mean(valid["pass_rate"]),
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
    out: dict[str, Any] = {"kept_problems": kept}
    for role, n in _role_tokens(gen).items():
        total = n["in"] + n["out"]
        out[role] = {**n, "total": total, "per_kept": round(total / kept, 1) if kept else None}
    total = out["teacher"]["total"] + out["student"]["total"]
    out["total"] = {"total": total, "per_kept": round(total / kept, 1) if kept else None}
    out["counting"] = TOKEN_RULE
    return out


def _infra(run: Path) -> list[dict[str, Any]]:
    """The shards that the last run left unfinished on infrastructure, with the cause of each kind."""
    found = []
    for stage in ("generate", "chain"):
        for path in sorted((run / stage).glob("stats-*.json")):
            info = read_json(path) or {}
            if info.get("infra_failures"):
                shard, causes = info.get("shard") or path.stem.removeprefix("stats-"), info.get("infra_causes", {})
                found.append({"stage": stage, "shard": shard, "turns": info["infra_failures"], "causes": causes})
    return found


# The sets a run offers to `train --data`, named by their path under the run directory; an
# unfinished stage is listed with its rows so far and `finished: false`.
def _splits(stage: StageDir, column: str) -> dict[str, int]:
    frame = stage.read([column])
    return dict(sorted((str(k), n) for k, n in frame.group_by(column).len().iter_rows()))


def _entry(name: str, path: Path, splits: dict[str, int], finished: bool) -> dict[str, Any]:
    return {"name": name, "data": str(path), "problems": sum(splits.values()), "splits": splits, "finished": finished}


def training_sets(run: Path) -> list[dict[str, Any]]:
    """The sets of `run` that hold rows, in pipeline order: name, `--data` folder, counts per split."""
    out: list[dict[str, Any]] = []
    kept = StageDir(run, "filter")
    if kept.parts():
        out.append(_entry("filter", kept.path, {"kept": kept.count_rows()}, bool(kept.done_shards())))
    binned = StageDir(run, "bin")
    if binned.nested_parts():
        splits = _splits(binned, "difficulty")
        finished = binned.is_done(binned.whole_shard)
        out.append(_entry("bin", binned.path, splits, finished))
        out += [_entry(f"bin/{b}", binned.path / b, {b: n}, finished) for b, n in splits.items()]
    links = StageDir(run, "chain/links")
    if links.parts():
        finished = not links.status().missing
        out.append(_entry("chain", links.path.parent, _splits(links, "level"), finished))
    disjoint = StageDir(run, "chain/disjoint")
    if disjoint.parts():
        out.append(_entry("chain/disjoint", disjoint.path, _splits(disjoint, "difficulty"), True))
    return out


def print_stats(settings: StatsSettings) -> None:
    """`synthgen stats RUN_DIR`: the table on the terminal, or JSON with --json."""
    from synthgen.stages.stats.show import show

    data = collect(settings)
    if settings.as_json:
        print(json.dumps(data, indent=1, sort_keys=True))
    else:
        show(data, Console())
