"""`synthgen seeds`: cut 25-50-line snippets from code, deterministically, split across shards.

Source trees and starcoderdata-style shards give random windows of `min_lines`-`max_lines`
consecutive lines (the paper's 25-50). Solutions, and the solved completions of a training run
(`seeds completions OUTPUT`, from `train --save-completions`), are used whole at any length, as
the paper does with real solutions: cutting one would seed with part of a program, skipping long
ones would drop the often harder problems.

Sampling is order-independent: every candidate window gets a priority from a hash of (seed,
window text) and the n smallest win, so the result depends only on the inputs and `--seed`, never
on file order or sharding; equal texts collapse. Shard i of n keeps ranks i, i+n, ... One process
writes a shard at a time (a lock; a second one exits 2).
"""

from __future__ import annotations

import hashlib
import heapq
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from rich.console import Console

from synthgen.errors import UserError
from synthgen.stages.seeds import sources as seed_sources
from synthgen.stages.seeds.settings import SeedsSettings
from synthgen.store.files import file_metadata
from synthgen.store.layout import StageDir
from synthgen.store.paths import output_folder
from synthgen.store.readiness import check_finished
from synthgen.store.records import SEEDS, seed_id, table_from_rows

STAGE = "seeds"

_STRING = re.compile(r"""(?:[rbuRBUfF]{0,2})(?:'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")""")
_LITERAL_LEFTOVER = re.compile(r"^[\s\d.,:;+\-*/()\[\]{}xXa-fA-FjJeE_]*$")
_DATA_WORDS = re.compile(r"\b(True|False|None)\b")


@dataclass(frozen=True)
class Window:
    doc: seed_sources.Document
    start: int  # 0-based first line
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def filler_flags(lines: list[str]) -> list[bool]:
    """Per line: True if blank, a comment, inside a docstring, or only a data literal."""
    flags = []
    in_string: str | None = None
    for line in lines:
        stripped = line.strip()
        if in_string:
            flags.append(True)
            if stripped.count(in_string) % 2 == 1:
                in_string = None
            continue
        for quote in ('"""', "'''"):
            if stripped.startswith((quote, "r" + quote, "b" + quote)):
                if stripped.count(quote) % 2 == 1:
                    in_string = quote
                flags.append(True)
                break
        else:
            flags.append(not stripped or stripped.startswith("#") or _is_data_line(stripped))
    return flags


def _is_data_line(stripped: str) -> bool:
    without_strings = _DATA_WORDS.sub("", _STRING.sub("", stripped))
    return bool(_LITERAL_LEFTOVER.match(without_strings)) and any(c not in "()[]{},:; " for c in stripped)


def candidate_windows(doc: seed_sources.Document, settings: SeedsSettings) -> Iterator[Window]:
    """Up to `windows_per_file` random windows of the document that are mostly real code;
    for solutions and completions, the whole solution (if it has any code), however long."""
    lines = doc.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if settings.source in ("solutions", "completions"):
        start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
        if start < len(lines):
            yield Window(doc=doc, start=start, lines=tuple(lines[start:]))
        return
    if len(lines) < settings.min_lines:
        return
    rng = random.Random(f"{settings.seed}:{doc.origin}")
    tries = max(4, 2 * settings.windows_per_file)
    taken: list[tuple[int, int]] = []
    for _ in range(tries):
        if len(taken) >= settings.windows_per_file:
            break
        size = rng.randint(settings.min_lines, min(settings.max_lines, len(lines)))
        start = rng.randint(0, len(lines) - size)
        if any(start < e and s < start + size for s, e in taken):
            continue
        window = lines[start : start + size]
        # Trim blank edges so every seed starts and ends on content, then re-check the size.
        while window and not window[0].strip():
            window, start = window[1:], start + 1
        while window and not window[-1].strip():
            window = window[:-1]
        if len(window) < settings.min_lines:
            continue
        filler = sum(filler_flags(window)) / len(window)
        if filler > settings.max_filler_fraction:
            continue
        taken.append((start, start + len(window)))
        yield Window(doc=doc, start=start, lines=tuple(window))


