"""Helpers the sandbox tests share (imported by conftest.py and the test modules)."""

from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path

import pytest

import synthgen.sandbox
from synthgen.sandbox import Job, SandboxPool, SandboxUnavailable, Status
from synthgen.sandbox.isolation import SANDBOX_MODULES

LEVELS = ("bwrap",)
_pools: dict[str, SandboxPool | str] = {}


def get_pool(level: str) -> SandboxPool:
    if level not in _pools:
        try:
            _pools[level] = SandboxPool(workers=2, isolation=level)
        except SandboxUnavailable as exc:
            _pools[level] = str(exc)
    pool = _pools[level]
    if isinstance(pool, str):
        pytest.skip(f"isolation {level} unavailable: {pool}")
    return pool


def run(pool: SandboxPool, code: str, *calls: str, expected=None, timeout_s: float = 1.0, memory_mb: int = 256):
    """Run one job and check the properties every hostile test shares: isolation reported, the
    host-side sandbox still serves the next job, and no infra verdict."""
    result = pool.run_sync(Job(code, calls, expected, timeout_s=timeout_s, memory_mb=memory_mb))
    assert result.isolation == pool.isolation
    assert not result.infra, result.calls
    assert_serves(pool)
    return result


def assert_serves(pool: SandboxPool) -> None:
    ok = pool.run_sync(Job("def f(x):\n    return x * 2\n", ("f(21)",), timeout_s=5.0))
    assert ok.calls[0].status is Status.OK and ok.calls[0].encoded == "42", ok.calls


def statuses(result) -> list[str]:
    return [c.status.value for c in result.calls]


@contextlib.contextmanager
def zygote_module(name: str):
    """A module of the zygote's folder imported as the zygote imports it (by its bare name, its
    sibling modules beside it); sys.path and sys.modules as they were afterwards."""
    folder = str(Path(synthgen.sandbox.__file__).resolve().parent)
    names = [module.removesuffix(".py") for module in SANDBOX_MODULES]
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(folder)
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
