"""Buffered, atomic row output for stages that produce rows as work completes (generate, chain).

Rows are held in a bounded buffer and written as numbered part files of one shard; each part is
atomic, so a crash loses at most the buffer, which the stage recomputes on resume (the request
cache makes that free). `seen` holds the keys on disk of the units a run resumes, so it adds no
duplicates; memory holds the buffer and those keys, never the whole shard.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from synthgen.store.files import file_metadata, read_metadata
from synthgen.store.layout import StageDir
from synthgen.store.readiness import refuse_other_settings
from synthgen.store.records import table_from_rows


class ShardWriter:
    def __init__(
        self,
        stage: StageDir,
        shard: str,
        schema: pa.Schema,
        settings_hash: str,
        *,
        key: str = "turn_id",
        max_rows: int = 256,
        max_age_s: float = 30.0,
        extra_meta: dict[str, Any] | None = None,
    ):
        self.stage, self.shard, self.schema, self.key = stage, shard, schema, key
        self.settings_hash = settings_hash
        self.max_rows, self.max_age_s = max_rows, max_age_s
        self.meta = file_metadata(stage.stage, settings_hash, {"shard": shard, **(extra_meta or {})})
        self.buffer: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.written = 0
        self._next_part = 0
        self._last_flush = time.monotonic()

    def resume(self, force: bool = False) -> list[Path]:
        """The parts already written for this shard, their settings checked (none after `force`).

        Nothing is loaded: `written` counts their rows from the footers, and the stage reads
        what it needs from the parts (lazily, for a shard of a million lineages) and hands the
        keys a resumed unit will produce again to `skip`."""
        if force:
            self.stage.clear_shard(self.shard)
        else:
            self.stage.remove_stale_temps(self.shard)
        parts = self.stage.shard_parts(self.shard)
        for part in parts:
            refuse_other_settings(self.stage, self.shard, read_metadata(part).get("settings_hash"), self.settings_hash)
        if parts:
            self._next_part = 1 + max(map(self.stage.part_index, parts))
        self.written = sum(pq.ParquetFile(p).metadata.num_rows for p in parts)
        return parts

    def skip(self, keys: set[str]) -> None:
        """Keys already on disk that this run will produce again (units it resumes): not written twice."""
        self.seen = keys

    def add(self, row: dict[str, Any]) -> bool:
        """Queue a row unless it is already on disk; flush when the buffer is full or old."""
        if row[self.key] in self.seen:
            self.seen.discard(row[self.key])  # each key comes back once: memory shrinks as units resume
            return False
        self.buffer.append(row)
        if len(self.buffer) >= self.max_rows or time.monotonic() - self._last_flush > self.max_age_s:
            self.flush()
        return True

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self.buffer:
            return
        rows, self.buffer = self.buffer, []
        rows.sort(key=lambda r: r[self.key])
        self.stage.write_part(self.shard, self._next_part, table_from_rows(rows, self.schema), self.meta)
        self._next_part += 1
        self.written += len(rows)

    def finish(self, info: dict[str, Any]) -> None:
        self.flush()
        if self.written == 0:
            # An empty but typed part, so that readers see zero rows rather than no data at all.
            self.stage.write_part(self.shard, self._next_part, self.schema.empty_table(), self.meta)
        self.stage.mark_done(self.shard, {"rows": self.written, "settings_hash": self.settings_hash, **info})
