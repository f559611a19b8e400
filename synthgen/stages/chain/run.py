"""`synthgen chain`: hard -> medium -> easy chains built in reverse (the paper's Section 4.2).

Chains start from the kept problems (`RUN_DIR/filter/`) whose pass rate lies in `--start-band`
(default: the `chains` scheme's hard band, the paper's Appendix B), not from `bin/hard/`, whose band
depends on the scheme bin ran with. For each start the teacher is shown the problem, the student's
results and the band to land in, and asked for an easier variant of the same core task; the
student attempts it M times and it becomes the medium step only if it is new to its chain and its
pass rate lands in the medium band; then the same from medium to easy, `tries` teacher tries per
step. The bands are the `chains` scheme's (synthgen.store.bins.SCHEMES), as bin's.

Under `RUN_DIR/chain/`: `tries/`, every tried variant (the audit trail, written as turns finish);
`problems/`, the three levels of every accepted chain, each problem_id once (of two chains sharing
a problem, the one whose start sorts first keeps it); `links/`, (chain id, level, position, problem
id, pass rate) per level. Steps are measured as their starts were (synthgen.stages.chain.measure).
The turn loop (synthgen.turns.loop) runs the turns: a chain whose try failed on infrastructure
stops there and is redone by the next run; `problems/` and `links/` are written once every chain
is finished.
"""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from synthgen.envs import get_env
from synthgen.envs.problem import Problem
from synthgen.envs.summary import Summary
from synthgen.stages.chain.measure import settle
from synthgen.stages.chain.settings import ChainSettings
from synthgen.store.bins import SCHEMES, Bin, make_bins
from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.readiness import read_input
from synthgen.store.records import CHAIN_LINKS, PROBLEMS, table_from_rows
from synthgen.turns.loop import TurnLoop, TurnStage, UnitsLeft, read_rows
from synthgen.turns.turn import Lineage, Mode, Strategy, TurnRequest

STAGE = "chain"
STEPS = ("medium", "easy")  # position 1 and 2; the hard start is position 0
_TRY = re.compile(r"^(?P<chain>.+):(?P<level>medium|easy):try(?P<attempt>\d+):t\d+$")


def chain_bands() -> dict[str, Bin]:
    """The bins of the `chains` scheme by name: the same bands `synthgen bin --scheme chains` uses."""
    return {b.name: b for b in make_bins(SCHEMES["chains"])}


def accepts(row: dict[str, Any], members: set[str], band: Bin) -> bool:
    """A tried variant becomes the chain's next level: valid, new to its chain, in the band."""
    return bool(row["valid"]) and row["problem_id"] not in members and band.holds(row["pass_rate"])


def chain_id(start_problem_id: str) -> str:
    return f"chain:{start_problem_id}"


def read_starts(settings: ChainSettings, console: Console | None = None) -> tuple[pl.DataFrame, dict, dict]:
    """The run's chain starts, every shard's: the valid kept problems whose pass rate lies in the start
    band, by problem id, at most `max_chains`; the partial-input metadata; and the start report (band,
    candidates, how many lay outside it). No start in the band gives no chains, not an error."""
    stage = StageDir.input_of(settings.run_dir, "filter", settings.input_dir)
    found = read_input(stage, settings.allow_partial, console or Console(stderr=True), STAGE)
    kept = pl.from_arrow(found.read_table()) if found.parts else pl.from_arrow(PROBLEMS.empty_table())
    valid = kept.filter(pl.col("valid")).unique("problem_id", keep="first")
    (low, high), p = settings.start_band, pl.col("pass_rate")
    inside = valid.filter(p.is_between(low, high)).sort("problem_id")
    report = {
        "start_band": [low, high],
        "candidates": valid.height,
        "outside_band": valid.height - inside.height,
        "below_band": valid.filter(p < low).height,
        "above_band": valid.filter(p > high).height,
    }
    return inside.head(settings.max_chains) if settings.max_chains else inside, found.metadata(), report


def replay(start_id: str, steps: dict[str, list[dict]], tries: int, bands: dict[str, Bin]) -> tuple[bool, list[dict]]:
    """(finished, the accepted medium and easy rows of a complete chain) from a chain's tried rows
    (per level, in try order), by the rule the live run used."""
    members, levels = {start_id}, []
    for level in STEPS:
        tried = steps.get(level, [])
        hit = next((row for row in tried if accepts(row, members, bands[level])), None)
        if hit is None:
            return len(tried) >= tries, []  # gave up, or stopped early by a failure
        members.add(hit["problem_id"])
        levels.append(hit)
    return True, levels


