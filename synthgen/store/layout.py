"""The run layout: where every stage's files live, how they are written, locked, checked and read.

Each stage folder is one of two kinds:

    sharded (seeds, generate, chain/problems, chain/links): a Slurm array writes it piece by piece
        <stage>/<shard>.part-00000.parquet   rows, written atomically (temp file + fsync + rename)
        <stage>/<shard>.done                 JSON marker: the shard finished (rows, settings hash)
        <stage>/.<shard>.lock                held by the one process writing the shard
    whole (filter, bin, chain/disjoint): built beside the old folder and swapped in, so a killed
    run leaves the old complete output or none
        <stage>/kept.part-00000.parquet ... <stage>/kept.done
        .<stage>.lock                        beside the folder, held by its one writer
        .<stage>.new-<pid>/                  a build in progress (removed by the next writer)

A stage is finished when every shard it should have (those with parts or a marker and, for Slurm
splits, all n of `shard-i-of-n`) is marked with one settings hash that its parts were written
under. Parquet files that synthgen did not write (no `.part-` name, no synthgen metadata) need no
marker: a folder of your own problems works as an input.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa

from synthgen.errors import UserError
from synthgen.store import record_checks as checks
from synthgen.store.files import exchange, fsync_dir, list_parquet, write_parquet_atomic, write_text_atomic
from synthgen.store.lock import exclusive, holder
from synthgen.store.records import content_hash

_SHARD = re.compile(r"shard-(\d+)-of-(\d+)\Z")
_PART = re.compile(r"(?P<shard>.+)\.part-(?P<index>\d+)\.parquet\Z")
MARKER_SUFFIX = ".done"


@dataclass(frozen=True)
class Layout:
    """What a stage folder holds: its table, whether it is one whole, and who makes it."""

    spec: checks.TableSpec | None
    noun: str  # "no <noun> found in ..."
    made_by: str  # the command that writes it
    whole: str | None = None  # the one marker of a whole-folder stage; None: one marker per shard
    nested: bool = False  # parts sit in sub-folders (bin/<difficulty>/part-00000.parquet)


LAYOUTS: dict[str, Layout] = {
    "seeds": Layout(checks.SEEDS_SPEC, "seeds", "seeds"),
    "generate": Layout(checks.PROBLEMS_SPEC, "generated problems", "generate"),
    "filter": Layout(checks.PROBLEMS_SPEC, "problems", "filter", whole="kept"),
    "filter/rejects": Layout(checks.REJECTS_SPEC, "rejected problems", "filter", whole="rejects"),
    "bin": Layout(checks.BINNED_SPEC, "binned problems", "bin", whole="bin", nested=True),
    "bin_outside": Layout(checks.BINNED_SPEC, "problems outside every bin", "bin --write-outside"),
    "chain/tries": Layout(checks.PROBLEMS_SPEC, "chain tries", "chain"),
    "chain/problems": Layout(checks.PROBLEMS_SPEC, "chain problems", "chain"),
    "chain/links": Layout(checks.CHAIN_LINKS_SPEC, "chain links", "chain"),
    "chain/disjoint": Layout(checks.DISJOINT_SPEC, "disjoint baseline problems", "chain --disjoint", whole="disjoint"),
}


# -- one stage folder -------------------------------------------------------------------------------
class StageDir:
    """One stage's folder in a run: its parts, markers, lock, completeness and validated reads.

    `StageDir(run_dir, "generate")` is a stage of a run; `StageDir.at(folder, "filter")` is a
    folder anywhere that holds a stage's kind of output; `StageDir.input_of(run_dir, "filter",
    input_dir)` is what a stage reads (its `input_dir` setting, else RUN_DIR/<upstream>).
    """

    def __init__(self, run_dir: Path | str, stage: str, *, path: Path | None = None):
        self.run_dir = Path(run_dir)
        self.stage = stage
        self.path = Path(path) if path is not None else self.run_dir / stage
        self.layout = LAYOUTS.get(stage) or Layout(None, f"{stage} output", stage)
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise UserError(f"run directory {self.run_dir} is a file, not a folder")

    def __repr__(self) -> str:
        return f"StageDir({self.stage!r} at {str(self.path)!r})"

    @classmethod
    def at(cls, folder: Path | str, stage: str) -> StageDir:
        folder = Path(folder)
        return cls(folder.parent, stage, path=folder)

    @classmethod
    def input_of(cls, run_dir: Path | str, upstream: str, input_dir: Path | str | None) -> StageDir:
        """The folder a stage reads: its `input_dir` setting when set, else RUN_DIR/<upstream>."""
        return cls.at(input_dir, upstream) if input_dir else cls(run_dir, upstream)

    def sub(self, name: str) -> StageDir:
        """A stage nested in this one's folder (filter/rejects inside filter/)."""
        return StageDir(self.run_dir, f"{self.stage}/{name}", path=self.path / name)

    # -- names ---------------------------------------------------------------------------------
    @staticmethod
    def shard_name(index: int, count: int) -> str:
        """`shard-00003-of-00008`: shard 3 of an 8-way split."""
        return f"shard-{index:05d}-of-{count:05d}"

    @staticmethod
    def shard_index(name: str) -> tuple[int, int] | None:
        """(index, count) of a shard name, or None for a name that is not `shard-i-of-n`."""
        m = _SHARD.match(name)
        return (int(m.group(1)), int(m.group(2))) if m else None

    @staticmethod
    def marker_printf() -> str:
        """The marker file name as a printf format of (index, count), for shell scripts (the Slurm array)."""
        return "shard-%05d-of-%05d" + MARKER_SUFFIX

    @staticmethod
    def part_index(path: Path) -> int:
        """The number of a part file (`<shard>.part-00003.parquet` -> 3)."""
        return int(_PART.match(Path(path).name).group("index"))

    @property
    def whole_shard(self) -> str:
        """The one shard (and marker) name of a whole-folder stage."""
        if not self.layout.whole:
            raise ValueError(f"{self.stage} is written shard by shard, not as a whole")
        return self.layout.whole

    # -- writing -------------------------------------------------------------------------------
    def part_path(self, shard: str, index: int) -> Path:
        return self.path / f"{shard}.part-{index:05d}.parquet"

    def group_part_path(self, group: str | None = None, index: int = 0) -> Path:
        """A part in a sub-folder of a nested stage (bin/<group>/part-00000.parquet), or at its top."""
        return (self.path / group if group else self.path) / f"part-{index:05d}.parquet"

    def write_part(self, shard: str, index: int, table: pa.Table, metadata: dict[str, str]) -> Path:
        return write_parquet_atomic(self.part_path(shard, index), table, metadata)

    def marker_path(self, shard: str) -> Path:
        return self.path / f"{shard}{MARKER_SUFFIX}"

    def mark_done(self, shard: str, info: dict[str, Any]) -> None:
        write_text_atomic(self.marker_path(shard), json.dumps(info, sort_keys=True, indent=1) + "\n")

    def is_done(self, shard: str) -> bool:
        return self.marker_path(shard).is_file()

    def done_info(self, shard: str) -> dict[str, Any] | None:
        try:
            info = json.loads(self.marker_path(shard).read_text())
        except (OSError, ValueError):
            return None
        return info if isinstance(info, dict) else {}

    def shard_parts(self, shard: str) -> list[Path]:
        return sorted(p for p in self.path.glob(f"{glob.escape(shard)}.part-*.parquet") if _PART.match(p.name))

    def clear_shard(self, shard: str) -> None:
        """Remove a shard's parts, marker and stale temp files (before rewriting it whole)."""
        for p in self.shard_parts(shard):
            p.unlink(missing_ok=True)
        self.marker_path(shard).unlink(missing_ok=True)
        self.remove_stale_temps(shard)

    def remove_stale_temps(self, shard: str) -> None:
        """Temp files a killed writer of `shard` left behind (other shards' writers may be live)."""
        if self.path.is_dir():
            for p in self.path.glob(f".{glob.escape(shard)}.*.tmp-*"):
                p.unlink(missing_ok=True)

    def lock(self, shard: str | None = None) -> contextlib.AbstractContextManager[None]:
        """Be the one writer of `shard` (or of the whole folder); a second one gets exit 2.

        `with stage.lock(shard): ...` for a shard of a sharded stage, `with stage.lock(): ...`
        for a whole-folder stage. Re-entrant within a process; released on any exit.
        """
        top = self.stage.split("/")[0]
        if shard is None:
            return exclusive(self.path.parent / f".{self.path.name}.lock", self.stage, self.path)
        pos = self.shard_index(shard)
        what = f"shard {pos[0]} of {top}" if pos else f"shard {shard} of {top}"
        return exclusive(self.path / f".{shard}.lock", what, self.path)

    @contextlib.contextmanager
    def rebuild(self) -> Iterator[StageDir]:
        """Build a whole-folder stage beside the old one and swap it in when the block ends.

        Yields the build (a StageDir to write parts, markers and files into). On an exception
        the build is dropped and the old output stays; a killed process leaves the old
        complete output or none, never a mix. Holds the folder's lock throughout.
        """
        with self.lock():
            parent, name = self.path.parent, self.path.name
            if self.path.exists() and not self.path.is_dir():
                raise UserError(f"{self.path} is a file, not a folder")
            parent.mkdir(parents=True, exist_ok=True)
            for kind in ("new", "old"):
                for stale in parent.glob(f".{glob.escape(name)}.{kind}-*"):
                    shutil.rmtree(stale, ignore_errors=True)  # we hold the lock: their writers are gone
            build_path = parent / f".{name}.new-{os.getpid()}"
            build_path.mkdir()
            try:
                yield StageDir(self.run_dir, self.stage, path=build_path)
            except BaseException:
                shutil.rmtree(build_path, ignore_errors=True)
                raise
            self._swap_in(build_path)

    def _swap_in(self, build_path: Path) -> None:
        for folder in [build_path, *[p for p in build_path.rglob("*") if p.is_dir()]]:
            fsync_dir(folder)
        if not self.path.exists():
            os.replace(build_path, self.path)
        elif exchange(build_path, self.path):
            shutil.rmtree(build_path)  # now the old output
        else:
            old = self.path.parent / f".{self.path.name}.old-{os.getpid()}"
            os.replace(self.path, old)
            os.replace(build_path, self.path)
            shutil.rmtree(old)
        fsync_dir(self.path.parent)

    def remove(self) -> None:
        """Delete this whole-folder stage's output (under its lock)."""
        with self.lock():
            if self.path.is_dir():
                shutil.rmtree(self.path)

    # -- listing -------------------------------------------------------------------------------
    def parts(self) -> list[Path]:
        """Every finished Parquet file of the stage (sub-folders too for nested layouts)."""
        return list_parquet(self.path, recursive=self.layout.nested)

    def nested_parts(self) -> list[Path]:
        """Parquet files in sub-folders, for nested layouts (bin/<difficulty>/); else none."""
        if not self.layout.nested:
            return []
        return [p for p in list_parquet(self.path, recursive=True) if p.parent != self.path]

    def done_shards(self) -> list[str]:
        if not self.path.is_dir():
            return []
        return sorted(p.name[: -len(MARKER_SUFFIX)] for p in self.path.glob(f"*{MARKER_SUFFIX}") if p.is_file())

    def exists(self) -> bool:
        return bool(self.parts())

    def pending(self, num_shards: int) -> list[int]:
        """Indices of an n-way split that have no completion marker yet."""
        return [i for i in range(num_shards) if not self.is_done(self.shard_name(i, num_shards))]

    # -- completeness --------------------------------------------------------------------------
    def status(self) -> StageStatus:
        """What is finished and what is missing, without refusing anything."""
        path = self.path
        if path.exists() and not path.is_dir():
            raise UserError(f"{path} is a file, not a stage folder")
        if not path.is_dir():
            return StageStatus(self, exists=False)
        markers = {name: self.done_info(name) or {} for name in self.done_shards()}
        groups: dict[str, list[Path]] = defaultdict(list)
        loose: list[Path] = []
        for part in list_parquet(path):  # `<shard>.part-00000.parquet` belongs to its shard
            m = _PART.match(part.name)
            (groups[m.group("shard")] if m else loose).append(part)
        nested = self.nested_parts()
        ours = [p for p in nested if checks.file_metadata_of(checks.read_schema(p)).get("stage")]
        whole = self.layout.whole
        expected = set(groups) | set(markers) | ({whole} if ours and whole else set())
        splits = sorted({pos[1] for name in expected if (pos := self.shard_index(name))})
        if len(splits) > 1:
            raise UserError(
                f"{path} holds shards of {' and '.join(f'{n}-way' for n in splits)} splits, which overlap; "
                "keep one split (remove the other's files) or use another run directory"
            )
        if splits:
            expected |= {self.shard_name(i, splits[0]) for i in range(splits[0])}
        finished = sorted(s for s in expected if s in markers)
        missing = sorted(expected - set(markers))
        digest = _one_hash(path, {s: markers[s].get("settings_hash") for s in finished})
        parts = list(loose)
        for shard in finished:
            _check_part_hashes(self, groups.get(shard, []), shard, markers[shard].get("settings_hash"))
            parts += groups.get(shard, [])
        if not ours or (whole in markers):
            if ours:
                _check_part_hashes(self, ours, whole, markers[whole].get("settings_hash"))
            parts += nested
        else:
            parts += [p for p in nested if p not in ours]
        return StageStatus(self, True, finished, missing, sorted(parts), digest)

    def require_complete(self, allow_partial: bool = False, *, hint: str = "") -> StageStatus:
        """The stage's status if it is finished; else a one-line UserError naming what is missing.

        With `allow_partial` an unfinished stage is read as far as it is finished: the status
        says so (`.partial`, `.note()`, `.metadata()`) so the reader can report and record it.
        `hint` is appended to the "nothing found" message (", or pass --input").
        """
        found, layout, busy = self.status(), self.layout, running(self)
        writing = f"`synthgen {layout.made_by}` is still writing {self.path} ({', '.join(busy)})"
        if not found.exists or not (found.parts or found.finished or found.missing):
            if busy:
                raise UserError(f"{writing}; wait for it to finish")
            also = "; --allow-partial reads finished shards only, and there are none" if allow_partial else ""
            raise UserError(
                f"no {layout.noun} found in {self.path} (run `synthgen {layout.made_by}` first{hint})"
                + _leftover(self)
                + also
            )
        if found.missing:
            left, total = len(found.missing), len(found.missing) + len(found.finished)
            if busy:
                what = f"{writing}: {left} of {total} shard(s) not finished ({found.missing_names()})"
                resume = "wait for it to finish"
            else:
                what = (
                    f"{self.path} is not finished: {left} of {total} shard(s) have no completion marker "
                    f"({found.missing_names()})"
                )
                resume = (
                    f"run `synthgen {layout.made_by}` again with the same settings to finish them (it resumes "
                    "where it stopped)"
                )
            if not allow_partial:
                raise UserError(
                    f"{what}; {resume}, or pass --allow-partial to read only the finished ones" + _leftover(self)
                )
            if not found.finished:
                raise UserError(
                    f"{what} and none is finished, so even --allow-partial has nothing to read; {resume}"
                    + _leftover(self)
                )
            found.partial = True
        return found

    # -- reading (no completeness check: stats, tests, a writer's own shard) -------------------
    def read_table(self, columns: Sequence[str] | None = None, *, spec: checks.TableSpec | None = None) -> pa.Table:
        parts = self.parts()
        if not parts:
            raise UserError(f"no Parquet files found for stage {self.stage!r} in {self.path}")
        return checks.read_parts(parts, spec or self.layout.spec, columns)

    def read(self, columns: Sequence[str] | None = None, *, spec: checks.TableSpec | None = None) -> pl.DataFrame:
        return pl.from_arrow(self.read_table(columns, spec=spec))

    def read_shard(self, shard: str, columns: Sequence[str] | None = None) -> pa.Table:
        """One shard's parts (finished or not: a writer resuming it), checked against the schema."""
        return checks.read_parts(self.shard_parts(shard), self.layout.spec, columns)

    def check_schema(self, parts: Sequence[Path] | None = None) -> None:
        """Every part's columns and types against the stage's schema, from the footers only."""
        if self.layout.spec is not None:
            for path in self.parts() if parts is None else parts:
                checks.check_schema(checks.read_schema(path), self.layout.spec, path)

    def count_rows(self, parts: Sequence[Path] | None = None) -> int:
        """Rows in the stage's parts, from their footers, each file's schema checked."""
        return checks.count_rows(self.parts() if parts is None else parts, self.layout.spec)


# -- is a stage finished? -----------------------------------------------------------------------------
@dataclass
class StageStatus:
    """What `StageDir.status` found in a stage folder; `parts` are the files a reader may take."""

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
        stats = [(str(p.relative_to(self.stage.path)), p.stat()) for p in self.parts]
        return content_hash([[name, st.st_size, st.st_mtime_ns] for name, st in stats])

    def read_table(self, columns: Sequence[str] | None = None, *, spec: checks.TableSpec | None = None) -> pa.Table:
        """The parts a reader may take, checked against the stage's schema (or `spec`)."""
        return checks.read_parts(self.parts, spec or self.stage.layout.spec, columns)

    def read(self, columns: Sequence[str] | None = None, *, spec: checks.TableSpec | None = None) -> pl.DataFrame:
        return pl.from_arrow(self.read_table(columns, spec=spec))


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


def running(stage: StageDir) -> list[str]:
    """Who is writing `stage` now ("pid 1234 on host gpu07"), from the locks of its writers: one per
    shard inside the folder, or one beside it for a whole-folder stage."""
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
