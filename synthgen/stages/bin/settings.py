"""Settings of `synthgen bin`: difficulty bins by pass rate and how to apply them.

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
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from synthgen.settings.base import cli
from synthgen.settings.shared import InputSettings, RunSettings

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


class BinSettings(InputSettings, RunSettings):
    section = "bin"
    unhashed: ClassVar[frozenset[str]] = frozenset({"run_dir", "input_dir", "plot", "allow_partial"})

    input_dir: str | None = Field(None, description="folder of kept problems (default RUN_DIR/filter)")
    scheme: Literal["chains", "broad", "custom"] = Field(
        "broad", description="bands: chains (the paper's Appendix B), broad (its Table 3) or custom (with --bins)"
    )
    bins: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        json_schema_extra=cli(as_text=True, metavar="NAME=LOW:HIGH,..."),
        description="custom bins (with --scheme custom), e.g. 'easy=0.7:1,hard=0:0.3'",
    )
    balance: bool = Field(False, description="downsample every non-empty bin to the smallest one's count")
    seed: int = Field(0, description="which rows --balance keeps")
    write_outside: bool = Field(False, description="also write problems outside every bin to RUN_DIR/bin_outside/")
    plot: str | None = Field(None, description="draw the pass-rate histograms to this PNG (needs the plot extra)")
    confident: bool = Field(
        False,
        description="keep only problems whose 95% Wilson interval of the pass rate lies inside their bin "
        "(the summary counts those that straddle a boundary either way)",
    )
    mix_measurements: bool = Field(
        False,
        description="allow one bin to hold pass rates measured differently (another student, effort, "
        "temperature, M, sandbox or synthgen version: the measured_by column)",
    )

    @field_validator("bins", mode="before")
    @classmethod
    def _parse(cls, value):
        """Accept `easy=0.7:1,hard=0:0.3` (the --bins flag) as well as a mapping."""
        if isinstance(value, str):
            out = {}
            for item in filter(None, (v.strip() for v in value.split(","))):
                name, _, rng = item.partition("=")
                low, _, high = rng.partition(":")
                try:
                    out[name.strip()] = (float(low), float(high))
                except ValueError:
                    raise ValueError(f"cannot read bin {item!r}; write NAME=LOW:HIGH") from None
            return out
        return value

    @model_validator(mode="after")
    def _check(self):
        if self.scheme == "custom" and not self.bins:
            raise ValueError("scheme 'custom' needs bins (NAME=LOW:HIGH, ...)")
        if self.scheme != "custom" and self.bins:
            raise ValueError(f"bins are only read with scheme 'custom', not {self.scheme!r}")
        make_bins(self.ranges())
        return self

    def ranges(self) -> dict[str, tuple[float, float]]:
        return dict(self.bins) if self.scheme == "custom" else dict(SCHEMES[self.scheme])

    def resolved(self) -> list[Bin]:
        return make_bins(self.ranges())
