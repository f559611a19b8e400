"""The LLM request cache: one SQLite file per run directory, so a re-run replays paid-for answers.

Each sample is stored on its own under a key that hashes what decides the answer: the model, the
messages, the sampling settings, the sample index and a caller key (not the server address, API
key or timeout: moving the server keeps the answers). Ok and truncated answers are stored, infra
failures never (a re-run retries them); values are ASCII JSON, read back through
synthgen.llm.response's `from_cache`, which sanitises their text.

What is not cached is drawn again alike: sample i of a caller key is drawn with seed base + i.
vLLM gives sample j of a request for n samples with seed s the seed s + j, so the client asks for
a run of consecutive samples i..i+k-1 in one request with n = k and seed base + i: a sample's seed
is the same alone, inside the whole request, or in the smaller one a re-run sends after a kill.

Writes are one small WAL commit per answer (all its samples), under a lock; several processes (a
Slurm array) may share a file. A full disk is infrastructure (exit 3, `OutOfSpace`), however SQLite
words it: "database or disk is full", or "disk I/O error" when the write-ahead log cannot grow
(SQLite has then rolled back already, so ROLLBACK itself fails). An answer is committed whole or
not at all, so a re-run after freeing space asks again exactly what was not stored.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

# 2: sample i of a caller key is drawn with seed base + i however its request was split.
CACHE_FORMAT = 2


def cache_key(model: str, messages: list[dict], sampling: dict, sample: int, key: str) -> str:
    payload = dict(format=CACHE_FORMAT, model=model, messages=messages, sampling=sampling, sample=sample, key=key)
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: the same bytes as plain UTF-8 for any encodable text, and no crash on the rest
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def base_seed(key: str) -> int | None:
    """The seed of a caller key's sample 0 (sample i gets base + i); None without a key. Distinct
    turns that happen to send the same messages still draw distinct samples, and a replayed request
    draws the same ones. Below 2**30, so base + i stays a non-negative 31-bit int, safe for every server."""
    if not key:
        return None
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:4], "big") >> 2


def sample_runs(indices: list[int]) -> list[list[int]]:
    """Consecutive runs of sorted indices: [0, 1, 2, 5, 6] -> [[0, 1, 2], [5, 6]]."""
    return [[i for _, i in run] for _, run in itertools.groupby(enumerate(indices), lambda p: p[1] - p[0])]


# Free bytes below which a SQLite "disk I/O error" is taken for a full disk (SQLite grows its files
# by pages, a few KiB at a time, and says I/O error when the write-ahead log cannot grow).
NEARLY_FULL = 1 << 20


class RequestCache:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        with self._full_disk():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # durable across a process crash
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS samples (key TEXT PRIMARY KEY, value TEXT NOT NULL, created REAL NOT NULL)"
            )

    @contextlib.contextmanager
    def _full_disk(self) -> Iterator[None]:
        """Within the block, SQLite (or the OS) failing for want of space raises `OutOfSpace`."""
        from synthgen.errors import OutOfSpace, is_out_of_space

        try:
            yield
        except Exception as exc:
            if is_out_of_space(exc):
                raise OutOfSpace(self.path, exc) from None
            if isinstance(exc, sqlite3.OperationalError) and "disk i/o error" in str(exc).lower():
                free = NEARLY_FULL  # (unknown: not taken for a full disk)
                with contextlib.suppress(OSError):
                    free = shutil.disk_usage(self.path.parent).free
                if free < NEARLY_FULL:
                    raise OutOfSpace(self.path, f"disk I/O error with {free} bytes free") from None
            raise

    def get_many(self, keys: list[str]) -> dict[str, dict]:
        found: dict[str, dict] = {}
        for start in range(0, len(keys), 500):  # stay under SQLite's bound-parameter limit
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            with self._lock, self._full_disk():
                rows = self._db.execute(f"SELECT key, value FROM samples WHERE key IN ({marks})", chunk).fetchall()
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, items: list[tuple[str, dict]]) -> None:
        """Store one answer's samples in one commit: a kill leaves all or none, so a re-run sends the
        very request the run sent (token counts are per request). The first answer stored stays."""
        now = time.time()
        # ASCII JSON: any str, even a lone surrogate, is stored without error
        rows = [(key, json.dumps(value), now) for key, value in items]
        with self._lock, self._full_disk():
            try:
                self._db.execute("BEGIN")  # the connection autocommits each statement otherwise
                self._db.executemany("INSERT OR IGNORE INTO samples (key, value, created) VALUES (?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # after an I/O error SQLite has rolled back already
                    with contextlib.suppress(sqlite3.OperationalError):
                        self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()
