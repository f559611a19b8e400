"""Fixtures for the online tests: seeds, bank problems in a binned folder, a scripted server with a learning curve."""

from __future__ import annotations

import pytest

from tests.helpers.online import bank_rows, write_bin


@pytest.fixture(scope="session")
def online_run_dir(tmp_path_factory):
    """A run directory with a finished seeds stage (8 stdlib snippets) and bank problems under bin/."""
    from synthgen.stages.seeds import run as seeds
    from synthgen.stages.seeds.settings import SeedsSettings

    run_dir = tmp_path_factory.mktemp("online-run")
    seeds.run(SeedsSettings(run_dir=run_dir, n=8, seed=7))
    write_bin(run_dir, bank_rows())
    return run_dir


@pytest.fixture(scope="session")
def curve_server():
    """A scripted server (not a model) whose student gains 10 levels per 100 policy steps."""
    from synthgen.demo.scripted.launch import start_scripted_server

    handle = start_scripted_server(seed=0, learning_curve=10.0)
    yield handle
    handle.stop()


@pytest.fixture(scope="session")
def tiny_policy(tmp_path_factory):
    pytest.importorskip("trl")
    from synthgen.train.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny-policy") / "model")
