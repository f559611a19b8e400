"""The local Slurm cluster (.ci/slurm-up.sh) for the tests that submit real jobs; they skip with
the reason when none answers."""

from __future__ import annotations

import pytest

from tests.helpers.slurm import cluster_problem


@pytest.fixture(scope="module")
def cluster():
    problem = cluster_problem()
    if problem:
        pytest.skip(problem)
