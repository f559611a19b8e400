"""The unbiased pass@k estimator (Chen et al., 2021), used by `train --eval-every` and `synthgen eval`.

    pass_at_k(n=20, c=3, k=10)              # one problem: 1 - C(n-c, k) / C(n, k)
    split_pass_at_k([(20, 3), (20, 0)], 1)  # (mean over problems with >= k scored samples, their count)

n counts scored samples only: a sample lost to an infrastructure failure is left out, never
counted wrong. Standard library only, so evaluation does not need the training extra.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one problem: 1 - C(n-c, k) / C(n, k) (n samples, c correct, n >= k)."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def split_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> tuple[float | None, int]:
    """(mean pass@k over the problems with at least k scored samples, how many such problems)."""
    values = [pass_at_k(n, c, k) for n, c in counts if n >= k]
    return (sum(values) / len(values) if values else None), len(values)
