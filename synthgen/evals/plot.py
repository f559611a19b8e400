"""pass@k over training steps, one panel per benchmark, one line per split and k (the paper's figures).

matplotlib (the `plot` extra) is imported only here, with the non-interactive Agg backend.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from synthgen.errors import UserError


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
        ax.set_title(benchmark)
        ax.set_xlabel("training step")
        ax.set_ylabel("pass@k")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return path
