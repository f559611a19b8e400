"""Fixtures for the environment tests: settings, and a pool that fails (the real pool is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from synthgen.envs.settings import EnvSettings, ProgressionSettings
from synthgen.sandbox.settings import SandboxSettings


@pytest.fixture
def env_settings() -> EnvSettings:
    return EnvSettings()


@pytest.fixture
def sandbox() -> SandboxSettings:
    return SandboxSettings(timeout_s=2.0)


@pytest.fixture
def progression() -> ProgressionSettings:
    return ProgressionSettings()


class InfraPool:
    """Answers every job with `infra` verdicts, as a broken sandbox would."""

    def _result(self, job):
        from synthgen.sandbox import CallVerdict, JobResult, Status

        return JobResult("test", [CallVerdict(Status.INFRA, error="zygote died") for _ in job.calls])

    async def run(self, job):
        return self._result(job)

    async def run_twice_for_determinism(self, job):
        return self._result(job), self._result(job)


@pytest.fixture
def infra_pool() -> InfraPool:
    return InfraPool()
