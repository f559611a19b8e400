"""The reward outside `synthgen train`: ground truths and completions in, Rewards out, sandboxed.

    from synthgen.interop import scorer
    rewards = scorer.score([truth, truth], [answer, "no idea"])   # [Reward(1.0, "ok"), Reward(0.0, "format")]

Every trainer entry point (verl, TRL, verifiers) goes through `score`. It scores with the
environments' own verifiers (`env.rewards`, the same call generation, `synthgen train` and
`synthgen verify` make) in a sandbox pool that one process shares: started on the first call,
closed at exit, restarted in a forked child (a pool's I/O thread does not survive `fork`, and
verl and Ray fork their workers). Model-written code runs only in that pool, never in the
trainer's process.

A `Reward` has value 1.0 or 0.0, or None with status `infra` when the sandbox failed: never a
wrong answer. What each trainer receives then is its entry point's business (it says which).

The pool's size: `SYNTHGEN_SANDBOX_WORKERS` when set, else the CPU count shared out among the
node's training processes (`LOCAL_WORLD_SIZE`), as `synthgen train` does.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from synthgen.envs.problem import Problem, Reward
from synthgen.interop.records import problem_of

log = logging.getLogger(__name__)

WORKERS_VARIABLE = "SYNTHGEN_SANDBOX_WORKERS"


def trainer_pool(sandbox, workers: int | None = None):
    """A sandbox pool sized for one training process of a node; UserError (one line) if none can start."""
    from synthgen.errors import UserError
    from synthgen.sandbox import SandboxPool, SandboxUnavailable

    if workers is None:
        workers = sandbox.workers or int(os.environ.get(WORKERS_VARIABLE) or 0) or None
    if workers is None:
        workers = max(1, (os.cpu_count() or 1) // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1"))))
    try:
        return SandboxPool.from_settings(sandbox, workers)
    except SandboxUnavailable as exc:
        raise UserError(f"sandbox unavailable: {str(exc).splitlines()[0]}") from None


async def score_problems(
    problems: Sequence[Problem],
    completions: Sequence[str],
    truncated: Sequence[bool],
    pool,
    sandbox,
    env_of: Callable[[str], Any],
) -> list[Reward]:
    """Score completion i against problems[i]; completions of one problem go to its env as one group.

    A verifier that raises (not the student's answer: the verifier or the sandbox broke) gives its
    group's completions status `infra`, value None.
    """
    groups: dict[str, list[int]] = {}
    for i, problem in enumerate(problems):
        # The whole problem, gold outputs included: two rows of one problem id may disagree on them.
        groups.setdefault(repr(problem), []).append(i)

    async def score_group(idx: list[int]) -> list[Reward]:
        problem = problems[idx[0]]
        return await env_of(problem.env).rewards(
            problem, [completions[i] for i in idx], pool, sandbox, truncated=[bool(truncated[i]) for i in idx]
        )

    keys = list(groups)
    results = await asyncio.gather(*(score_group(groups[k]) for k in keys), return_exceptions=True)
    out: list[Reward] = [Reward(None, "infra", "not scored")] * len(problems)
    for key, result in zip(keys, results):
        if isinstance(result, BaseException):
            detail = f"{type(result).__name__}: {result}"
            log.warning(
                "reward: scoring problem %s failed (%s); its completions count as infra",
                problems[groups[key][0]].problem_id,
                detail,
            )
            for i in groups[key]:
                out[i] = Reward(None, "infra", detail)
            continue
        for i, reward in zip(groups[key], result):
            out[i] = reward
    return out


class Scorer:
    """One sandbox pool per process and the environments' verifiers; `synthgen train`'s reward is one too.

    `rewards` is awaited on the caller's event loop (TRL awaits synthgen train's reward on its own);
    `score`, for a caller without one, runs it on a loop thread the scorer starts. What pickles is
    the settings only: a trainer's rollout process starts its own pool.
    """

    def __init__(self, sandbox=None, env_settings=None, workers: int | None = None):
        from synthgen.sandbox.settings import SandboxSettings

        self.sandbox = sandbox or SandboxSettings()
        self.env_settings = env_settings
        self.workers = workers
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._pool = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._envs: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"sandbox": self.sandbox, "env_settings": self.env_settings, "workers": self.workers}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    def _env(self, name: str):
        if name not in self._envs:
            from synthgen.envs import get_env

            self._envs[name] = get_env(name, self.env_settings)
        return self._envs[name]

    def start(self):
        """The pool, started now if need be: where no sandbox isolation works this fails at once, in one line."""
        with self._lock:
            if self._pid != os.getpid():  # first use, or a forked child holding its parent's dead thread
                self._pool, self._loop = None, None
                self._pid = os.getpid()
            if self._pool is None:
                self._pool = trainer_pool(self.sandbox, self.workers)
            return self._pool

    async def rewards(self, problems: Sequence[Problem], completions: Sequence[str], truncated: Sequence[bool]):
        """`score_problems` on this scorer's pool and environments."""
        return await score_problems(problems, completions, truncated, self.start(), self.sandbox, self._env)

    def score(
        self, truths: Sequence[str | dict], completions: Sequence[str], truncated: Sequence[bool] | None = None
    ) -> list[Reward]:
        """Rewards of completions[i] against truths[i] (GroundTruthError for a malformed ground truth)."""
        if len(truths) != len(completions):
            raise ValueError(f"{len(truths)} ground truths for {len(completions)} completions")
        flags = list(truncated) if truncated is not None else [False] * len(completions)
        problems = [problem_of(t) for t in truths]
        self.start()
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="synthgen-scorer", daemon=True).start()
        work = self.rewards(problems, [str(c) for c in completions], flags)
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def close(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                if self._pool is not None:
                    self._pool.close()
                if self._loop is not None:
                    self._loop.call_soon_threadsafe(self._loop.stop)
            self._pool, self._loop, self._pid = None, None, None


_shared: Scorer | None = None
_shared_lock = threading.Lock()


def _close_shared() -> None:
    if _shared is not None:
        _shared.close()


def shared() -> Scorer:
    """This process's scorer (default settings), closed at exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            atexit.register(_close_shared)
            _shared = Scorer()
        return _shared


def score(
    truths: Sequence[str | dict], completions: Sequence[str], truncated: Sequence[bool] | None = None
) -> list[Reward]:
    """`Scorer.score` on this process's shared scorer."""
    return shared().score(truths, completions, truncated)
