"""Is a stage finished? Which shards are missing? Which parts may a reader take?

A stage is finished when every shard it should have carries its completion marker, all with one
settings hash, and every part of a finished shard was written under that hash. The shards a stage
should have come from what is on disk: every shard that has parts or a marker, and, for Slurm
splits named `shard-i-of-n`, all n of them (a shard that never started is missing too). Parquet
files that synthgen did not write (no `<shard>.part-` name, no synthgen metadata) need no marker.

`require` refuses an unfinished stage with one line naming the missing shards; with
`allow_partial` it lets the reader take the finished shards and says so in the status, which the
reader prints and records in its own output's metadata.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import polars as pl
import pyarrow as pa

from synthgen.errors import UserError
from synthgen.store import record_checks as checks
from synthgen.store.records import content_hash


class StageDir(Protocol):
    """What a survey reads of a stage folder (synthgen.store.layout.StageDir is one)."""

    path: Path
    layout: Any

    def done_info(self, shard: str) -> dict[str, Any] | None: ...
    def done_shards(self) -> list[str]: ...
    def top_parts(self) -> list[Path]: ...
    def nested_parts(self) -> list[Path]: ...
    def marker_path(self, shard: str) -> Path: ...
    @staticmethod
    def part_shard(path: Path) -> str | None: ...
    @staticmethod
    def shard_index(name: str) -> tuple[int, int] | None: ...
    @staticmethod
    def shard_name(index: int, count: int) -> str: ...


MARKER_SUFFIX = ".done"


@dataclass
class StageStatus:
    """What `survey` found in a stage folder; `parts` are the files a reader may take."""

    stage: StageDir
    exists: bool
    finished: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    parts: list[Path] = field(default_factory=list)
    settings_hash: str | None = None
    partial: bool = False  # an unfinished stage let through on purpose (allow_partial)

    @property
    def complete(self) -> bool:
        return self.exists and not self.missing

    def missing_names(self, limit: int = 5) -> str:
        names = self.missing[:limit] + (["..."] if len(self.missing) > limit else [])
        return ", ".join(names)

    def note(self) -> str | None:
        """One line for the console when the stage was read partially, else None."""
        if not self.partial:
            return None
        total = len(self.finished) + len(self.missing)
        return (
            f"--allow-partial: reading the {len(self.finished)} finished of {total} shard(s) in "
            f"{self.stage.path}; not finished: {self.missing_names()}"
        )

    def metadata(self) -> dict[str, Any]:
        """What a reader records in its own output's metadata: only when the input was partial."""
        if not self.partial:
            return {}
        return {"input_partial": {"path": str(self.stage.path), "finished": self.finished, "missing": self.missing}}

    def fingerprint(self) -> str:
        """Changes when any part a reader takes is added, removed or rewritten."""
        rows = []
        for p in self.parts:
            st = p.stat()
            rows.append([str(p.relative_to(self.stage.path)), st.st_size, st.st_mtime_ns])
        return content_hash(rows)

    def read_table(self, columns: Sequence[str] | None = None, *, spec: checks.TableSpec | None = None) -> pa.Table:
        """The parts a reader may take, checked against the stage's schema (or `spec`)."""
        return checks.read_parts(self.parts, spec or self.stage.layout.spec, columns)

    def read(self, columns: Sequence[str] | None = None, *, spec: checks.TableSpec | None = None) -> pl.DataFrame:
        return pl.from_arrow(self.read_table(columns, spec=spec))


def survey(stage: StageDir) -> StageStatus:
    path = stage.path
    if path.exists() and not path.is_dir():
        raise UserError(f"{path} is a file, not a stage folder")
    if not path.is_dir():
        return StageStatus(stage, exists=False)
    markers = {name: stage.done_info(name) or {} for name in stage.done_shards()}
    groups: dict[str, list[Path]] = defaultdict(list)
    loose: list[Path] = []
    for part in stage.top_parts():
        shard = stage.part_shard(part)
        (groups[shard] if shard else loose).append(part)
    nested = stage.nested_parts()
    ours = [p for p in nested if checks.file_metadata_of(checks.read_schema(p)).get("stage")]
    whole = stage.layout.whole
    expected = set(groups) | set(markers) | ({whole} if ours and whole else set())
    splits = sorted({pos[1] for name in expected if (pos := stage.shard_index(name))})
    if len(splits) > 1:
        raise UserError(
            f"{path} holds shards of {' and '.join(f'{n}-way' for n in splits)} splits, which overlap; "
            "keep one split (remove the other's files) or use another run directory"
        )
    if splits:
        expected |= {stage.shard_name(i, splits[0]) for i in range(splits[0])}
    finished = sorted(s for s in expected if s in markers)
    missing = sorted(expected - set(markers))
    digest = _one_hash(path, {s: markers[s].get("settings_hash") for s in finished})
    parts = list(loose)
    for shard in finished:
        _check_part_hashes(stage, groups.get(shard, []), shard, markers[shard].get("settings_hash"))
        parts += groups.get(shard, [])
    if not ours or (whole in markers):
        if ours:
            _check_part_hashes(stage, ours, whole, markers[whole].get("settings_hash"))
        parts += nested
    else:
        parts += [p for p in nested if p not in ours]
    return StageStatus(stage, True, finished, missing, sorted(parts), digest)


