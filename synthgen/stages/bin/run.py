"""`synthgen bin`: sort kept problems into difficulty bins by pass rate (the paper's Appendix B and Table 3).

Reads the filter's kept rows (`<run_dir>/filter/`, or `--input DIR`), adds a `difficulty` column
and writes `<run_dir>/bin/<difficulty>/part-00000.parquet` per non-empty bin, each readable on
its own; an empty bin gets no folder (`datasets` cannot read a Parquet file without rows) and
summary.json lists it with 0. Problems outside every bin are counted and reported, never silently
kept; `--write-outside` writes them to `<run_dir>/bin_outside/`, beside `bin/` so that no glob over
`bin/` picks them up. `--balance` keeps in every bin the smallest bin's count of rows, those whose
sha256(seed, turn_id) is smallest. settings.py beside this file has the boundary rule.

Where the rows carry a chance rate (synthgen.envs.chance), the summary's `chance` says per bin how
many problems a no-skill strategy solves at least half the time and the mean pass rate above
chance: a bin of pass rates near 0.5 whose rate above chance is near 0 holds coin flips, not
medium problems. `bin/` is swapped in under a lock (synthgen.store.readiness.WholeStage).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import polars as pl
import pyarrow as pa
from rich.console import Console
from rich.table import Table

from synthgen.errors import UserError
from synthgen.stages.bin.settings import BinSettings
from synthgen.stages.stats.run import rounded_mean
from synthgen.stages.stats.show import grid, sparkline
from synthgen.store.bins import Bin
from synthgen.store.files import file_metadata, write_parquet_atomic, write_text_atomic
from synthgen.store.layout import StageDir
from synthgen.store.measurement import (
    GUESSABLE_AT,
    INTERVAL_COLUMNS,
    above_chance_expr,
    describe,
    histogram,
    measurements,
    with_intervals,
)
from synthgen.store.readiness import WholeStage, read_input
from synthgen.store.record_checks import BINNED_SPEC

STAGE = "bin"
OUTSIDE = "bin_outside"  # a sibling of bin/
SUMMARY = "summary.json"
BINNED = BINNED_SPEC.schema  # PROBLEMS plus `difficulty`


def assign(df: pl.DataFrame, bins: list[Bin]) -> pl.DataFrame:
    """`df` with a `difficulty` column (null outside every bin)."""
    p = pl.col("pass_rate")
    expr = pl.lit(None, dtype=pl.String)
    for b in reversed(bins):
        upper = (p <= b.high) if b.closed_high else (p < b.high)
        expr = pl.when((p >= b.low) & upper).then(pl.lit(b.name)).otherwise(expr)
    return df.with_columns(expr.alias("difficulty"))


def where_outside(df: pl.DataFrame, bins: list[Bin]) -> dict[str, int]:
    out = df.filter(pl.col("difficulty").is_null())
    low, high = bins[0].low, max(b.high for b in bins)
    p = pl.col("pass_rate")
    return {
        "total": out.height,
        "no_pass_rate": out.filter(p.is_null()).height,
        "below": out.filter(p < low).height,
        "between": out.filter((p >= low) & (p <= high)).height,
        "above": out.filter(p > high).height,
    }


def rank(seed: int, key: str) -> bytes:
    """A seeded order of rows by key: the same seed and keys, the same order."""
    return hashlib.sha256(f"{seed}:{key}".encode()).digest()


def balance(df: pl.DataFrame, bins: list[Bin], seed: int) -> tuple[pl.DataFrame, int]:
    """Every non-empty bin cut to the smallest non-empty bin's count; (rows, target per bin)."""
    counts = {name: n for name, n in df.group_by("difficulty").len().iter_rows() if name is not None}
    if not counts:
        return df.clear(), 0
    target = min(counts.values())
    ranked = df.with_columns(pl.Series("_rank", [rank(seed, t) for t in df["turn_id"].to_list()], dtype=pl.Binary))
    kept = (
        ranked.filter(pl.col("difficulty").is_not_null())
        .sort("_rank")
        .group_by("difficulty", maintain_order=True)
        .head(target)
    )
    # Back to input order within each bin (bins in scheme order), so balancing only removes rows.
    order = {b.name: i for i, b in enumerate(bins)}
    kept = kept.with_columns(pl.col("difficulty").replace_strict(order, return_dtype=pl.Int32).alias("_bin"))
    within = ["_row"] if "_row" in kept.columns else ["_rank"]
    return kept.sort(["_bin", *within]).drop("_bin", "_rank"), target


