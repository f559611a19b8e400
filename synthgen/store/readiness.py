"""Is a stage ready to run, and the one shape of a stage that rewrites its folder whole.

A stage's input must be finished (`read_input`); its own output must not be made already with
other settings (`check_finished`, the one settings-hash check of every stage: skip a shard
finished with these settings, refuse one made with others, redo it with --force). `WholeStage`
is a stage rebuilt whole (filter, bin, chain's disjoint baseline, import): it says what it reads
and what it builds, and `WholeStage.run` does the rest for all of them: the output folder's
check, the lock, the settings check and the build beside the old folder, swapped in at the end.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from rich.console import Console

from synthgen.errors import UserError
from synthgen.settings.base import Settings, command_settings
from synthgen.store.files import read_metadata
from synthgen.store.layout import StageDir, StageStatus
from synthgen.store.paths import output_folder


def check_finished(
    stage: StageDir, shard: str, settings_hash: str, force: bool, *, elsewhere="--run-dir", cached: bool = False
) -> bool:
    """True when `shard` is already finished with these settings (the caller skips it).

    A shard finished under other settings is an error unless `force`, in which case it is
    cleared: silently mixing two settings in one stage folder would poison every later stage.
    `cached`: the stage's LLM answers are in the run's request cache (the message says so).
    """
    info = stage.done_info(shard)
    if info is None:
        return False
    if not force:
        refuse_other_settings(stage, shard, info.get("settings_hash"), settings_hash, elsewhere, cached=cached)
        return True
    stage.clear_shard(shard)
    return False


def refuse_other_settings(
    stage: StageDir,
    shard: str,
    found: str | None,
    settings_hash: str,
    elsewhere: str = "--run-dir",
    *,
    cached: bool = False,
) -> None:
    """A one-line UserError when `shard` (its marker, or a part of it) was made under `found`, not these settings."""
    if found == settings_hash:
        return
    changed = settings_changes(stage, shard, found, settings_hash)
    whole = stage.layout.whole is not None and shard == stage.layout.whole
    what = f"{stage.path} was made" if whole else f"{stage.path} already holds {shard} made"
    # Only a stage that asks an LLM has answers a re-run gets back for free.
    cache = (
        " (its output is replaced; LLM answers to requests the same as before come from the run's request cache,"
        " not paid for again)"
        if cached
        else ""
    )
    raise UserError(f"{what} with other settings ({changed}); --force redoes it{cache}, or use another {elsewhere}")


def settings_changes(stage: StageDir, shard: str, found: str | None, settings_hash: str, limit: int = 4) -> str:
    """What differs between the settings `shard` was made with and the command line's (`turns: 2 -> 3`),
    from the settings its parts record; the two hashes where either side is unknown."""
    hashes = f"hash {found} vs {settings_hash}"
    new = command_settings(settings_hash)
    old = _recorded_settings(stage, shard)
    if new is None or old is None:
        return hashes
    changes = diff_settings(old, new.hashed_view())
    if not changes:
        return hashes
    more = f", and {len(changes) - limit} more" if len(changes) > limit else ""
    return ", ".join(changes[:limit]) + more


def diff_settings(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """`path: old -> new` for every setting that differs, nested sections flattened with dots."""
    a, b = _flatten(old), _flatten(new)
    missing = object()
    out = []
    for key in sorted(set(a) | set(b)):
        before, after = a.get(key, missing), b.get(key, missing)
        if before != after:
            shown = ["(unset)" if v is missing else json.dumps(v) for v in (before, after)]
            out.append(f"{key}: {shown[0]} -> {shown[1]}")
    return out


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _recorded_settings(stage: StageDir, shard: str) -> dict[str, Any] | None:
    for part in stage.shard_parts(shard):
        try:
            recorded = read_metadata(part).get("settings")
            data = json.loads(recorded) if recorded else None
        except (OSError, ValueError, UserError):
            continue
        if isinstance(data, dict):
            return data
    return None


def read_input(stage: StageDir, allow_partial: bool, console: Console, label: str) -> StageStatus:
    """The finished input of a stage (StageDir.input_of), or exit 2.

    With `allow_partial` an unfinished input is read as far as it is finished; the console says
    so, and the returned status's `metadata()` goes into the stage's output.
    """
    found = stage.require_complete(allow_partial, hint=", or pass --input-dir")
    if found.partial:
        console.print(f"[yellow]{label}: {found.note()}[/yellow]")
    if any((stage.done_info(shard) or {}).get("input_partial") for shard in found.finished):
        console.print(
            f"[yellow]{label}: note: {stage.path} was itself made from a partial input "
            "(--allow-partial upstream)[/yellow]"
        )
    return found


class WholeStage(ABC):
    """A stage that rewrites one folder whole: what it reads (`prepare`) and what it builds (`build`).

        class MyStage(WholeStage):
            def prepare(self): self.found = read_input(...)   # before the lock: bad input, exit 2
            def build(self, build): ...; return {"rows": n}    # parts and files into `build`
        MyStage(settings, StageDir(run_dir, "filter"), console).run(force)

    A second writer gets exit 2 (the folder's lock); an output marked with other settings is
    refused unless `force`; a killed build leaves the old complete output or none.
    """

    flag = "--run-dir"  # the flag that names the folder `output_root` checks

    def __init__(self, settings: Settings, output: StageDir, console: Console | None = None):
        self.settings, self.output = settings, output
        self.console = console or Console(stderr=True, soft_wrap=True)
        self.digest = settings.settings_hash()
        self.found: StageStatus | None = None  # the input stage, where `prepare` reads one
        self.summary: dict[str, Any] = {}  # what the output holds, for the console and the caller

    def output_root(self) -> Path:
        """The folder checked before any work (writable, a folder)."""
        return self.output.run_dir

    def prepare(self) -> None:  # noqa: B027 (an optional hook, not an abstract step)
        """Read the inputs; runs before the lock and before any output is touched."""

    def up_to_date(self, info: dict[str, Any]) -> bool:
        """The output, made with these settings (its marker `info`), needs no rebuild."""
        return False

    def swapped(self) -> None:  # noqa: B027 (an optional hook, not an abstract step)
        """After the new output is swapped in, still under the lock: the folders that follow it."""

    @abstractmethod
    def build(self, build: StageDir) -> dict[str, Any]:
        """Write the output into `build` (swapped in when this returns); return the marker's figures."""

    def run(self, force: bool = False) -> bool:
        """Build the output; False when it was up to date (nothing written)."""
        output_folder(self.output_root(), self.flag)
        self.prepare()
        out = self.output
        with out.lock():
            info = out.done_info(out.whole_shard)
            if info is not None and not force:
                refuse_other_settings(out, out.whole_shard, info.get("settings_hash"), self.digest, self.flag)
                if self.up_to_date(info):
                    return False
            with out.rebuild() as build:
                build.mark_done(out.whole_shard, {"settings_hash": self.digest, **self.build(build)})
            self.swapped()
        return True
