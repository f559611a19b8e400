"""Test-wide setup: no network hub access, the CLI in-process, scripted servers and a small seeds stage."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def cli(capsys):
    """Run `synthgen ARGS...` in-process; returns (exit code, stdout, stderr)."""
    from synthgen.cli.app import app, run_guarded

    def invoke(*args: str):
        rc = run_guarded(app, [str(a) for a in args])
        out = capsys.readouterr()
        return rc, out.out, out.err

    return invoke


@pytest.fixture
def serve():
    """Start thread-mode scripted servers (echo responder unless given); all stopped at teardown."""
    from synthgen.demo.scripted.launch import start_scripted_server
    from synthgen.demo.scripted.responder import EchoResponder

    handles = []

    def start(responder=None, **kwargs):
        handle = start_scripted_server(responder or EchoResponder(), **kwargs)
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        handle.stop()


@pytest.fixture(scope="session")
def pool():
    """One sandbox pool for the session (tests/sandbox has its own, per isolation level)."""
    from synthgen.sandbox import SandboxPool, SandboxUnavailable

    try:
        p = SandboxPool(workers=2)
    except SandboxUnavailable as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no sandbox isolation available here: {exc}")
    yield p
    p.close()


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """A finished small demo run (seeds -> generate -> filter -> bin -> chain on the scripted server),
    made once per session and shared: copy it (shutil.copytree) before changing anything in it."""
    from rich.console import Console

    from synthgen.demo import run as demo
    from synthgen.demo.settings import DemoSettings

    run_dir = tmp_path_factory.mktemp("demo-run") / "run"
    # Six turns (the demo's default): with five, the scripted bank's only hard problems a chain can
    # start from are ones a no-skill strategy solves, which filter drops as guessable.
    settings = DemoSettings(run_dir=run_dir, seeds=24, turns=6, attempts=8, progress=False)
    demo.run(settings, console=Console(stderr=True, quiet=True))
    return run_dir


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
