# syntax=docker/dockerfile:1
# Images that run every synthgen stage: `docker run IMAGE synthgen --config run.yaml STAGE ...`
#
# Two variants, two build targets of this one file (CI lints both with hadolint and builds `cpu`
# where a Docker engine is available):
#
#   cpu (the default target): a slim Python image for the CPU stages (seeds, generate and chain
#   against a shared server, filter, bin, stats, export, report) and CPU training.
#     docker build -t synthgen:cpu .
#     docker build -t synthgen:cpu-train --build-arg EXTRAS=train,hub .
#
#   gpu: the official vLLM image, which already holds vLLM and its CUDA build of torch, for GPU
#   nodes (generate tasks that start their own `vllm serve`, training with `trl vllm-serve`).
#   Everything the vLLM image installed is held at its version while synthgen's extras go in, so
#   vLLM keeps the torch and transformers it was built with; a conflict fails the build instead
#   of breaking vLLM at run time.
#     docker build -t synthgen:gpu --target gpu .
#     docker build -t synthgen:gpu --target gpu --build-arg VLLM_IMAGE=vllm/vllm-openai:v0.33.0 .
#
# On Slurm, run the jobs inside the image with your site's container runtime, e.g. for Apptainer
# set in the config `slurm.executable: "apptainer exec --nv synthgen.sif synthgen"`, or for
# pyxis add `--container-image=...` to `slurm.extra_sbatch`. The sandbox runs untrusted code
# under bubblewrap, which needs user namespaces inside the container (Docker: run with
# `--security-opt seccomp=unconfined --security-opt apparmor=unconfined` or `--privileged`).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG VLLM_IMAGE=vllm/vllm-openai:v0.33.0

# The sources both variants install, gathered once.
FROM scratch AS source
COPY pyproject.toml README.md /src/
COPY synthgen /src/synthgen
COPY prompts /src/prompts
COPY recipes /src/recipes

# -- gpu: on the official vLLM image ---------------------------------------------------------------
FROM ${VLLM_IMAGE} AS gpu
ARG EXTRAS=train,hub
# The vLLM image is an Ubuntu image whose entry point is the vLLM server; keep its Python, and let
# pip install next to it (PEP 668 refuses outside a venv on newer bases).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    DEBIAN_FRONTEND=noninteractive \
    SYNTHGEN_PROMPTS_DIR=/opt/synthgen/prompts
# bubblewrap: the sandbox's isolation. tini: a PID 1 that forwards SIGTERM, so that a preempted or
# cancelled generate task flushes its rows before it exits. Versions are the distribution's.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/synthgen
COPY --from=source /src ./
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# hadolint ignore=DL3013
RUN python3 -m pip list --format=freeze > /tmp/vllm-image.txt \
    && python3 -m pip install --no-compile -c /tmp/vllm-image.txt ".[${EXTRAS}]" \
    && rm /tmp/vllm-image.txt \
    && synthgen --version \
    && bwrap --version \
    && python3 -c "import torch, vllm; print('torch', torch.__version__, 'vllm', vllm.__version__)"
WORKDIR /data
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["synthgen", "--help"]

# -- cpu: slim Python (the default target, so it comes last) ----------------------------------------
FROM ${PYTHON_IMAGE} AS cpu
# EXTRAS: optional-dependency groups of pyproject.toml (e.g. "train,hub"); EXTRA_PIP: more packages.
ARG EXTRAS=""
ARG EXTRA_PIP=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DEBIAN_FRONTEND=noninteractive \
    SYNTHGEN_PROMPTS_DIR=/opt/synthgen/prompts
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/synthgen
COPY --from=source /src ./
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Versions come from pyproject.toml's ranges (and EXTRA_PIP's, when given).
# hadolint ignore=DL3013
RUN python3 -m pip install --no-compile ".${EXTRAS:+[${EXTRAS}]}" \
    && if [ -n "${EXTRA_PIP}" ]; then read -ra extra <<< "${EXTRA_PIP}" && python3 -m pip install "${extra[@]}"; fi \
    && synthgen --version \
    && bwrap --version
# Outputs go to a mounted volume: docker run -v "$PWD/data:/data" IMAGE synthgen ... --run-dir /data/runs/x
WORKDIR /data
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["synthgen", "--help"]
