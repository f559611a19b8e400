#!/usr/bin/env bash
# System packages the tests need: bubblewrap for the sandbox, and a one-node Slurm on localhost.
# Idempotent and quick when everything is already there. Needs root (apt-get); without root it
# only reports what is missing, and the affected tests skip with a reason.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
  command -v bwrap >/dev/null || echo "system-deps: bubblewrap missing (sandbox tests will use a weaker isolation or skip)"
  exit 0
fi
if [ -x "$here/sandbox-setup.sh" ]; then bash "$here/sandbox-setup.sh"; fi
if [ -x "$here/slurm-up.sh" ] || [ -f "$here/slurm-up.sh" ]; then bash "$here/slurm-up.sh"; fi
