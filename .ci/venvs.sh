# Sourced by .ci/vllm-setup.sh and .ci/trainers-setup.sh: the shared folder of the test venvs, its
# lock, and make_venv. Set `setup` (the name that prefixes each message) before sourcing.
# shellcheck shell=bash
: "${setup:=setup}"  # the caller names itself; a bare source still prints a prefix
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
constraints="$root/.ci/constraints.txt"
# Outside the clone, so that every clone and CI run on a machine shares one install.
venvs=${SYNTHGEN_TEST_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/synthgen/test-servers}
mkdir -p "$venvs"
exec 9>"$venvs/.lock"
flock 9  # one install at a time on this machine (two clones testing at once, or both scripts)
export PIP_DISABLE_PIP_VERSION_CHECK=1

# make_venv DIR STAMP PIP_ARGS...: (re)create DIR with PIP_ARGS unless DIR/.synthgen-stamp says STAMP.
# pip's output goes to DIR.install.log; a failure prints its last lines and returns 1.
make_venv() {
  local dir=$1 stamp=$2; shift 2
  if [ -f "$dir/.synthgen-stamp" ] && [ "$(cat "$dir/.synthgen-stamp")" = "$stamp" ]; then
    return 0
  fi
  echo "$setup: installing $stamp into $dir (minutes the first time; log: $dir.install.log)"
  local started=$SECONDS
  rm -rf "$dir"
  if ! { python3 -m venv "$dir" && "$dir/bin/pip" install -c "$constraints" "$@"; } >"$dir.install.log" 2>&1; then
    tail -n 5 "$dir.install.log"
    return 1
  fi
  # torchvision, torchaudio and torchcodec come along but fail to load against this torch
  # ("operator torchvision::nms does not exist" when transformers imports its image utilities);
  # text models need none of them.
  "$dir/bin/pip" uninstall -y torchvision torchaudio torchcodec >>"$dir.install.log" 2>&1 || true
  echo "$stamp" >"$dir/.synthgen-stamp"
  echo "$setup: $dir ready in $((SECONDS - started)) s ($(du -sh "$dir" | cut -f1))"
}
