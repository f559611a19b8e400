"""Settings of `synthgen chain`: hard -> medium -> easy stepping-stone chains (the paper's Section 4.2).

The step bands are not settings: they are the bin stage's `chains` scheme (synthgen.store.bins),
so chain and bin agree on what medium and easy mean.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from synthgen.settings.base import cli
from synthgen.settings.shared import InputSettings, ShardedSettings
from synthgen.store.bins import SCHEMES
from synthgen.turns.settings import TURN_LOOP_UNHASHED, TurnLoopSettings


class ChainSettings(InputSettings, TurnLoopSettings, ShardedSettings):
    section = "chain"
    # `remeasure` only permits a measurement; the one it permits is hashed through the student's
    # settings and attempts, and rows written before a refusal resume when the flag is added.
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | {"input_dir", "allow_partial", "remeasure"}

    input_dir: str | None = Field(
        None, description="kept problems to pick hard starts from (default: RUN_DIR/filter, the filter's kept set)"
    )
    start_band: tuple[float, float] = Field(
        SCHEMES["chains"]["hard"],
        json_schema_extra=cli(as_text=True, metavar="LOW:HIGH"),
        description="pass rates a chain may start from, both ends included (default: the chains scheme's hard band)",
    )
    tries: int = Field(3, ge=1, le=100, description="teacher tries per step before the chain is given up")
    max_chains: int | None = Field(None, ge=1, description="hard problems to start from, at most")
    disjoint: bool = Field(
        False,
        description="also write the paper's disjoint baseline: per level, problems from lineages no chain uses, "
        "with pass rates matched to the chained ones (RUN_DIR/chain/disjoint/)",
    )
    histogram_bins: int = Field(10, ge=2, le=1000, description="bins over [0, 1] when comparing pass-rate histograms")
    remeasure: bool = Field(
        False,
        description="measure the steps with chain's own attempts and student settings where they differ from how "
        "the start problems were measured (recorded in chain's markers); without it chain takes the starts' M, "
        "student effort and temperature where not set, and stops where set otherwise",
    )

    @field_validator("start_band", mode="before")
    @classmethod
    def _parse_band(cls, value):
        """Accept `0.05:0.16` (the --start-band flag) as well as a pair; 0 <= low < high <= 1."""
        if isinstance(value, str):
            low, sep, high = value.partition(":")
            try:
                value = (float(low), float(high)) if sep else None
            except ValueError:
                value = None
            if value is None:
                raise ValueError("write the start band as LOW:HIGH, e.g. 0.05:0.16")
        low, high = (float(v) for v in value)
        if not 0.0 <= low < high <= 1.0:
            raise ValueError(f"the start band needs 0 <= low < high <= 1, got {low}:{high}")
        return (low, high)
