"""A sharded stage's rows as they finish (`AttemptsShardWriter`), and its kept student attempts
(`generate` / `calibrate --keep-attempts solved|all`): where they live, how the turn loop writes
them beside its rows, and how a reader gets them back (`read_attempts`).

A PROBLEMS row keeps only a summary of its M attempts (counts, a few solved and failed answers).
With `--keep-attempts` every attempt of a valid, measured problem is also kept whole (`all`), or
only the solved ones (`solved`): its text, the server's reasoning, finish reason and tokens, the
verdict, in the ATTEMPTS schema (synthgen.store.records). `none`, the default, writes nothing.

Layout: a folder of its own beside the stage's, sharded like it:

    RUN/generate-attempts/<shard>.part-00003.parquet   the attempts of the rows in generate/<shard>.part-00003
    RUN/generate-attempts/<shard>.done                 written just before generate/<shard>.done
    RUN/calibrate-attempts/...                         the same for calibrate/

Beside the stage, not inside it (generate/attempts/): readers of a problem folder take any Parquet
file below it (calibrate's --input-dir, user globs such as `generate/**/*.parquet`), and none of
them should meet attempt rows where it expects problems. No reader lists a run directory's
folders as stages: each opens the folders it knows by name.

What a shard guarantees, as its rows do (AttemptsShardWriter below):
- attempts part i is written, atomically, just before rows part i, and holds the attempts of
  exactly those rows. A kill between the two leaves attempts part i without its rows part: the
  next run deletes it and writes both again (the request cache replays the answers), so a resumed
  shard ends with the attempts of an uninterrupted run, none twice, none lost;
- a rows part that has no attempts part was written without --keep-attempts (and the other way
  round): resuming such a shard with another --keep-attempts would leave a hole, so it is refused
  (exit 2) until the same flag is given again or --force starts the shard over;
- `--force` clears the shard's attempts with its rows, whatever --keep-attempts says now.

`--keep-attempts` is not part of the settings hash: it changes what is kept, not the problems,
so a shard's rows are the same with or without it and the stages after generate see one hash.
Each attempts part and marker records the mode instead, and `read_attempts` refuses a run whose
shards kept attempts differently, or whose rows and attempts disagree.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from synthgen.errors import UserError
from synthgen.settings.base import ENV_NAMES
from synthgen.store import record_checks as checks
from synthgen.store.files import file_metadata, read_metadata
from synthgen.store.layout import Layout, StageDir
from synthgen.store.readiness import refuse_other_settings
from synthgen.store.records import ATTEMPTS, table_from_rows

KeepAttempts = Literal["none", "solved", "all"]
KEEP_MODES: tuple[str, ...] = ("none", "solved", "all")
STAGES = ("generate", "calibrate")  # the stages that can keep their attempts, in read order
SUFFIX = "-attempts"  # RUN/<stage>-attempts
STATUSES = ("ok", "format")  # infra attempts never make it: their turn has no row
# Attempt text held in memory before the shard's buffered rows and attempts are written: a turn's
# 32 attempts with long reasoning can be a few MB, and the rows buffer counts rows, not bytes.
MAX_BUFFER_CHARS = 64 << 20

ATTEMPTS_SPEC = checks.strict(
    "attempts",
    ATTEMPTS,
    enums={"env": ENV_NAMES, "status": STATUSES, "stage": STAGES},
    fractions=("reward",),
)


def attempts_dir(run_dir: Path | str, stage: str) -> StageDir:
    """RUN/<stage>-attempts: the kept attempts of `stage` (generate or calibrate), sharded like it."""
    if stage not in STAGES:  # a programming error: only these stages keep attempts
        raise ValueError(f"stage {stage!r} keeps no attempts (only {', '.join(STAGES)})")
    folder = StageDir(Path(run_dir), f"{stage}{SUFFIX}")
    folder.layout = Layout(ATTEMPTS_SPEC, f"kept {stage} attempts", f"{stage} --keep-attempts solved|all")
    return folder


def attempt_rows(
    row: dict[str, Any], answers: Sequence[Any], rewards: Sequence[Any], keep: str, stage: str
) -> list[dict[str, Any]]:
    """The ATTEMPTS rows `keep` keeps of one measured problem: `row` is its PROBLEMS row (valid,
    measured), `answers` the student's completions (synthgen.llm.response.Completion) and
    `rewards` their scores (synthgen.envs.problem.Reward), in attempt order."""
    if keep == "none" or not row.get("valid") or not answers:
        return []
    if len(answers) != len(rewards):
        raise ValueError(f"{len(answers)} answers but {len(rewards)} rewards")
    base = {
        "turn_id": row["turn_id"],
        "problem_id": row["problem_id"],
        "env": row["env"],
        "student_model": row["student_model"],
        "measured_by": row.get("measured_by"),
        "settings_hash": row["settings_hash"],
        "stage": stage,
    }
    out = []
    for i, (answer, reward) in enumerate(zip(answers, rewards)):
        if reward.status not in STATUSES:  # a turn with an infra attempt has no row: never here
            raise ValueError(f"attempt {i} of {row['turn_id']} has status {reward.status!r}")
        value = 1.0 if reward.value == 1.0 else 0.0
        if keep == "solved" and value != 1.0:
            continue
        out.append(
            {
                **base,
                "attempt": i,
                "content": answer.content,
                "reasoning": answer.reasoning or None,  # the client gives "" when the server sent none
                "finish_reason": answer.finish_reason,
                "completion_tokens": answer.completion_tokens,
                "status": reward.status,
                "reward": value,
                "detail": reward.detail or None,
            }
        )
    return out


class AttemptsShardWriter:
    """A stage's rows, written as they finish in bounded, atomic parts of one shard, and the
    attempts of those rows to `attempts` (RUN/<stage>-attempts), part for part, before each rows part.

    Rows wait in a bounded buffer; each part is atomic, so a crash loses at most the buffer, which
    the stage recomputes on resume (the request cache makes that free). `seen` holds the keys on
    disk of the units a run resumes, so it adds no duplicates; memory holds the buffer and those
    keys, never the whole shard. `attempts` None (a stage that keeps none, such as chain) writes
    rows only; with `keep` "none" it writes no attempts but still refuses to resume a shard begun
    with them, and `--force` still clears them."""

    def __init__(
        self,
        stage: StageDir,
        shard: str,
        schema: pa.Schema,
        settings_hash: str,
        *,
        attempts: StageDir | None = None,
        keep: str = "none",
        key: str = "turn_id",
        max_rows: int = 256,
        max_age_s: float = 30.0,
        extra_meta: dict[str, Any] | None = None,
    ):
        if keep not in KEEP_MODES:
            raise ValueError(f"keep must be one of {', '.join(KEEP_MODES)}, not {keep!r}")
        self.stage, self.shard, self.schema, self.key = stage, shard, schema, key
        self.settings_hash = settings_hash
        self.max_rows, self.max_age_s = max_rows, max_age_s
        self.meta = file_metadata(stage.stage, settings_hash, {"shard": shard, **(extra_meta or {})})
        self.buffer: list[dict[str, Any]] = []
        self.seen: set[str] = set()
        self.written = 0
        self._next_part = 0
        self._last_flush = time.monotonic()
        self.attempts, self.keep = attempts, keep
        self.keeping = attempts is not None and keep != "none"
        self.attempts_meta = file_metadata(
            attempts.stage if attempts is not None else "",
            settings_hash,
            {"shard": shard, "keep_attempts": keep, **(extra_meta or {})},
        )
        self.kept: list[dict[str, Any]] = []  # attempts of the buffered rows
        self._kept_chars = 0
        self.attempts_written = 0

    # -- resume --------------------------------------------------------------------------------
    def resume(self, force: bool = False) -> list[Path]:
        """The rows parts already written for this shard, their settings checked (none after `force`).

        Nothing is loaded: `written` counts their rows from the footers, and the stage reads
        what it needs from the parts (lazily, for a shard of a million lineages) and hands the
        keys a resumed unit will produce again to `skip`."""
        if force:
            self.stage.clear_shard(self.shard)
        else:
            self.stage.remove_stale_temps(self.shard)
        parts = self.stage.shard_parts(self.shard)
        for part in parts:
            refuse_other_settings(
                self.stage, self.shard, read_metadata(part).get("settings_hash"), self.settings_hash, cached=True
            )
        if parts:
            self._next_part = 1 + max(map(self.stage.part_index, parts))
        self.written = sum(pq.ParquetFile(p).metadata.num_rows for p in parts)
        if self.attempts is None:
            return parts
        folder, shard = self.attempts, self.shard
        if force:
            folder.clear_shard(shard)
        else:
            folder.remove_stale_temps(shard)
        rows_at = {StageDir.part_index(p): p for p in parts}
        mine = []
        for part in folder.shard_parts(shard):
            if StageDir.part_index(part) not in rows_at:  # killed between the two writes: its rows come again
                part.unlink(missing_ok=True)
            else:
                mine.append(part)
        self._check_resumed(mine, rows_at)
        self.attempts_written = sum(pq.ParquetFile(p).metadata.num_rows for p in mine)
        return parts

    def _check_resumed(self, mine: list[Path], rows_at: dict[int, Path]) -> None:
        """The attempts on disk fit what this run will add: same mode, same settings, no holes."""
        again = f"; pass it again, or use --force to start {self.shard} over"
        for part in mine:
            meta = checks.file_metadata_of(checks.read_schema(part))
            found = meta.get("keep_attempts")
            if self.keep != found:
                raise UserError(
                    f"{self.shard} of {self.stage.path} was started with --keep-attempts {found} "
                    f"({part} holds its attempts), not {self.keep}{again}"
                )
            refuse_other_settings(self.attempts, self.shard, meta.get("settings_hash"), self.settings_hash, cached=True)
        if self.keeping:
            have = {StageDir.part_index(p) for p in mine}
            missing = sorted(i for i in rows_at if i not in have)
            if missing:
                raise UserError(
                    f"{self.shard} of {self.stage.path} was started without --keep-attempts {self.keep} "
                    f"({rows_at[missing[0]].name} has no attempts in {self.attempts.path}); finish it with the "
                    f"--keep-attempts it was started with, or use --force to start it over"
                )

    # -- writing -------------------------------------------------------------------------------
    def skip(self, keys: set[str]) -> None:
        """Keys already on disk that this run will produce again (units it resumes): not written twice."""
        self.seen = keys

    def add(self, row: dict[str, Any], attempts: Iterable[dict[str, Any]] = ()) -> bool:
        """Queue a row and its attempts unless the row is on disk already (then so are they); flush
        when the buffer is full or old."""
        if row[self.key] in self.seen:
            self.seen.discard(row[self.key])  # each key comes back once: memory shrinks as units resume
            return False
        if self.keeping:
            for attempt in attempts:
                self.kept.append(attempt)
                self._kept_chars += len(attempt["content"]) + len(attempt["reasoning"] or "")
        self.buffer.append(row)
        full = len(self.buffer) >= self.max_rows or self._kept_chars > MAX_BUFFER_CHARS
        if full or time.monotonic() - self._last_flush > self.max_age_s:
            self.flush()
        return True

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if not self.buffer:
            return
        if self.keeping:
            self._write_attempts(self._next_part)  # before the rows part that it belongs to
        rows, self.buffer = self.buffer, []
        rows.sort(key=lambda r: r[self.key])
        self.stage.write_part(self.shard, self._next_part, table_from_rows(rows, self.schema), self.meta)
        self._next_part += 1
        self.written += len(rows)

    def _write_attempts(self, index: int) -> None:
        kept, self.kept, self._kept_chars = self.kept, [], 0
        kept.sort(key=lambda a: (a["turn_id"], a["attempt"]))
        table = table_from_rows(kept, ATTEMPTS) if kept else ATTEMPTS.empty_table()
        self.attempts.write_part(self.shard, index, table, self.attempts_meta)
        self.attempts_written += len(kept)

    def finish(self, info: dict[str, Any]) -> None:
        self.flush()
        if self.keeping:
            if self.written == 0:  # the rows get an empty typed part: so do the attempts, as its pair
                self._write_attempts(self._next_part)
            self.attempts.mark_done(
                self.shard,
                {
                    "rows": self.attempts_written,
                    "problem_rows": self.written,
                    "keep_attempts": self.keep,
                    "settings_hash": self.settings_hash,
                    **info,
                },
            )
        if self.written == 0:  # an empty but typed part: readers see zero rows rather than no data at all
            self.stage.write_part(self.shard, self._next_part, self.schema.empty_table(), self.meta)
        # The stage's marker last: a finished shard has its attempts finished.
        self.stage.mark_done(self.shard, {"rows": self.written, "settings_hash": self.settings_hash, **info})


# -- reading ----------------------------------------------------------------------------------------
def read_attempts(run_dir: Path, columns: Sequence[str] | None = None) -> pa.Table | None:
    """Every kept attempt of the run (RUN/generate-attempts, then RUN/calibrate-attempts) as one
    ATTEMPTS table, or None when the run kept none (no attempts folder; a run that kept attempts
    but measured no valid problem gives an empty table).

    Only finished stages are read: a stage or its attempts not finished, a shard of the stage that
    kept no attempts, or shards that kept them differently (solved / all) or under other settings
    than the rows are a one-line UserError (exit 2). `columns` reads only those: a run that kept
    every attempt holds M answers' text per problem, which a count of reasons does not need."""
    tables = []
    for stage in STAGES:
        folder = attempts_dir(run_dir, stage)
        if not folder.path.is_dir() or not (folder.parts() or folder.done_shards()):
            continue
        found = folder.status()
        rows = StageDir(run_dir, stage).require_complete()
        if found.missing or set(found.finished) != set(rows.finished):
            lacking = sorted(set(rows.finished) - set(found.finished)) or found.missing
            raise UserError(
                f"{folder.path} has no finished attempts for {len(lacking)} shard(s) of {rows.stage.path} "
                f"({', '.join(lacking[:3])}{', ...' if len(lacking) > 3 else ''}): not finished, or run without "
                f"--keep-attempts; re-run them with `synthgen {stage} --keep-attempts solved|all --force`"
            )
        if found.settings_hash != rows.settings_hash:
            raise UserError(
                f"{folder.path} was made with other settings than {rows.stage.path} (hash {found.settings_hash} "
                f"vs {rows.settings_hash}); re-run `synthgen {stage} --keep-attempts solved|all --force`"
            )
        modes = {(folder.done_info(s) or {}).get("keep_attempts") for s in found.finished}
        if len(modes) > 1:
            raise UserError(
                f"{folder.path} mixes shards that kept attempts differently ({' and '.join(sorted(map(str, modes)))}); "
                f"re-run the odd ones with one --keep-attempts and --force"
            )
        tables.append(found.read_table(columns))
    if not tables:
        return None
    return pa.concat_tables(tables)


