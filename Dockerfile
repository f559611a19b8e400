# syntax=docker/dockerfile:1
# One image that runs every synthgen stage: `docker run IMAGE synthgen --config run.yaml STAGE ...`
#
# Two ways to build it, chosen by the BASE build argument:
#
#   CPU-only stages (seeds, generate against a shared server, filter, bin, chain, stats, and
#   CPU training with the train extra): a slim Python image, the default.
#     docker build -t synthgen:cpu .
#     docker build -t synthgen:cpu-train --build-arg EXTRAS=train .
#
#   GPU nodes (generate tasks that start their own `vllm serve`, training with `trl vllm-serve`):
#   the official vLLM image, which already holds vLLM and a CUDA build of torch. Do not install the
#   `train` extra there (it pins a CPU torch); add the training libraries with EXTRA_PIP instead:
#     docker build -t synthgen:gpu \
#       --build-arg BASE=vllm/vllm-openai:v0.10.2 \
#       --build-arg EXTRA_PIP="trl>=1.0 accelerate>=1.0 datasets>=3.0" .
#
# On Slurm, run the jobs inside the image with your site's container runtime, e.g. for Apptainer
# set in the config `slurm.executable: "apptainer exec --nv synthgen.sif synthgen"`, or for
# pyxis add `--container-image=...` to `slurm.extra_sbatch`/`srun`. The sandbox runs untrusted
# code under bubblewrap, which needs user namespaces inside the container (Docker: run with
# `--security-opt seccomp=unconfined --security-opt apparmor=unconfined` or `--privileged`).
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}

# EXTRAS: optional-dependency groups of pyproject.toml (e.g. "train"); EXTRA_PIP: more packages.
ARG EXTRAS=""
ARG EXTRA_PIP=""

# The vLLM image is an Ubuntu image whose entry point is the vLLM server; keep its Python but
# let pip install next to it (PEP 668 would refuse outside a venv on newer bases).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_BREAK_SYSTEM_PACKAGES=1 \
    DEBIAN_FRONTEND=noninteractive

# bubblewrap: the sandbox's isolation. tini: a PID 1 that forwards SIGTERM, so that a preempted
# or cancelled generate task flushes its rows before it exits. Not pinned: the two bases are
# different distributions (Debian, Ubuntu) with different package versions.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap tini \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/synthgen
COPY pyproject.toml README.md ./
COPY synthgen ./synthgen
COPY prompts ./prompts
COPY recipes ./recipes
# The prompt templates live beside the package, not in it: tell synthgen where they are.
ENV SYNTHGEN_PROMPTS_DIR=/opt/synthgen/prompts

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
