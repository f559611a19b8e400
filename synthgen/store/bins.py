"""Difficulty bins by pass rate: the paper's bands and the boundary rule, below every stage that bins.

Boundary rule: a bin "low-high" holds pass rates p with low <= p <= high, except where another
bin starts exactly at its high edge; then it stops short of it (low <= p < high) and the
shared edge belongs to the bin above. So adjacent bins never both claim a problem (broad:
0.26 is medium, 0.61 easy_medium, 0.85 easy, 0.97 still easy) and bins with gaps between them
hold both written ends (chains: 0.05 and 0.16 are hard, 0.41 and 0.59 medium, 0.81 and 0.91
easy). Pass rates are exact fractions such as 13/50, and `13/50 == 0.26` holds in floating
point, so the edges behave as written.

Bin names are used as folder names, `difficulty` values and `datasets` split names, so they
must match [A-Za-z][A-Za-z0-9_]*; the paper's "easy-medium" is therefore `easy_medium`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The paper's bands (Appendix B for chains, Table 3 for broad), pass rates over 32 attempts,
# listed from hard to easy.
SCHEMES: dict[str, dict[str, tuple[float, float]]] = {
    "chains": {"hard": (0.05, 0.16), "medium": (0.41, 0.59), "easy": (0.81, 0.91)},
    "broad": {"hard": (0.10, 0.26), "medium": (0.26, 0.61), "easy_medium": (0.61, 0.85), "easy": (0.85, 0.97)},
}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Bin:
    name: str
    low: float
    high: float
    closed_high: bool  # False only when another bin starts at `high`

    def holds(self, p: float | None) -> bool:
        if p is None:
            return False
        return self.low <= p and (p <= self.high if self.closed_high else p < self.high)

    def label(self) -> str:
        return f"[{self.low:g}, {self.high:g}{']' if self.closed_high else ')'}"


def make_bins(ranges: dict[str, tuple[float, float]]) -> list[Bin]:
    """Validated bins sorted by low edge; ValueError on bad names, empty ranges or overlaps."""
    if not ranges:
        raise ValueError("at least one bin is needed")
    items = []
    for name, pair in ranges.items():
        if not _NAME.match(name):
            raise ValueError(f"bin name {name!r} must match [A-Za-z][A-Za-z0-9_]* (it names a folder)")
        if len(pair) != 2:
            raise ValueError(f"bin {name!r} needs [low, high]")
        low, high = float(pair[0]), float(pair[1])
        if not 0.0 <= low < high <= 1.0:
            raise ValueError(f"bin {name!r} needs 0 <= low < high <= 1, got [{low}, {high}]")
        items.append((low, high, name))
    items.sort()
    for (_, high_a, a), (low_b, _, b) in zip(items, items[1:]):
        if low_b < high_a:
            raise ValueError(f"bins {a!r} and {b!r} overlap")
    starts = {low for low, _, _ in items}
    return [Bin(name, low, high, high not in starts) for low, high, name in items]


def scheme_bins(scheme: str, custom: dict[str, tuple[float, float]]) -> list[Bin]:
    """The bins of a scheme (`custom`: the given ranges), as `synthgen bin --scheme` applies them."""
    if scheme == "custom" and not custom:
        raise ValueError("scheme 'custom' needs bins (NAME=LOW:HIGH, ...)")
    if scheme != "custom" and custom:
        raise ValueError(f"bins are only read with scheme 'custom', not {scheme!r}")
    return make_bins(dict(custom) if scheme == "custom" else SCHEMES[scheme])
