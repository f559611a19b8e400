"""Helpers the stages share: shard names and the skip/overwrite rule for finished shards."""

from __future__ import annotations

from synthgen.errors import UserError
from synthgen.shards import StageDir


def shard_name(shard: int, num_shards: int) -> str:
    return f"shard-{shard:05d}-of-{num_shards:05d}"


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
