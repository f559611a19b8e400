"""Fixtures for stage tests: a small seeds stage and a scripted server on a free port."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def seeds_run(tmp_path_factory):
    """A run directory whose seeds stage holds 8 standard-library snippets."""
    from synthgen.stages.seeds import run as seeds
    from synthgen.stages.seeds.settings import SeedsSettings

    run_dir = tmp_path_factory.mktemp("seeds-run")
    seeds.run(SeedsSettings(run_dir=run_dir, n=8, seed=7))
    return run_dir


@pytest.fixture
def scripted_server():
    """Start a scripted (not a model) OpenAI-compatible server; yields a factory taking fault kwargs.

    In its own process: its problem bank parses Python with `ast` in its request threads, and
    CPython 3.11's ast module keeps a recursion counter per interpreter, not per thread, so two
    threads parsing at once can fail ("AST constructor recursion depth mismatch")."""
    from synthgen.demo.scripted.launch import start_scripted_server

    handles = []

    def start(**faults):
        handle = start_scripted_server(seed=faults.pop("seed", 0), mode="process", **faults)
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        handle.stop()
