"""Fixtures for the train tests: a tiny offline model and a small binned dataset, built on the spot."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.train import write_binned


@pytest.fixture(scope="session")
def binned_dir(tmp_path_factory) -> Path:
    return write_binned(tmp_path_factory.mktemp("binned"))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    pytest.importorskip("trl")
    from synthgen.train.tiny import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "model")
