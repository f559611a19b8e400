#!/usr/bin/env bash
# What the sandbox (synthgen/sandbox) needs on a Debian/Ubuntu CI machine: bubblewrap, the
# system Python 3 that runs inside it (/usr/bin/python3; the zygote must be readable by uid 65534),
# and Debian's numpy for it: the sandbox binds this environment's numpy read-only when uid 65534
# can read it and its Python version matches, and falls back to the interpreter's own copy
# (synthgen/sandbox/isolation.py), so contest solutions can import numpy on any machine.
#
#   bash .ci/sandbox-setup.sh
#
# Idempotent: when both are already there it only checks and exits (no apt-get at all).
# Needs root to install; without root it reports what is missing and exits 0 (the sandbox then
# is unavailable and the sandbox tests skip with a reason).
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ -x /usr/bin/python3 ] || missing+=(python3)
[ -d /usr/lib/python3/dist-packages/numpy ] || missing+=(python3-numpy)

if [ ${#missing[@]} -eq 0 ]; then
    echo "sandbox-setup: bubblewrap $(bwrap --version 2>/dev/null | awk '{print $2}'), /usr/bin/python3 and its numpy present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "sandbox-setup: missing ${missing[*]} and not root: cannot install (sandbox tests may skip)"
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "sandbox-setup: installed ${missing[*]}"