def documents(settings: SeedsSettings) -> Iterator[seed_sources.Document]:
    if settings.source == "dir":
        return seed_sources.iter_dir(settings.paths, settings.extensions)
    if settings.source == "starcoder":
        return seed_sources.iter_parquet(settings.paths, settings.content_column)
    if settings.source == "completions":
        return seed_sources.iter_completions(settings.paths)
    return seed_sources.iter_solutions(settings.paths, settings.code_column)


def select(windows: Iterable[Window], n: int, seed: int) -> list[tuple[str, Window]]:
    """The n distinct windows with the smallest priority, in priority order (with their ids)."""
    heap: list[tuple[int, str, Window]] = []  # negated priorities: the root is the largest, evicted first
    chosen: set[str] = set()
    for window in windows:
        sid = seed_id(window.text)
        if sid in chosen:
            continue
        priority = int.from_bytes(hashlib.sha256(f"{seed}:{sid}".encode()).digest()[:12], "big")
        item = (-priority, sid, window)
        if len(heap) < n:
            heapq.heappush(heap, item)
        elif item[0] > heap[0][0]:
            chosen.discard(heapq.heapreplace(heap, item)[1])
        else:
            continue
        chosen.add(sid)
    return [(sid, window) for _, sid, window in sorted(heap, reverse=True)]


def to_row(sid: str, window: Window, source: str) -> dict:
    doc, start, n = window.doc, window.start, len(window.lines)
    where = {"origin": doc.origin, "repo": doc.repo, "path": doc.path, "start_line": start + 1, "end_line": start + n}
    return {"seed_id": sid, "source": source, **where, "num_lines": n, "text": window.text}


def run(settings: SeedsSettings, *, force: bool = False, console: Console | None = None) -> StageDir:
    console = console or Console(stderr=True)
    output_folder(settings.run_dir, "--run-dir")
    stage = StageDir(settings.run_dir, STAGE)
    shard = stage.shard_name(settings.shard, settings.num_shards)
    digest = settings.settings_hash()
    with stage.lock(shard):  # one writer per shard; a second one is refused (exit 2)
        if check_finished(stage, shard, digest, force):
            console.print(f"[dim]seeds: {shard} already finished in {stage.path}; skipping[/dim]")
            return stage
        stage.remove_stale_temps(shard)
        ranked = _ranked(settings, console)
        mine = ranked[settings.shard :: settings.num_shards]
        rows = [to_row(sid, w, settings.source) for sid, w in mine]
        meta = file_metadata(STAGE, digest, {"settings": settings.hashed_view(), "shard": shard})
        stage.write_part(shard, 0, table_from_rows(rows, SEEDS), meta)
        stage.mark_done(shard, {"rows": len(rows), "settings_hash": digest, "total_seeds": len(ranked)})
    short = f" (only {len(ranked)} distinct snippets found, {settings.n} asked)" if len(ranked) < settings.n else ""
    console.print(f"seeds: wrote {len(rows)} seeds to {stage.path} [{shard}]{short}")
    return stage


def _ranked(settings: SeedsSettings, console: Console) -> list[tuple[str, Window]]:
    """Every source scanned; the n winning windows in priority order (a UserError if none)."""
    with console.status("seeds: scanning sources") as status:

        def windows() -> Iterator[Window]:
            for count, doc in enumerate(documents(settings), 1):
                if count % 200 == 0:
                    status.update(f"seeds: scanned {count} documents")
                yield from candidate_windows(doc, settings)

        ranked = select(windows(), settings.n, settings.seed)
    if not ranked:
        where = ", ".join(settings.paths) or str(seed_sources.default_source_dir())
        raise UserError(f"no snippet of {settings.min_lines}-{settings.max_lines} lines of code found in {where}")
    return ranked
