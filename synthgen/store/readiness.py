"""Is a stage ready to run? Its input must be finished (`read_input`), and its own shard not
finished already with these settings (`check_finished`: skip it, or redo it with --force)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from synthgen.errors import UserError
from synthgen.settings.base import command_settings
from synthgen.store.files import read_metadata
from synthgen.store.layout import StageDir
from synthgen.store.status import StageStatus


def check_finished(stage: StageDir, shard: str, settings_hash: str, force: bool) -> bool:
    """True when `shard` is already finished with these settings (the caller skips it).

    A shard finished under other settings is an error unless `force`, in which case it is
    cleared: silently mixing two settings in one stage folder would poison every later stage.
    """
    info = stage.done_info(shard)
    if info is None:
        return False
    if info.get("settings_hash") == settings_hash and not force:
        return True
    if not force:
        changed = settings_changes(stage, shard, settings_hash)
        raise UserError(
            f"{stage.path} already holds {shard} made with other settings ({changed}); --force redoes it "
            f"(its output is replaced; LLM answers to requests the same as before come from the run's request "
            f"cache, not paid for again), or use another --run-dir"
        )
    stage.clear_shard(shard)
    return False


def settings_changes(stage: StageDir, shard: str, settings_hash: str, limit: int = 4) -> str:
    """What differs between the settings `shard` was made with and the command line's (`turns: 2 -> 3`),
    from the settings its parts record; the two hashes where either side is unknown."""
    info = stage.done_info(shard) or {}
    hashes = f"hash {info.get('settings_hash')} vs {settings_hash}"
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


def read_input(settings, upstream: str, console: Console, label: str, *, hint: str = "") -> StageStatus:
    """The finished input of a stage (`settings.input_dir`, else RUN_DIR/<upstream>), or exit 2.

    With `settings.allow_partial` an unfinished input is read as far as it is finished; the
    console says so, and the returned status's `metadata()` goes into the stage's output.
    """
    found = StageDir.input_of(settings, upstream).require_complete(
        bool(getattr(settings, "allow_partial", False)), hint=hint
    )
    if found.partial:
        console.print(f"[yellow]{label}: {found.note()}[/yellow]")
    stage = found.stage
    if any((stage.done_info(shard) or {}).get("input_partial") for shard in found.finished):
        console.print(
            f"[yellow]{label}: note: {stage.path} was itself made from a partial input "
            "(--allow-partial upstream)[/yellow]"
        )
    return found
