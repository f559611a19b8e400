#!/usr/bin/env bash
# The real trainer libraries the interop tests (tests/interop/) run synthgen's reward entry points
# and curricula under: verl and verifiers, each in a venv of its own, since their pins clash with
# the project's (verl holds its own numpy, ray, tensordict and hydra; verifiers its own openai and
# datasets). TRL needs none: it is the train extra, in the project's venv.
# The venvs live beside the test servers' (.ci/vllm-setup.sh), in $SYNTHGEN_TEST_SERVERS (default
# ~/.cache/synthgen/test-servers), shared by every clone on the machine. They hold the library and
# synthgen's own dependencies (read from pyproject.toml), not synthgen itself: the tests put the
# clone under test on PYTHONPATH, so that one shared venv never points at another clone's code.
# Idempotent: a venv whose stamp matches the pins and synthgen's dependencies is left alone. A
# failed install only warns: the tests that need it skip with the reason. pip's output goes to
# VENV.install.log.
set -uo pipefail
setup=trainers-setup
# shellcheck source=.ci/venvs.sh
source "$(dirname "$0")/venvs.sh"
VERL_PIN="verl==0.7.1"
VERIFIERS_PIN="verifiers==0.3.1"

# synthgen's runtime dependencies, one per line, so that the venvs can import the clone's code.
if ! deps=$(python3 - "$root/pyproject.toml" <<'EOF'
import sys
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib
with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
EOF
); then
  echo "trainers-setup: cannot read synthgen's dependencies from pyproject.toml; the interop tests will skip"
  exit 0
fi
mapfile -t dep_args <<<"$deps"
deps_sum=$(printf '%s' "$deps" | sha256sum | cut -c1-12)

# verl 0.7 holds numpy below 2; pyarrow 22 and later need numpy 2 (and the newest datasets needs them).
VERL_EXTRA="pyarrow>=19,<22"
make_venv "$venvs/verl" "$VERL_PIN $VERL_EXTRA deps:$deps_sum" "$VERL_PIN" "$VERL_EXTRA" "torch" "${dep_args[@]}" \
  || echo "trainers-setup: $VERL_PIN could not be installed; the verl interop tests will skip"
make_venv "$venvs/verifiers" "$VERIFIERS_PIN deps:$deps_sum" "$VERIFIERS_PIN" "${dep_args[@]}" \
  || echo "trainers-setup: $VERIFIERS_PIN could not be installed; the verifiers interop tests will skip"
exit 0
