"""Shared sandbox fixtures: one pool per isolation level this machine supports (bwrap first).

Tests that take `pool` run once per available level; `bwrap_pool` is the strongest level only.
Levels that cannot work here are skipped with the reason the probe gave.
"""

from __future__ import annotations

import pytest

from tests.helpers.sandbox import LEVELS, SandboxPool, _pools, get_pool


@pytest.fixture(scope="session", autouse=True)
def _close_pools():
    yield
    for pool in _pools.values():
        if isinstance(pool, SandboxPool):
            pool.close()


@pytest.fixture(params=LEVELS)
def pool(request) -> SandboxPool:
    return get_pool(request.param)


@pytest.fixture
def bwrap_pool() -> SandboxPool:
    return get_pool("bwrap")


@pytest.fixture
def needs_bwrap() -> None:
    """For tests that start their own bwrap pools: skip (with the probe's reason) where it cannot work."""
    get_pool("bwrap")
