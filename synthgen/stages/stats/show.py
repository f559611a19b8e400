"""`synthgen stats` on the terminal: the dict that synthgen.stages.stats.run.collect returns, as rich tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from synthgen.turns.report import TOKEN_RULE

SPARK = "·▁▂▃▄▅▆▇█"  # first: an empty bucket


def sparkline(counts: list[int]) -> str:
    top = max(counts) if counts else 0
    if not top:
        return SPARK[0] * len(counts)
    return "".join(SPARK[0] if c == 0 else SPARK[max(1, round(c / top * (len(SPARK) - 1)))] for c in counts)


def grid(
    title: str, headers: list[str], rows: list[list[Any]], left: tuple[int, ...] = (0,), wrap: tuple[int, ...] = ()
) -> Table:
    """A table that fits the terminal: names never wrap, `wrap` columns (long lists) fold onto more lines."""
    out = Table(title=title, title_justify="left", show_edge=False)
    for i, h in enumerate(headers):
        out.add_column(h, justify="left" if i in left else "right", no_wrap=i in left and i not in wrap)
    for row in rows:
        out.add_row(*["-" if v is None else str(v) for v in row])
    return out


def _pairs(counts: dict[str, Any], skip: tuple = (None,)) -> str:
    """`key value, key value`, leaving out the values in `skip`."""
    return ", ".join(f"{k} {v}" for k, v in counts.items() if v not in skip)


def show(data: dict[str, Any], console: Console) -> None:
    stages = data["stages"]
    console.print(f"[bold]run[/bold] {data['run_dir']}")
    rows = [[name, "absent" if info is None else _pairs(info)] for name, info in stages.items()]
    console.print(grid("stages", ["stage", "rows"], rows, left=(0, 1), wrap=(1,)))
    if data.get("sets"):
        title = "sets to train on (train --data RUN_DIR/SET)"
        rows = [
            [t["name"] + ("" if t["finished"] else " (unfinished)"), t["problems"], _pairs(t["splits"])]
            for t in data["sets"]
        ]
        console.print(grid(title, ["set", "problems", "splits"], rows, left=(0, 2), wrap=(2,)))
    if data.get("turns"):
        keys = ("mode", "turn", "generated", "valid", "kept", "mean_pass_rate")
        rows = [[t[k] for k in keys] for t in data["turns"]]
        console.print(grid("yield per turn", [k.replace("_", " ") for k in keys], rows))
    infra = [
        [f["stage"], f["shard"], kind, count, escape(f["causes"].get(kind, ""))]
        for f in data.get("infra", [])
        for kind, count in f["turns"].items()
    ]
    if infra:
        title = "turns left unfinished by infrastructure (re-run the stage to retry them)"
        console.print(grid(title, ["stage", "shard", "kind", "turns", "cause"], infra, left=(0, 1, 2, 4), wrap=(4,)))
    reasons = [["generation", k, v] for k, v in data["reasons"]["generation"].items()]
    reasons += [["filter", k, v] for k, v in data["reasons"]["filter"].items()]
    if reasons:
        console.print(grid("reject reasons", ["stage", "reason", "rows"], reasons, left=(0, 1)))
    unreadable = data.get("student_format_failures")
    if unreadable and unreadable["reasons"]:
        title = (
            f"why student answers could not be read ({unreadable['format_failures']} format failures; "
            f"reasons from {unreadable['source']})"
        )
        rows = [[escape(detail), n] for detail, n in unreadable["reasons"]]
        console.print(grid(title, ["reason", "answers"], rows, left=(0,), wrap=(0,)))
    axis = "0" + "·" * (len(data["histogram_edges"]) - 3) + "1"
    for kind, groups in data.get("pass_rate_histograms", {}).items():
        rows = [[env, sum(c), sparkline(c)] for env, c in groups.items()]
        console.print(grid(f"pass rates ({kind.replace('_', ' ')})", ["env", "n", axis], rows, left=(0, 2)))
    measurement = data.get("measurement") or {}
    measured = measurement.get("generated")
    if measured and measured["rows"]:
        for m in measured["measurements"]:
            console.print(f"pass rates measured against {m['described']}: {m['rows']} rows [{m['measured_by']}]")
        console.print(
            f"95% Wilson interval width: mean {measured['interval_width_mean']}, max {measured['interval_width_max']}"
        )
    mutation = measurement.get("mutation")
    if mutation:
        q = mutation["quantiles"]
        console.print(
            f"mutation score of {mutation['rows']} valid problems: mean {mutation['mean']}, "
            f"median {q['p50']}, p10 {q['p10']}, p90 {q['p90']}"
        )
    for kind, found in (measurement.get("chance") or {}).items():
        if not found or not found["measured"]:
            continue
        each = ", ".join(f"{env} {c['guessable']}/{c['n']}" for env, c in found["by_env"].items() if c["n"])
        above = found["mean_pass_rate_above_chance"]
        console.print(
            f"chance rate of {found['measured']} {kind} problems ({found['rows'] - found['measured']} unmeasured): "
            f"mean {found['mean']}, at or above {found['guessable_at']:g}: {found['guessable']} ({each}), "
            f"at 1: {found['always']}; mean pass rate above chance {'-' if above is None else above}"
        )
    straddling = measurement.get("straddling")
    if straddling and any(straddling.values()):
        console.print(f"binned problems whose interval straddles a bin boundary: {_pairs(straddling, skip=(0, None))}")
    modes = data.get("modes")
    if modes:
        keys = ("seeds", "generated", "valid", "kept", "kept_per_seed")
        rows = [[m, *(modes[m][k] for k in keys)] for m in ("multi", "single")]
        console.print(grid("multi-turn vs single-turn", ["mode", *keys[:-1], "kept/seed"], rows))
        console.print(f"multi/single kept per seed: {modes['multi_over_single']}")
    tokens = data.get("tokens")
    if tokens:
        title = f"tokens of the generated rows (kept problems: {tokens['kept_problems']})"
        rows = [[r, *(tokens[r][k] for k in ("in", "out", "total", "per_kept"))] for r in ("teacher", "student")]
        rows.append(["all", None, None, tokens["total"]["total"], tokens["total"]["per_kept"]])
        console.print(grid(title, ["role", "in", "out", "total", "per kept"], rows))
        console.print(f"tokens: {TOKEN_RULE}")
        chain = tokens.get("chain")
        if data.get("cost"):
            from synthgen.stages.plan.run import cost_table

            console.print(cost_table("cost of the generate stage (compare with synthgen plan)", data["cost"]))
        if chain:
            console.print(
                "chain stage tokens (on top): "
                + "; ".join(f"{r} in {chain[r]['in']} out {chain[r]['out']}" for r in ("teacher", "student"))
            )