UNREADABLE = "(unreadable answer: "  # how a row's failed examples show a format failure (synthgen.envs.summary)


def format_failure_reasons(run_dir: Path, rows: pl.DataFrame | None, limit: int = 8) -> dict[str, Any] | None:
    """Why the student's answers could not be read: the most common reasons with their counts.

    From the kept attempts when the run kept every one (`--keep-attempts all`: each format failure
    with its reason), else from the rows' failed examples, which show a few unreadable answers per
    problem (a sample: `source` says which). `rows` are generate's rows with `valid`,
    `format_failures` and `failed_examples`; None when there are none."""
    if rows is None or rows.height == 0:
        return None
    valid = rows.filter(pl.col("valid"))
    total = int(valid["format_failures"].fill_null(0).sum())
    folder = attempts_dir(run_dir, "generate")
    kept_all = {(folder.done_info(s) or {}).get("keep_attempts") for s in folder.done_shards()} == {"all"}
    attempts = None
    if kept_all:
        try:
            attempts = read_attempts(run_dir, ["stage", "status", "detail"])
        except UserError:
            attempts = None  # unfinished or mixed: the rows' examples still say something
    if attempts is not None:
        frame = pl.from_arrow(attempts).filter((pl.col("stage") == "generate") & (pl.col("status") == "format"))
        details, source = frame["detail"].fill_null("no reason recorded").to_list(), "every kept attempt"
    else:
        details = [
            text[len(UNREADABLE) : -1]
            for texts in valid["failed_examples"].to_list()
            for text in texts or []
            if text.startswith(UNREADABLE) and text.endswith(")")
        ]
        source = "the problems' failed examples (a sample: a few per problem)"
    counts = pl.Series("detail", details, pl.String).value_counts(sort=True).head(limit)
    return {
        "format_failures": total,
        "source": source,
        "reasons": [[detail, int(n)] for detail, n in counts.iter_rows()],
    }
