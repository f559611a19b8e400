"""Curriculum schedules over difficulty bins (the paper's tables, custom files, `frontier`), mixed over sources.

A schedule says, for each RL (optimizer) step, with which weights a training prompt is drawn
from each difficulty bin. The paper's schedules (Sancaktar et al., Tables 2 and 4) are written
below over 40,000 steps and over three named slots, easy / medium / hard; a schedule maps each
slot to a data bin (the `difficulty` column the bin stage writes), e.g. reverse-medium maps its
"easy" slot to the `easy_medium` bin.

Scaling rule (stated by `synthgen train --show-schedule`): a run of N steps shorter than the
schedule's length L has every phase boundary b moved to round(b * N / L) (halves round up); a
phase left with no steps is dropped. A run as long or longer than L keeps the boundaries and the
last phase holds to the end. A custom file without a `length` is in absolute steps: never scaled.

`frontier` is not a table but an adaptive rule (synthgen.train.frontier). Pure Python, no torch:

    python -c "from synthgen.train.curriculum import get_schedule; print(get_schedule('soft').render())"
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthgen.errors import UserError

if TYPE_CHECKING:
    from synthgen.train.settings import FrontierSettings

PAPER_STEPS = 40_000
SLOTS = ("easy", "medium", "hard")
ALL_BINS = "*"  # a weight key meaning "every bin in the data, equally"
ALL_PROBLEMS = "**"  # a weight key meaning "every problem in the data, equally" (bins weighted by their size)
EVERYTHING = (ALL_BINS, ALL_PROBLEMS)
EVERYTHING_MEANS = {
    ALL_BINS: "every bin in the data, equally",
    ALL_PROBLEMS: "every problem in the data, equally (each bin in proportion to its size)",
}


@dataclass(frozen=True)
class Phase:
    start: int  # first step, inclusive
    end: int | None  # last step, exclusive; None: open-ended (the last phase of an unscaled file)
    weights: Mapping[str, float]  # slot or bin name -> weight (need not sum to 1)


@dataclass(frozen=True)
class Schedule:
    name: str
    phases: tuple[Phase, ...]
    length: int | None  # the step count the boundaries refer to (40,000 for the paper's); None: absolute
    bin_map: Mapping[str, str] = field(default_factory=dict)  # slot -> data bin; unmapped names are bins
    source: str = ""  # where the numbers come from, for --show-schedule
    scale_note: str = ""

    def data_bin(self, name: str) -> str:
        return name if name in EVERYTHING else self.bin_map.get(name, name)

    def phase_at(self, step: int) -> Phase:
        for phase in self.phases:
            if phase.end is None or step < phase.end:
                return phase
        return self.phases[-1]  # past the schedule's length the last phase holds

    def weights_at(self, step: int) -> dict[str, float]:
        """Normalised weights over data bins at `step` (ALL_BINS / ALL_PROBLEMS are left for the sampler)."""
        out: dict[str, float] = {}
        for name, w in self.phase_at(step).weights.items():
            if w > 0:
                out[self.data_bin(name)] = out.get(self.data_bin(name), 0.0) + float(w)
        total = sum(out.values())
        return {k: v / total for k, v in out.items()}

    def bins_used(self) -> list[str]:
        return list(dict.fromkeys(self.data_bin(n) for p in self.phases for n, w in p.weights.items() if w > 0))

    def scaled(self, steps: int | None) -> Schedule:
        """This schedule fitted to a run of `steps` steps (see the module's scaling rule)."""
        if self.length is None:
            return replace(
                self,
                scale_note="not scaled: the file gives absolute steps (no length); the last phase holds to the end",
            )
        if steps is None or steps >= self.length:
            note = (
                f"not scaled: the run ({steps if steps else 'unbounded'} steps) is not shorter than the schedule "
                f"({self.length} steps); the last phase holds to the end"
            )
            return replace(self, scale_note=note)
        if steps < 1:
            raise UserError(f"cannot fit a schedule to {steps} steps")
        scale = steps / self.length

        def move(b: int) -> int:
            # round(b * N / L) with halves up, in integers: floats put 20000 * 3 / 40000 below 1.5.
            return min(steps, (2 * b * steps + self.length) // (2 * self.length))

        kept, dropped = [], []
        for i, p in enumerate(self.phases):
            start = move(p.start)
            end = steps if i == len(self.phases) - 1 else move(p.end)
            if end > start:
                kept.append(Phase(start, end, p.weights))
            else:
                dropped.append(p)
        note = (
            f"scaled x{scale:.6g} ({self.length} -> {steps} steps): each boundary b -> "
            f"round(b * {steps} / {self.length})"
        )
        if dropped:
            note += "; dropped (no steps left): " + ", ".join(f"{p.start}-{p.end}" for p in dropped)
        return replace(self, phases=tuple(kept), length=steps, scale_note=note)

    def render(self) -> str:
        """A table: step range, weights per slot, data bin used for each slot."""
        names = list(dict.fromkeys(n for p in self.phases for n in p.weights))
        order = [s for s in SLOTS if s in names] + [n for n in names if n not in SLOTS]
        span = f"over {self.length} steps" if self.length else "in absolute steps"
        lines = [
            f"schedule {self.name}: {len(self.phases)} phase(s) {span} (from step, inclusive - to step, exclusive)"
        ]
        if self.source:
            lines.append(f"source: {self.source}")
        if self.scale_note:
            lines.append(self.scale_note)
        mapping = [f"{n} = bin '{self.data_bin(n)}'" for n in order if n not in EVERYTHING]
        mapping += [f"{n} = {EVERYTHING_MEANS[n]}" for n in EVERYTHING if n in order]
        lines.append(f"bins: {', '.join(mapping)}")
        lines.append(f"{'steps':>17}  " + "  ".join(f"{n:>6}" for n in order))
        for p in self.phases:
            total = sum(p.weights.values())
            cells = "  ".join(f"{p.weights.get(n, 0.0) / total:6.2f}" for n in order)
            end = "end" if p.end is None else p.end
            lines.append(f"{p.start:>7} - {end:<7}  {cells}")
        return "\n".join(lines)


def _paper_schedules() -> dict[str, Schedule]:
    """The paper's tables: name -> (step bounds, each phase's weights over SLOTS or bins, source, bin map)."""
    table4, table2, whole = (0, 10_000, 15_000, 25_000, 30_000, PAPER_STEPS), (0, 7500, 17500), (0, PAPER_STEPS)
    tables = {
        # The paper's uniform draws every problem equally, so the largest (easy) split dominates.
        "uniform": (
            whole,
            [{ALL_PROBLEMS: 1.0}],
            "the paper's uniform sampling (Figs. 10c and 12): every problem equally likely, "
            "so each bin in proportion to its size",
        ),
        "uniform-bins": (
            whole,
            [{ALL_BINS: 1.0}],
            "not in the paper: equal weight on every difficulty bin, whatever its size",
        ),
        "classic": (
            table4,
            [(1, 0, 0), (0.75, 0.25, 0), (0, 1, 0), (0, 0.75, 0.25), (0, 0, 1)],
            "the paper's Table 4 (classic)",
        ),
        "reverse-hard": (
            table4,
            [(0, 0, 1), (0, 0.25, 0.75), (0, 1, 0), (0.25, 0.75, 0), (1, 0, 0)],
            "the paper's Table 4 (reverse, hard start)",
        ),
        "reverse-medium": (
            (0, 17500, 20_000, PAPER_STEPS),
            [(0, 1, 0), (0.25, 0.75, 0), (1, 0, 0)],
            "the paper's Table 4 (reverse, medium start; its easy is the easy-medium split)",
            {"easy": "easy_medium"},
        ),
        "soft": (
            (*table2, 30_000, PAPER_STEPS),
            [(0.80, 0.15, 0.05), (0.15, 0.80, 0.05), (0.15, 0.40, 0.45), (0.05, 0.15, 0.80)],
            "the paper's Table 2 (soft, chains)",
        ),
        "hard": (
            (*table2, PAPER_STEPS),
            [(0.90, 0.05, 0.05), (0.05, 0.90, 0.05), (0.05, 0.05, 0.90)],
            "the paper's Table 2 (hard, chains)",
        ),
        "medium-only": (whole, [(0, 1, 0)], "the paper's Section 4.3: medium split only"),
    }
    out = {}
    for name, (bounds, weights, source, *bin_map) in tables.items():
        rows = [w if isinstance(w, dict) else dict(zip(SLOTS, w)) for w in weights]
        phases = tuple(Phase(a, b, w) for a, b, w in zip(bounds, bounds[1:], rows))
        out[name] = Schedule(name, phases, PAPER_STEPS, dict(*bin_map), source)
    return out


NAMES = ("uniform", "uniform-bins", "classic", "reverse-hard", "reverse-medium", "soft", "hard", "medium-only")
ADAPTIVE = ("frontier",)


def get_schedule(name_or_file: str) -> Schedule:
    """A paper schedule by name, or a custom one from a YAML file (see `load_schedule_file`)."""
    table = _paper_schedules()
    if name_or_file in table:
        return table[name_or_file]
    path = Path(name_or_file)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or path.exists():
        return load_schedule_file(path)
    raise UserError(f"unknown curriculum {name_or_file!r}; choose {', '.join(NAMES + ADAPTIVE)} or a YAML file")


def load_schedule_file(path: Path) -> Schedule:
    """A custom schedule: `steps` maps a start step to weights over named bins.

    name: my-curriculum          # optional
    length: 40000                # optional: scale like the paper's tables (omitted: absolute steps)
    bins: {easy: easy_medium}    # optional: names used below -> data bins
    steps:
      0:     {medium: 1}
      17500: {easy: 0.25, medium: 0.75}
      20000: {easy: 1}
    """
    if not path.is_file():
        raise UserError(f"curriculum file not found: {path}")
    return schedule_from_dict(read_yaml(path, "curriculum file"), default_name=path.stem, where=str(path))


def read_yaml(path: Path, what: str) -> Any:
    """A YAML file a user wrote (a schedule, a recipe, data sources); a broken one is a one-line UserError."""
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except Exception as exc:
        raise UserError(f"{what} {path} is not valid YAML: {str(exc).splitlines()[0]}") from None


def schedule_from_dict(data: Any, *, default_name: str = "custom", where: str = "schedule") -> Schedule:
    if not isinstance(data, dict) or not isinstance(data.get("steps"), dict) or not data["steps"]:
        raise UserError(f"{where}: needs a 'steps' mapping of start step -> {{bin: weight}}")
    unknown = set(data) - {"name", "length", "bins", "steps"}
    if unknown:
        raise UserError(f"{where}: unknown key {sorted(unknown)[0]!r} (expected name, length, bins, steps)")
    try:
        starts = sorted((int(k), v) for k, v in data["steps"].items())
    except (TypeError, ValueError):
        raise UserError(f"{where}: step keys must be integers") from None
    if starts[0][0] != 0:
        raise UserError(f"{where}: the first phase must start at step 0, not {starts[0][0]}")
    length = data.get("length")
    if length is not None and (not isinstance(length, int) or length <= starts[-1][0]):
        raise UserError(f"{where}: length must be an integer above the last start step {starts[-1][0]}, not {length!r}")
    phases = []
    for i, (start, weights) in enumerate(starts):
        if not isinstance(weights, dict) or not weights:
            raise UserError(f"{where}: step {start} needs a mapping of bin -> weight")
        clean = {}
        for name, w in weights.items():
            if not isinstance(w, (int, float)) or isinstance(w, bool) or w < 0 or not math.isfinite(w):
                raise UserError(f"{where}: weight of {name!r} at step {start} must be a number >= 0, not {w!r}")
            clean[str(name)] = float(w)
        if sum(clean.values()) <= 0:
            raise UserError(f"{where}: the weights at step {start} are all zero")
        end = starts[i + 1][0] if i + 1 < len(starts) else length
        phases.append(Phase(start, end, clean))
    bins = data.get("bins") or {}
    if not isinstance(bins, dict):
        raise UserError(f"{where}: 'bins' must map names to data bins")
    name = str(data.get("name") or default_name)
    return Schedule(name, tuple(phases), length, {str(k): str(v) for k, v in bins.items()}, f"custom file ({where})")


def resolve_weights(weights: Mapping[str, float], present: Mapping[str, int]) -> dict[str, float]:
    """Weights over the bins that have problems (`present`: bin -> problems): ALL_BINS spreads its weight
    equally over them, ALL_PROBLEMS by size; a bin the data lacks gives its weight to the phase's other
    bins, or, when none of them exists, to every present bin equally (the caller warns once)."""
    out: dict[str, float] = {}
    live = {b: n for b, n in present.items() if n > 0}
    for name, w in weights.items():
        if name == ALL_BINS:
            shares = {b: 1.0 / len(live) for b in live}
        elif name == ALL_PROBLEMS:
            shares = {b: n / sum(live.values()) for b, n in live.items()}
        else:
            shares = {name: 1.0} if name in live else {}
        for b, share in shares.items():
            out[b] = out.get(b, 0.0) + w * share
    total = sum(out.values())
    if total <= 0:
        return {b: 1.0 / len(live) for b in live}
    return {b: w / total for b, w in out.items()}


@dataclass
class CurriculumSpec:
    """A run's curriculum: a schedule fitted to the run, or the frontier rule, and how it mixes sources."""

    name: str
    schedule: Schedule | None = None  # already scaled to the run; None for frontier
    frontier: FrontierSettings | None = None
    frontier_bins: list[str] | None = None  # default: every bin of the curriculum's sources
    source_weights: dict[str, float] | None = None  # None: every problem pools (one source)
    curriculum_sources: set[str] | None = None  # None: the curriculum applies inside every source


def describe_schedule(name: str, max_steps: int | None) -> str:
    """`synthgen train --show-schedule NAME`: a schedule's weights by step, scaled to a run of `max_steps`."""
    if name in ADAPTIVE:
        from synthgen.train.frontier import FrontierPolicy

        doc = (FrontierPolicy.__doc__ or "").splitlines()
        return "schedule frontier: adaptive, no fixed table\n" + "\n".join(line.removeprefix("    ") for line in doc)
    schedule = get_schedule(name)
    text = schedule.render()
    if max_steps is not None and max_steps < schedule.length:
        text += f"\n\nfor a run of {max_steps} steps:\n{schedule.scaled(max_steps).render()}"
    else:
        text += (
            f"\n\nruns shorter than {schedule.length} steps scale every boundary b to "
            f"round(b * N / {schedule.length}); longer runs keep the last phase"
        )
    return text


class SourceMix:
    """Weights over strata (source x bin) for the curriculum sampler: sources by weight, bins by the curriculum.

    Without source weights every problem pools and a stratum is a difficulty bin. With weights
    (`--data real=DIR:0.55 --data synth=DIR:0.45`) a stratum is `source/bin`, weighted

        w(source) * (the curriculum's weights over that source's bins)        for a curriculum source
        w(source) * (bin size / source size)                                  for any other source

    so the curriculum acts inside the sources it is scoped to (`--curriculum-sources`, default all)
    while the mix between sources stays what was asked for.

        mix = SourceMix(sources, bins, {"real": 0.55, "synth": 0.45}, scope={"synth"})
        mix.weights(schedule.weights_at(step))     # {"real/real": 0.55, "synth/easy": ..., ...}
    """

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
        self.counts: dict[str, Counter[str]] = {}  # source -> bin -> problems ("" for pooled)
        for s, b in zip(sources, bins):
            self.counts.setdefault("" if self.pooled else s, Counter())[b] += 1

    def bin_of(self, stratum: str) -> str:
        return self._bin.get(stratum, stratum)

    def source_of(self, stratum: str) -> str:
        return self._source.get(stratum, "")

    def in_scope(self, source: str) -> bool:
        return self.scope is None or source in self.scope

    def scoped_bins(self) -> dict[str, int]:
        """Problems per bin over the sources the curriculum applies to."""
        out: Counter[str] = Counter()
        for source, per in self.counts.items():
            if self.pooled or self.in_scope(source):
                out.update(per)
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
