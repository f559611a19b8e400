"""Settings of `synthgen chain`: hard -> medium -> easy stepping-stone chains (the paper's Section 4.2).

The pass-rate bands a step must land in are not settings of their own: they are the bin stage's
`chains` scheme (synthgen.config.bin.SCHEMES), so chain and bin agree on what medium and easy mean.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from synthgen.config.generate import TURN_LOOP_UNHASHED, TurnLoopSettings
from synthgen.config.run import InputSettings, ShardedSettings


class ChainSettings(InputSettings, TurnLoopSettings, ShardedSettings):
    section = "chain"
    unhashed: ClassVar[frozenset[str]] = TURN_LOOP_UNHASHED | {"input_dir", "allow_partial"}

    input_dir: str | None = Field(None, description="hard problems to start from (default: RUN_DIR/bin/hard)")
    tries: int = Field(3, ge=1, le=100, description="teacher tries per step before the chain is given up")
    max_chains: int | None = Field(None, ge=1, description="hard problems to start from, at most")
    disjoint: bool = Field(
        False,
        description="also write the paper's disjoint baseline: per level, problems from lineages no chain uses, "
        "with pass rates matched to the chained ones (RUN_DIR/chain/disjoint/)",
    )
    histogram_bins: int = Field(10, ge=2, le=1000, description="bins over [0, 1] when comparing pass-rate histograms")
