"""kill -9 at a chosen LLM cache commit, for the crash tests: no hook in the production cache.

A process started with `kill_env(k)` loads sitecustomize.py from this folder, which wraps
RequestCache.put_many: right after the k-th commit that stored a sample (a commit is one answer,
all its samples), the process sends itself SIGKILL, so a test places a kill -9 at any chosen
commit of a run deterministically. The count is read at each commit, so a launcher started with
this PYTHONPATH can fork runs that each set their own k (or none: then nothing is killed).
"""

from __future__ import annotations

import os
import signal
import weakref
from pathlib import Path

KILL_AFTER_COMMITS_ENV = "SYNTHGEN_TEST_KILL_AFTER_COMMITS"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def kill_path() -> str:
    """The PYTHONPATH that loads the wrapper (and this clone's synthgen), before the existing one."""
    return os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)


def kill_env(k: int) -> dict[str, str]:
    """The environment of a process that dies right after its k-th cache commit."""
    return {**os.environ, "PYTHONPATH": kill_path(), KILL_AFTER_COMMITS_ENV: str(k)}


def install() -> None:
    """Wrap RequestCache.put_many to count this process's commits per cache and die at the k-th."""
    from synthgen.llm.cache import RequestCache

    put_many = RequestCache.put_many
    commits: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def put_many_then_maybe_die(self, items):
        before = self._db.total_changes
        put_many(self, items)
        if self._db.total_changes == before:  # every sample was stored already: no new answer
            return
        commits[self] = commits.get(self, 0) + 1
        if commits[self] == int(os.environ.get(KILL_AFTER_COMMITS_ENV) or 0):
            os.kill(os.getpid(), signal.SIGKILL)

    RequestCache.put_many = put_many_then_maybe_die
