"""Weights over strata (source x bin) for the curriculum sampler: sources by weight, bins by the curriculum.

Without source weights every problem pools and a stratum is a difficulty bin. With weights
(`--data real=DIR:0.55 --data synth=DIR:0.45`) a stratum is `source/bin`, weighted

    w(source) * (the curriculum's weights over that source's bins)        for a curriculum source
    w(source) * (bin size / source size)                                  for any other source

so the curriculum acts inside the sources it is scoped to (`--curriculum-sources`, default all)
while the mix between sources stays what was asked for. Pure Python, no torch.

    mix = SourceMix(sources, bins, {"real": 0.55, "synth": 0.45}, scope={"synth"})
    mix.weights(schedule.weights_at(step))     # {"real/real": 0.55, "synth/easy": ..., ...}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from synthgen.train.curriculum import ALL_PROBLEMS, resolve_weights


class SourceMix:
    def __init__(
        self,
        sources: Sequence[str],
        bins: Sequence[str],
        source_weights: Mapping[str, float] | None = None,
        scope: set[str] | None = None,
    ):
        self.source_weights = dict(source_weights) if source_weights else None
        self.scope = scope
        self.pooled = self.source_weights is None
        self.strata = [b if self.pooled else f"{s}/{b}" for s, b in zip(sources, bins)]
        self._bin = dict(zip(self.strata, bins))
        self._source = dict(zip(self.strata, sources))
        self.counts: dict[str, dict[str, int]] = {}  # source -> bin -> problems ("" for pooled)
        for s, b in zip(sources, bins):
            per = self.counts.setdefault("" if self.pooled else s, {})
            per[b] = per.get(b, 0) + 1

    def bin_of(self, stratum: str) -> str:
        return self._bin.get(stratum, stratum)

    def source_of(self, stratum: str) -> str:
        return self._source.get(stratum, "")

    def in_scope(self, source: str) -> bool:
        return self.scope is None or source in self.scope

    def scoped_bins(self) -> dict[str, int]:
        """Problems per bin over the sources the curriculum applies to."""
        out: dict[str, int] = {}
        for source, per in self.counts.items():
            if self.pooled or self.in_scope(source):
                for b, n in per.items():
                    out[b] = out.get(b, 0) + n
        return dict(sorted(out.items()))

    def weights(self, bin_weights: Mapping[str, float]) -> dict[str, float]:
        """Stratum weights (summing to 1) for the curriculum's bin weights at one step."""
        if self.pooled:
            return resolve_weights(bin_weights, self.counts[""])
        out: dict[str, float] = {}
        for source, w in self.source_weights.items():  # type: ignore[union-attr]
            per = self.counts.get(source)
            if not per:
                continue
            inner = resolve_weights(bin_weights if self.in_scope(source) else {ALL_PROBLEMS: 1.0}, per)
            for b, v in inner.items():
                out[f"{source}/{b}"] = w * v
        total = sum(out.values())
        return {k: v / total for k, v in out.items()}

    def by_bin(self, stratum_weights: Mapping[str, float]) -> dict[str, float]:
        return _summed(stratum_weights, self.bin_of)

    def by_source(self, stratum_weights: Mapping[str, float]) -> dict[str, float]:
        return _summed(stratum_weights, self.source_of)

    @classmethod
    def of_dataset(cls, dataset, source_weights: Mapping[str, float] | None, scope: set[str] | None) -> SourceMix:
        """The mix of a training set's rows (its `difficulty` and, when mixed, `source` columns)."""
        bins = [str(b) for b in dataset["difficulty"]]
        has_source = "source" in dataset.column_names
        return cls([str(s) for s in dataset["source"]] if has_source else [""] * len(bins), bins, source_weights, scope)


def _summed(stratum_weights: Mapping[str, float], key) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, w in stratum_weights.items():
        out[key(k)] = out.get(key(k), 0.0) + w
    return out
