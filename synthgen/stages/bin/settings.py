"""Settings of `synthgen bin`: which difficulty bins (synthgen.store.bins) and how to apply them."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from synthgen.settings.base import cli
from synthgen.settings.shared import InputSettings, RunSettings
from synthgen.store.bins import Bin, scheme_bins


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
        self.resolved()
        return self

    def resolved(self) -> list[Bin]:
        return scheme_bins(self.scheme, self.bins)