def tries_by_chain(rows: pl.DataFrame | None) -> dict[str, dict[str, list[dict]]]:
    """{chain id: {level: rows in try order}} of tried rows."""
    out: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    if rows is None:
        return out
    keyed = []
    for row in rows.iter_rows(named=True):
        m = _TRY.match(row["turn_id"])
        if m:
            keyed.append((m["chain"], m["level"], int(m["attempt"]), row))
    for chain, level, _, row in sorted(keyed, key=lambda k: k[:3]):
        out[chain][level].append(row)
    return out


class ChainStage(TurnStage):
    """Chain as a turn-loop stage. It reads its starts and settles how its steps are measured
    (synthgen.stages.chain.measure.settle) when made, not in `prepare`: settling may take settings
    from the starts, so it must come before the turn loop hashes `self.settings`."""

    name, units = STAGE, "chains"

    def __init__(self, settings: ChainSettings, console: Console | None = None):
        found, input_meta, self.start_report = read_starts(settings, console)
        settings, self.measurement, line = settle(settings, found)
        super().__init__(settings)
        self.input_meta = input_meta
        if line:
            (console or Console(stderr=True)).print(line, markup=False, highlight=False, soft_wrap=True)
        self.bands = chain_bands()
        self._all_starts = found
        self.starts: pl.DataFrame | None = None
        self.report: dict[str, Any] = {}
        self._gate: asyncio.Lock | None = None  # one turn at a time until the measurement is confirmed
        self._gate_open = False  # set by an infrastructure failure (see `_turn`)

    def _dir(self, name: str) -> StageDir:
        return StageDir(self.settings.run_dir, f"{STAGE}/{name}")

    def rows_dir(self) -> StageDir:
        return self._dir("tries")

    def finished_dir(self) -> StageDir:
        return self._dir("links")

    def stats_path(self, shard: str) -> Path:
        return Path(self.settings.run_dir) / STAGE / f"stats-{shard}.json"

    def prepare(self) -> None:
        self.starts = self._all_starts[self.settings.shard :: self.settings.num_shards]

    def plan(self, parts: list[Path]) -> UnitsLeft:
        tried = tries_by_chain(read_rows(parts, ["turn_id", "valid", "pass_rate", "problem_id"]))
        finished, rows_left, redo = set(), 0, set()
        for start in self.starts["problem_id"].to_list():
            steps = tried.get(chain_id(start), {})
            finished_chain, _ = replay(start, steps, self.settings.tries, self.bands)
            if finished_chain:
                finished.add(start)
            else:
                rows_left += sum(len(rows) for rows in steps.values())
                redo.update(row["turn_id"] for rows in steps.values() for row in rows)
        todo = (row for row in self.starts.iter_rows(named=True) if row["problem_id"] not in finished)
        left = self.starts.height - len(finished)
        turns_todo = max(0, len(STEPS) * left - rows_left)
        return UnitsLeft(todo, self.starts.height, len(finished), turns_todo=turns_todo, resumed_keys=redo)

    async def run_unit(self, start: dict, loop: TurnLoop) -> bool:
        chain = chain_id(start["problem_id"])
        members = {start["problem_id"]}
        lineage = Lineage(
            start["lineage_id"],
            start["seed_id"],
            get_env(start["env"]),
            Mode.CHAIN,
            previous=Problem.from_fields(start),
            summary=Summary.from_row(start, self.settings.progression),
        )
        for position, level in enumerate(STEPS, 1):
            band = self.bands[level]
            for attempt in range(1, self.settings.tries + 1):
                if attempt > 1:
                    loop.expect_turns(+1)
                req = lineage.request(
                    position,
                    strategy=Strategy(f"chain-{level}"),
                    target=(band.low, band.high),
                    key=f"{chain}:{level}:try{attempt}",
                    turns_left=len(STEPS) - position + 1,
                )
                outcome = await self._turn(req, loop)
                if outcome is None:  # the next step would build on a try that never finished
                    loop.expect_turns(-(len(STEPS) - position + 1))
                    return False
                if accepts(outcome.row, members, band):
                    members.add(outcome.problem.problem_id)
                    lineage.absorb(outcome)
                    break
            else:  # no try landed in the band: the chain is given up
                loop.expect_turns(-(len(STEPS) - position))
                return True
        return True

    async def _turn(self, req: TurnRequest, loop: TurnLoop):
        """`loop.turn`, its measured row checked against the starts' measurement (synthgen.stages.chain.
        measure). Until a step has confirmed it, turns go one at a time, so a refusal (exit 2) finds no
        other request in flight. An infrastructure failure opens the gate: one at a time, a server that
        is down would make every unit wait out its outage (--max-outage) in turn, not all at once."""
        if not self.measurement.settled and not self._gate_open:
            self._gate = self._gate or asyncio.Lock()
            async with self._gate:
                if self.measurement.refused:  # the run is stopping with exit 2: start nothing more
                    return None
                if not self.measurement.settled and not self._gate_open:
                    outcome = self._checked(await loop.turn(req))
                    self._gate_open = outcome is None
                    return outcome
        return self._checked(await loop.turn(req))

    def _checked(self, outcome):
        if outcome is not None:
            self.measurement.check(outcome.row)
        return outcome

    def marker_info(self) -> dict:
        return {"starts": self.starts.height, **self.start_report, "measurement": self.measurement.record()}

    def finish(self, loop: TurnLoop) -> str:
        """Assemble the accepted chains from the tries on disk; write problems/ and links/."""
        tries = self.rows_dir()
        tried = tries_by_chain(pl.from_arrow(tries.read_shard(loop.shard)) if tries.shard_parts(loop.shard) else None)
        problems, links, dropped = assemble(self.starts.iter_rows(named=True), tried, self.settings.tries, self.bands)
        steps = [row for row, link in zip(problems, links) if link["position"] > 0]
        measurement = self.measurement.record(pl.from_arrow(table_from_rows(steps, PROBLEMS)))
        report = {"chains": len(links) // 3, "starts": self.starts.height, "dropped_shared": dropped}
        self.report = {**report, **self.start_report, "measurement": measurement}
        info = {"shard": loop.shard, "settings": self.settings.hashed_view(), "measurement": measurement}
        outputs = ((self._dir("problems"), PROBLEMS, problems), (self._dir("links"), CHAIN_LINKS, links))
        for out, schema, data in outputs:
            meta = file_metadata(out.stage, loop.digest, {**info, **self.input_meta})
            out.clear_shard(loop.shard)
            out.write_part(loop.shard, 0, table_from_rows(data, schema), meta)
            out.mark_done(
                loop.shard, {"rows": len(data), "settings_hash": loop.digest, **self.report, **self.input_meta}
            )
        if dropped:
            loop.console.print(f"chain: left out {dropped} chain(s) sharing a problem with an earlier chain")
        self._write_disjoint(loop)
        low, high = self.start_report["start_band"]
        loop.console.print(
            f"chain: starts from kept problems with pass rate in {low:g}-{high:g} (start band {low:g}-{high:g}; "
            f"{self.start_report['outside_band']} of {self.start_report['candidates']} kept problems outside it: "
            f"{self.start_report['below_band']} below, {self.start_report['above_band']} above)",
            soft_wrap=True,
        )
        return f"chain {loop.shard}: {self.report['chains']} chains from {self.starts.height} hard problems"

    def complete_finished(self, loop: TurnLoop) -> None:
        """A run killed while it built the disjoint baseline left the chains finished and no baseline."""
        from synthgen.stages.chain.disjoint import disjoint_finished

        if not disjoint_finished(self.settings):
            self._write_disjoint(loop)

    def _write_disjoint(self, loop: TurnLoop) -> None:
        if self.settings.disjoint and self.settings.num_shards == 1:
            from synthgen.stages.chain.disjoint import write_disjoint

            write_disjoint(self.settings, loop.console)


def assemble(starts, tried: dict, tries: int, bands: dict[str, Bin]) -> tuple[list[dict], list[dict], int]:
    """(problem rows, link rows, chains left out) of the accepted chains, in the starts' order; every
    problem_id appears once: a chain sharing a problem with an earlier one is left out."""
    problems, links, dropped, used = [], [], 0, set()
    for start in starts:
        chain = chain_id(start["problem_id"])
        _, levels = replay(start["problem_id"], tried.get(chain, {}), tries, bands)
        if not levels:
            continue
        rows = [{**{k: start.get(k) for k in PROBLEMS.names}, "mode": "chain"}, *levels]
        ids = [row["problem_id"] for row in rows]
        if used & set(ids):
            dropped += 1
            continue
        used.update(ids)
        problems += rows
        links += [
            {
                "link_id": f"{chain}:{position}",
                "chain_id": chain,
                "level": level,
                "position": position,
                "problem_id": row["problem_id"],
                "pass_rate": row["pass_rate"],
                "env": row["env"],
            }
            for position, (level, row) in enumerate(zip(("hard", *STEPS), rows))
        ]
    return problems, links, dropped


def run(settings: ChainSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    console = console or Console(stderr=True)
    return TurnLoop(ChainStage(settings, console), force=force, console=console).run()