# -- how sure, and measured how -------------------------------------------------------------------
def straddling(df: pl.DataFrame, bins: list[Bin]) -> pl.Series:
    """Per row of `df` (with `difficulty` and the interval columns): does its pass-rate interval
    reach past its bin's edges? False outside every bin."""
    out = pl.lit(False)
    for b in bins:
        reaches = (pl.col("pass_rate_low") < b.low) | (pl.col("pass_rate_high") > b.high)
        out = pl.when(pl.col("difficulty") == b.name).then(reaches.fill_null(True)).otherwise(out)
    return df.select(out.alias("straddles"))["straddles"]


def check_measurements(df: pl.DataFrame, allow_mixed: bool) -> None:
    """One line (exit 2) when a bin would hold pass rates measured in more than one way."""
    if allow_mixed or df.height == 0:
        return
    for (name,), part in df.group_by(["difficulty"], maintain_order=True):
        found = measurements(part)
        if len(found) > 1:
            ways = "; ".join(f"{m['rows']} by {describe(m)} [{m['measured_by']}]" for m in found[:3])
            raise UserError(
                f"bin {name!r} would mix pass rates measured {len(found)} ways ({ways}); "
                "bin each measurement on its own, calibrate them with one student, or pass --mix-measurements"
            )


# -- histograms -------------------------------------------------------------------------------------
def histogram_table(title: str, groups: dict[str, list[float]], buckets: int = 20) -> Table:
    rows = []
    for name, values in groups.items():
        vals = [v for v in values if v is not None]
        rows.append([name, len(vals), _3(sum(vals) / len(vals) if vals else None), sparkline(histogram(vals, buckets))])
    return grid(title, ["group", "n", "mean", "0" + "·" * (buckets - 2) + "1"], rows, left=(0, 3))


def _3(value: float | None) -> str | None:
    return None if value is None else f"{value:.3f}"


def show(df: pl.DataFrame, written: pl.DataFrame, bins: list[Bin], console: Console) -> None:
    by_env = {env: df.filter(pl.col("env") == env)["pass_rate"].to_list() for env in sorted(df["env"].unique())}
    console.print(histogram_table("pass rates per environment (all kept problems)", by_env))
    by_bin = {
        f"{b.name} {b.label()}": written.filter(pl.col("difficulty") == b.name)["pass_rate"].to_list() for b in bins
    }
    console.print(histogram_table("pass rates per bin (as written)", by_bin))
    chance = chance_by_bin(written, bins)
    if any(c["measured"] for c in chance.values()):
        title = "pass rates against chance per bin (as written)"
        headers = ["bin", "measured", "mean chance", f"chance >= {GUESSABLE_AT:g}", "mean pass rate", "above chance"]
        rows = []
        for name, c in chance.items():
            mean_pass, above = _3(c["mean_pass_rate"]), _3(c["mean_above_chance"])
            rows.append([name, c["measured"], _3(c["mean_chance_rate"]), c["guessable"], mean_pass, above])
        console.print(grid(title, headers, rows))


def chance_by_bin(frame: pl.DataFrame, bins: list[Bin]) -> dict[str, dict]:
    """Per bin: rows with a chance rate, their mean, how many are at a coin flip's rate or above, and
    the mean pass rate and pass rate above chance (synthgen.store.measurement.above_chance_expr)."""
    out = {}
    for b in bins:
        part = frame.filter(pl.col("difficulty") == b.name)
        measured = part.filter(pl.col("chance_rate").is_not_null()) if "chance_rate" in part.columns else part.clear()
        above = measured.select(above_chance_expr().alias("a"))["a"].drop_nulls()
        out[b.name] = {
            "measured": measured.height,
            "mean_chance_rate": rounded_mean(measured["chance_rate"]),
            "guessable": int((measured["chance_rate"] >= GUESSABLE_AT).sum()),
            "mean_pass_rate": rounded_mean(measured["pass_rate"]),
            "mean_above_chance": rounded_mean(above),
        }
    return out


