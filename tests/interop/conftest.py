"""Fixtures for the interop tests: a run of every environment's example problem, its exports, the verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.interop import ENVS, EXAMPLES, RIGHT, WRONG, example_rows, export, verify, write_bin_run
from tests.helpers.train import deduction_rows


@pytest.fixture(scope="session")
def interop_rows(pool) -> list[dict]:
    """The five example problems (validated) and four deduction problems per bin: 17 rows, three bins."""
    return example_rows(pool) + [r for b in ("easy", "medium", "hard") for r in deduction_rows(b)]


@pytest.fixture(scope="session")
def interop_run(tmp_path_factory, interop_rows) -> Path:
    return write_bin_run(tmp_path_factory.mktemp("interop") / "run", interop_rows)


@pytest.fixture(scope="session")
def exports(tmp_path_factory, interop_run) -> dict[str, Path]:
    """`synthgen export --format verl|trl|verifiers` of the run, through the command line."""
    root = tmp_path_factory.mktemp("exports")
    return {fmt: export(interop_run, root / fmt, fmt) for fmt in ("verl", "trl", "verifiers")}


@pytest.fixture(scope="session")
def verify_verdicts(tmp_path_factory) -> dict[str, tuple[float, float]]:
    """env -> (the reward `synthgen verify` gives the right answer, the one it gives the wrong one)."""
    tmp = tmp_path_factory.mktemp("verify")
    return {
        env: (
            verify(EXAMPLES / env / "problem.json", RIGHT[env], tmp),
            verify(EXAMPLES / env / "problem.json", WRONG[env], tmp),
        )
        for env in ENVS
    }
