"""What a run is made of, read from its own files: stages, settings, models, bins and drop reasons.

`synthgen export` writes this into the dataset card and `synthgen report` shows it at the top of
the page. Everything comes from what the stages wrote: each Parquet part's metadata
(`synthgen.settings`, `synthgen.settings_hash`, `synthgen.version`, `synthgen.input_partial`), the
completion markers, `filter/stats.json` and `bin/summary.json`. Nothing is recomputed here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from synthgen.envs import reasons as R
from synthgen.errors import UserError
from synthgen.store.bins import Bin, scheme_bins
from synthgen.store.files import read_metadata
from synthgen.store.layout import StageDir

# The stage folders a run can hold, in pipeline order, with what each one is.
STAGES: dict[str, str] = {
    "seeds": "code snippets the teacher builds on",
    "generate": "one row per teacher turn, valid or not",
    "filter": "valid problems inside the pass-rate band, near-duplicates removed",
    "bin": "kept problems sorted into difficulty bins by pass rate",
    "chain/problems": "every problem of every hard -> medium -> easy chain",
    "chain/links": "the chains: which problem sits at which level",
}

# Why a row was dropped, in words (the codes are synthgen.envs.reasons).
REASON_TEXT: dict[str, str] = {
    R.OK: "kept",
    R.FORMAT_ERROR: "the teacher's answer could not be parsed, or was cut off",
    R.COMPILE_ERROR: "the code does not compile or does not define what it must",
    R.FORBIDDEN: "the code imports or calls something nondeterministic or outside-facing",
    R.EXECUTION_ERROR: "the code raised, timed out or ran out of memory on an input",
    R.NONDETERMINISTIC: "the code gave different results under two hash seeds",
    R.OUTPUT_TOO_LARGE: "an output exceeded the size bound",
    R.TRIVIAL: "too few distinct outputs, or a trivial function passes (induction)",
    R.BAD_INPUTS: "too few, too many, duplicate or malformed inputs",
    R.INFRA: "a server or sandbox failure (says nothing about the problem)",
    R.NEVER_SOLVED: "the student never solved it (pass rate 0)",
    R.ALWAYS_SOLVED: "the student always solved it (pass rate 1)",
    R.OUT_OF_BAND: "pass rate outside the kept band",
    R.NO_EVIDENCE: "no attempt could be scored",
    R.NEAR_DUPLICATE: "a near-duplicate (MinHash) of a problem that was kept",
    R.CONTAMINATED: "overlaps a reference text (e.g. a benchmark)",
    R.WEAK_TESTS: "its inputs do not tell f from near misses (mutation score below the minimum)",
    R.GUESSABLE: "a strategy with no understanding earns the reward (chance rate at or above the maximum)",
}


@dataclass
class StageInfo:
    """One stage folder as its files describe it."""

    name: str
    rows: int
    parts: int
    finished: bool
    missing: list[str] = field(default_factory=list)
    settings_hashes: list[str] = field(default_factory=list)
    settings: dict[str, Any] | None = None
    versions: list[str] = field(default_factory=list)
    partial_input: bool = False  # made with --allow-partial from an unfinished upstream

    @property
    def settings_hash(self) -> str:
        return ", ".join(self.settings_hashes) or "-"


def stage_info(run_dir: Path, name: str) -> StageInfo | None:
    """What `run_dir/<name>` holds, from its part footers and markers; None when it has no parts."""
    stage = StageDir(run_dir, name)
    parts = stage.parts()
    if not parts:
        return None
    status = stage.status()
    metas = [read_metadata(p) for p in parts]
    first_settings = next((m["settings"] for m in metas if m.get("settings")), None)
    try:
        settings = json.loads(first_settings) if first_settings else None
    except ValueError:
        settings = None
    markers = [stage.done_info(s) or {} for s in stage.done_shards()]
    if isinstance(settings, dict) and settings.get("disjoint") and name.startswith("chain/"):
        # What was asked is not what exists: a run killed while it built the baseline has none.
        settings = {**settings, "disjoint": StageDir(run_dir, "chain/disjoint").status().complete}
    return StageInfo(
        name=name,
        rows=stage.count_rows(parts),
        parts=len(parts),
        finished=status.complete,
        missing=list(status.missing),
        settings_hashes=sorted({m["settings_hash"] for m in metas if m.get("settings_hash")}),
        settings=settings if isinstance(settings, dict) else None,
        versions=sorted({m["version"] for m in metas if m.get("version")}),
        partial_input=any(m.get("input_partial") for m in metas) or any(m.get("input_partial") for m in markers),
    )


def stages(run_dir: Path) -> dict[str, StageInfo]:
    """Every stage of the run that has output, in pipeline order."""
    found = {name: stage_info(run_dir, name) for name in STAGES}
    return {name: info for name, info in found.items() if info is not None}


def check_run_dir(run_dir: Path) -> Path:
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise UserError(f"run directory {run_dir} is a file, not a folder")
    if not run_dir.is_dir():
        raise UserError(f"run directory not found: {run_dir}")
    return run_dir


def read_json(path: Path) -> dict[str, Any] | None:
    """A stage's JSON summary, None when absent; a broken one is a one-line UserError."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    return data if isinstance(data, dict) else None


def filter_reasons(run_dir: Path) -> dict[str, int]:
    """Rows the filter dropped, by reason (generation reasons included), largest first."""
    stats = read_json(Path(run_dir) / "filter" / "stats.json") or {}
    counts = {k: int(v) for k, v in (stats.get("reasons") or {}).items() if isinstance(v, (int, float)) and v}
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def bins_of(info: StageInfo | None) -> list[Bin]:
    """The bins the bin stage used, rebuilt from its recorded settings; [] when unknown."""
    if info is None or not info.settings:
        return []
    try:
        return scheme_bins(info.settings.get("scheme", "broad"), info.settings.get("bins") or {})
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


def models(frame: pl.DataFrame) -> dict[str, dict[str, int]]:
    """Which teacher and student models made the rows, with row counts, most rows first.

    A student model counts only on rows where some attempt was scored: a row the student never
    answered carries the configured name, not a model that was seen to answer.
    """
    out: dict[str, dict[str, int]] = {}
    for role in ("teacher", "student"):
        column = f"{role}_model"
        if column not in frame.columns:
            continue
        rows = frame.filter(pl.col("scored") > 0) if role == "student" and "scored" in frame.columns else frame
        out[role] = dict(Counter(v for v in rows[column].to_list() if v).most_common())
    return out


def is_scripted(found: dict[str, dict[str, int]]) -> bool:
    """True when the scripted stand-in server (not a model) wrote any of the rows."""
    return any(name == "scripted" for role in found.values() for name in role)