def _one_hash(path: Path, hashes: dict[str, str | None]) -> str | None:
    seen: dict[str, str] = {}
    for shard, digest in sorted(hashes.items()):
        if digest:
            seen.setdefault(str(digest), shard)
    if len(seen) > 1:
        (h1, s1), (h2, s2) = list(seen.items())[:2]
        raise UserError(
            f"{path} mixes shards made with different settings ({s1}: {h1}; {s2}: {h2}); "
            "re-make the odd ones with the same settings (--force) or use another run directory"
        )
    return next(iter(seen), None)


def _check_part_hashes(stage: StageDir, parts: list[Path], shard: str, digest: str | None) -> None:
    if not digest:
        return
    for part in parts:
        found = checks.file_metadata_of(checks.read_schema(part)).get("settings_hash")
        if found and found != digest:
            raise UserError(
                f"{part} was written with settings {found}, but {stage.marker_path(shard).name} says "
                f"{digest}; re-make the shard (--force)"
            )


def require(stage: StageDir, allow_partial: bool, hint: str = "") -> StageStatus:
    found = survey(stage)
    layout = stage.layout
    busy = running(stage)
    if busy:
        busy_note = f"`synthgen {layout.made_by}` is still writing {stage.path} ({', '.join(busy)})"
    if not found.exists or (not found.parts and not found.finished and not found.missing):
        if busy:
            raise UserError(f"{busy_note}; wait for it to finish")
        also = "; --allow-partial reads finished shards only, and there are none" if allow_partial else ""
        raise UserError(
            f"no {layout.noun} found in {stage.path} (run `synthgen {layout.made_by}` first{hint})"
            + _leftover(stage)
            + also
        )
    if found.missing:
        total = len(found.missing) + len(found.finished)
        what = (
            f"{stage.path} is not finished: {len(found.missing)} of {total} shard(s) have no completion marker "
            f"({found.missing_names()})"
        )
        if busy:
            what = f"{busy_note}: {len(found.missing)} of {total} shard(s) not finished ({found.missing_names()})"
        resume = (
            "wait for it to finish"
            if busy
            else f"run `synthgen {layout.made_by}` again with the same settings to finish them (it resumes where "
            "it stopped)"
        )
        if not allow_partial:
            raise UserError(
                f"{what}; {resume}, or pass --allow-partial to read only the finished ones" + _leftover(stage)
            )
        if not found.finished:
            raise UserError(
                f"{what} and none is finished, so even --allow-partial has nothing to read; {resume}" + _leftover(stage)
            )
        found.partial = True
    return found


def running(stage: StageDir) -> list[str]:
    """Who is writing `stage` now ("pid 1234 on host gpu07"), from the locks of its writers: one per
    shard inside the folder, or one beside it for a whole-folder stage."""
    from synthgen.store.lock import holder

    path = Path(stage.path)
    locks = [path.parent / f".{path.name}.lock"]
    if path.is_dir():
        locks += sorted(path.glob(".*.lock"))
    return sorted({who for lock in locks if (who := holder(lock))})


def running_note(stage: StageDir) -> str | None:
    """`running (pid 1234 on host gpu07)` while a writer holds the stage, for `stats`, else None."""
    busy = running(stage)
    return f"running ({', '.join(busy)})" if busy else None


def _leftover(stage: StageDir) -> str:
    """A build that a whole-folder writer left beside the stage (killed, or still running)."""
    if not stage.layout.whole or not stage.path.parent.is_dir():
        return ""
    builds = sorted(stage.path.parent.glob(f".{stage.path.name}.new-*"))
    return f" ({builds[0].name} is a build that was killed or is still running)" if builds else ""