def pyplot():
    """matplotlib.pyplot on the file-only Agg backend, or a one-line UserError."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'synthgen[plot]'") from None
    return plt


def plot(df: pl.DataFrame, bins: list[Bin], path: Path) -> None:
    """Histograms of pass rates per environment with the bins shaded; needs matplotlib."""
    plt = pyplot()
    envs = sorted(df["env"].unique().to_list())
    fig, axes = plt.subplots(len(envs) or 1, 1, figsize=(8, 2.2 * max(1, len(envs))), sharex=True, squeeze=False)
    for ax, env in zip(axes[:, 0], envs or ["(none)"]):
        values = [v for v in df.filter(pl.col("env") == env)["pass_rate"].to_list() if v is not None]
        for i, b in enumerate(bins):
            ax.axvspan(b.low, b.high, alpha=0.15, color=f"C{i + 1}", label=b.name)
        ax.hist(values, bins=33, range=(0, 1), color="C0")
        ax.set_ylabel(f"{env}\n(n={len(values)})")
    axes[0, 0].legend(loc="upper right", fontsize="small")
    axes[-1, 0].set_xlabel("student pass rate")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(path, dpi=120)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot write plot {path}: {exc}") from None
    finally:
        plt.close(fig)


# -- the stage --------------------------------------------------------------------------------------
def _rows_of(table: pa.Table, df: pl.DataFrame) -> pa.Table:
    """The rows of `table` listed by df's `_row` column, in that order, with `difficulty` added."""
    taken = table.take(pa.array(df["_row"].to_list(), pa.int64()))
    for name in INTERVAL_COLUMNS:  # filled in where the input had none (rows of older runs)
        at = taken.schema.get_field_index(name)
        taken = taken.set_column(at, name, pa.array(df[name].to_list(), pa.float64()))
    taken = taken.append_column("difficulty", pa.array(df["difficulty"].to_list(), pa.string()))
    return taken.cast(BINNED)


