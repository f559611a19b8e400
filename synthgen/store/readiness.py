"""Is a stage ready to run? Its input must be finished (`read_input`), and its own shard not
finished already with these settings (`check_finished`: skip it, or redo it with --force)."""

from __future__ import annotations

from rich.console import Console

from synthgen.errors import UserError
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
        raise UserError(
            f"{stage.path} already holds {shard} made with other settings "
            f"(hash {info.get('settings_hash')} vs {settings_hash}); use --force or another --run-dir"
        )
    stage.clear_shard(shard)
    return False


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
