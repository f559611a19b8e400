"""The eval summary: pass@k per model (or checkpoint), benchmark, split and k, from the finished units.

    report(settings, out)     # prints the table; writes summary.json, summary.md and (several steps) the plot

pass@k is the unbiased estimator of Chen et al. (2021), which `train --eval-every` uses too, over
scored samples only (one lost to infrastructure is left out, never wrong), averaged over a split's
problems with at least k of them; `samples` is their mean per problem; `timeouts` counts the
split's samples wrong because a test ran past its time limit (a large share means the limits
shape the score). Unreadable problems are listed in summary.md and skipped.json. With several
steps the plot (matplotlib, the `plot` extra) draws pass@k over training steps, one panel per
benchmark, one line per split and k (the paper's figures).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq

from synthgen.errors import UserError
from synthgen.store.files import write_text_atomic
from synthgen.store.layout import StageDir

COLUMNS = ("tag", "step", "benchmark", "split", "problems", "samples", "k", "pass_at_k", "timeouts")
HEAD = ["model", "step", "benchmark", "split", "problems", "samples", "k", "pass@k", "timeouts"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one problem: 1 - C(n-c, k) / C(n, k) (n samples, c correct, n >= k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


def split_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> tuple[float | None, int]:
    """(mean pass@k over the problems with at least k scored samples, how many such problems)."""
    values = [pass_at_k(n, c, k) for n, c in counts if n >= k]
    return (sum(values) / len(values) if values else None), len(values)


def table(settings, out: Path) -> tuple[list[dict], list[dict]]:
    """The pass@k rows of every unit whose shards are all marked done, and the problems these units
    left out as unreadable (benchmark, problem_id, reason; once each)."""
    rows, skipped = [], {}
    for folder in sorted(p for p in out.glob("*/*") if p.is_dir() and not p.parent.name.startswith(".")):
        unit = StageDir.at(folder, "eval")
        shards = unit.done_shards()
        counts = {StageDir.shard_index(s)[1] for s in shards if StageDir.shard_index(s)}
        if not shards or len(counts) != 1 or len(shards) != counts.pop():
            continue  # a Slurm array still running: its summary comes with the last shard
        info = unit.done_info(shards[0]) or {}
        benchmark = info.get("benchmark") or folder.name
        for ident, why in info.get("skipped") or []:
            skipped.setdefault((benchmark, ident), {"benchmark": benchmark, "problem_id": ident, "reason": why})
        per_split: dict[str, dict[str, list[int]]] = defaultdict(dict)
        timeouts: dict[str, int] = defaultdict(int)
        for part in (p for s in shards for p in unit.shard_parts(s)):
            names = set(pq.read_schema(part).names)
            wanted = ["problem_id", "splits", "correct"] + (["timed_out"] if "timed_out" in names else [])
            for row in pq.read_table(part, columns=wanted).to_pylist():
                for split in row["splits"]:
                    n_c = per_split[split].setdefault(row["problem_id"], [0, 0])
                    n_c[0] += 1
                    n_c[1] += bool(row["correct"])
                    timeouts[split] += bool(row.get("timed_out"))
        ks = settings.bench(benchmark).k if benchmark in type(settings).model_fields else [1]
        for split in sorted(per_split):
            counts = [tuple(v) for v in per_split[split].values()]
            mean_n = sum(n for n, _ in counts) / len(counts)
            for k in ks:
                value, problems = split_pass_at_k(counts, k)
                rows.append(
                    {
                        "tag": info.get("tag") or folder.parent.name,
                        "step": info.get("step"),
                        "benchmark": benchmark,
                        "split": split,
                        "problems": problems,
                        "samples": round(mean_n, 2),
                        "k": k,
                        "pass_at_k": None if value is None else round(value, 6),
                        "timeouts": timeouts[split],
                    }
                )
    rows.sort(key=lambda r: (r["step"] is None, r["step"] or 0, r["tag"], r["benchmark"], r["split"], r["k"]))
    return rows, list(skipped.values())


def _cells(r: dict) -> list[str]:
    value = "n/a" if r["pass_at_k"] is None else f"{r['pass_at_k']:.4f}"
    shown = r | {"step": "" if r["step"] is None else r["step"], "samples": f"{r['samples']:g}", "pass_at_k": value}
    return [str(shown.get(name, 0)) for name in COLUMNS]


def markdown(rows: list[dict], skipped: list[dict] = ()) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|---" * len(HEAD) + "|"]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    if skipped:
        lines += ["", "Skipped (unreadable) problems:", ""]
        lines += [f"- {s['benchmark']} {s['problem_id']}: {s['reason']}" for s in skipped]
    return "\n".join(lines) + "\n"


def terminal(rows: list[dict]) -> str:
    body = [_cells(r) for r in rows]
    widths = [max(len(x) for x in col) for col in zip(HEAD, *body)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [HEAD, *body])


def plot_over_steps(rows: list[dict], path: Path) -> Path:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("the pass@k plot needs matplotlib: pip install 'synthgen[plot]' (or pass --no-plot)") from None
    lines: dict[str, dict[tuple[str, int], list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["step"] is not None and r["pass_at_k"] is not None:
            lines[r["benchmark"]][(r["split"], r["k"])].append((r["step"], r["pass_at_k"]))
    benchmarks = sorted(lines)
    fig, axes = plt.subplots(1, len(benchmarks), figsize=(5 * len(benchmarks), 4), squeeze=False)
    for ax, benchmark in zip(axes[0], benchmarks):
        for (split, k), points in sorted(lines[benchmark].items()):
            points.sort()
            ax.plot([s for s, _ in points], [v for _, v in points], marker="o", label=f"{split} pass@{k}")
        ax.set(title=benchmark, xlabel="training step", ylabel="pass@k", ylim=(0, 1))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return path


def report(settings, out: Path) -> list[dict]:
    rows, skipped = table(settings, out)
    if not rows:
        print("eval: no finished results yet")
        return rows
    write_text_atomic(out / "summary.json", json.dumps(rows, indent=1) + "\n")
    write_text_atomic(out / "skipped.json", json.dumps(skipped, indent=1) + "\n")
    write_text_atomic(out / "summary.md", markdown(rows, skipped))
    print(terminal(rows))
    for s in skipped:
        print(f"eval: skipped {s['benchmark']} problem {s['problem_id']}: {s['reason']}")
    steps = {r["step"] for r in rows if r["step"] is not None}
    if settings.plot and len(steps) >= 2:
        print(f"eval: plot written to {plot_over_steps(rows, out / 'pass_at_k.png')}")
    print(f"eval: summary in {out / 'summary.md'} and {out / 'summary.json'}")
    return rows