class BinStage(WholeStage):
    """Reads the filter's kept rows; builds bin/ (a folder per non-empty bin, summary.json) and bin_outside/."""

    settings: BinSettings

    def __init__(self, settings: BinSettings, console: Console | None = None):
        super().__init__(settings, StageDir(settings.run_dir, STAGE), console)
        self.df = self.written = pl.DataFrame()  # every input row with its bin; the rows written
        self.outside: pa.Table | None = None  # the rows outside every bin, for bin_outside/
        self.outside_meta: dict = {}

    def prepare(self) -> None:
        s = self.settings
        self.found = read_input(
            StageDir.input_of(s.run_dir, "filter", s.input_dir), s.allow_partial, self.console, STAGE
        )

    def build(self, build: StageDir) -> dict:
        settings, found, bins = self.settings, self.found, self.settings.resolved()
        table = found.read_table()
        columns = ["turn_id", "env", "pass_rate", "scored", "pass_rate_low", "pass_rate_high"]
        columns += ["measured_by", "student_model", "student_effort", "student_temperature", "attempts"]
        columns += ["sandbox_isolation", "synthgen_version", "student_endpoint", "chance_rate"]
        df = assign(with_intervals(pl.from_arrow(table.select(columns))).with_row_index("_row"), bins)
        df = df.with_columns(straddling(df, bins))
        inside = df.filter(pl.col("difficulty").is_not_null())
        straddle = dict(inside.filter(pl.col("straddles")).group_by("difficulty").len().iter_rows())
        if settings.confident:
            inside = inside.filter(~pl.col("straddles"))
        check_measurements(inside, settings.mix_measurements)
        written, target = balance(inside, bins, settings.seed) if settings.balance else (inside, None)
        bin_labels = {b.name: b.label() for b in bins}
        meta = file_metadata(
            STAGE, self.digest, {"settings": settings.hashed_view(), "bins": bin_labels, **found.metadata()}
        )
        counts_in = dict(inside.group_by("difficulty").len().iter_rows())
        self.df, self.written = df, written
        self.summary = {
            "stage": STAGE,
            "settings_hash": self.digest,
            "settings": settings.hashed_view(),
            "input": str(found.stage.path),
            **found.metadata(),
            "input_rows": df.height,
            "bins": {
                b.name: {
                    "range": b.label(),
                    "matched": counts_in.get(b.name, 0) + (straddle.get(b.name, 0) if settings.confident else 0),
                    "written": written.filter(pl.col("difficulty") == b.name).height,
                }
                for b in bins
            },
            "balanced_to": target,
            "confident": settings.confident,
            # problems whose 95% Wilson interval reaches past their bin's edges (--confident leaves them out)
            "straddling": {b.name: straddle.get(b.name, 0) for b in bins},
            "straddling_total": sum(straddle.values()),
            "measurements": measurements(inside),
            "chance": chance_by_bin(written, bins),
            "outside": where_outside(df, bins),
            "outside_written": settings.write_outside,
            "by_env": {},
        }
        for env, difficulty, n in df.group_by("env", "difficulty").len().sort("env", "difficulty").iter_rows():
            self.summary["by_env"].setdefault(env, {})[difficulty or "outside"] = n
        for b in bins:
            rows = written.filter(pl.col("difficulty") == b.name)
            if rows.height:
                write_parquet_atomic(build.group_part_path(b.name), _rows_of(table, rows), meta)
        write_text_atomic(build.path / SUMMARY, json.dumps(self.summary, indent=1, sort_keys=True) + "\n")
        rows = df.filter(pl.col("difficulty").is_null())
        self.outside = _rows_of(table, rows) if settings.write_outside and rows.height else None
        self.outside_meta = meta
        return {"input": found.fingerprint(), **found.metadata()}

    def swapped(self) -> None:
        # bin_outside/ follows bin/: a kill between the two leaves the new bin/ beside the old
        # bin_outside/ (the next run replaces it), never new outside rows beside an old bin/.
        outside_stage = StageDir(self.settings.run_dir, OUTSIDE)
        if self.outside is None:
            outside_stage.remove()
            return
        with outside_stage.rebuild() as outside:
            write_parquet_atomic(outside.group_part_path(), self.outside, self.outside_meta)


def run(
    settings: BinSettings, *, force: bool = False, console: Console | None = None, out_console: Console | None = None
) -> dict:
    """`synthgen bin`; the histogram tables go to `out_console` (default: stdout)."""
    if settings.plot:
        pyplot()  # fail before any work when matplotlib is missing
    stage = BinStage(settings, console)
    stage.run(force)
    console, summary, bins, out = stage.console, stage.summary, settings.resolved(), stage.output.path
    df, written, outside, target = stage.df, stage.written, summary["outside"], summary["balanced_to"]
    show(df, written, bins, out_console or Console(soft_wrap=True))
    if settings.plot:
        plot(df, bins, Path(settings.plot))
        console.print(f"bin: plot written to {settings.plot}")
    parts = ", ".join(f"{b.name} {summary['bins'][b.name]['written']}" for b in bins)
    console.print(
        f"bin: wrote {written.height} of {df.height} problems to {out} ({settings.scheme}: {parts})"
        + (f", balanced to {target} per bin" if settings.balance else "")
    )
    if outside["total"]:
        console.print(
            f"bin: {outside['total']} problems fall outside every bin ({outside['below']} below "
            f"{bins[0].low:g}, {outside['between']} in gaps, {outside['above']} above "
            f"{max(b.high for b in bins):g}, {outside['no_pass_rate']} without a pass rate)"
            + (f"; written to {out.parent / OUTSIDE}" if settings.write_outside else "; --write-outside keeps them")
        )
    if summary["straddling_total"]:
        each = ", ".join(f"{name} {n}" for name, n in summary["straddling"].items() if n)
        console.print(
            f"bin: {summary['straddling_total']} problems straddle a bin boundary (95% interval: {each})"
            + ("; left out (--confident)" if settings.confident else "; --confident leaves them out")
        )
    empty = [b.name for b in bins if not summary["bins"][b.name]["written"]]
    if empty:
        console.print(f"bin: empty, so no folder: {', '.join(empty)}")
    return summary
