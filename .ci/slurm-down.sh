#!/usr/bin/env bash
# Stop the one-node test cluster that .ci/slurm-up.sh started: slurmd, slurmctld, then munged.
#
#   bash .ci/slurm-down.sh
#
# Each daemon is stopped by the pid in its own pid file (never by name), with TERM, then KILL
# after a few seconds. Safe to run when nothing is up.
set -uo pipefail

say() { echo "slurm-down: $*"; }

# A killed process may stay a zombie for a while; kill -0 still succeeds on it, so read its state.
running() {
    local pid=$1 state
    [ -r "/proc/$pid/status" ] || return 1
    state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != "Z" ]
}

stop() {
    local name=$1 pidfile=$2 pid
    if [ ! -f "$pidfile" ]; then say "$name: no pid file"; return; fi
    pid=$(cat "$pidfile" 2>/dev/null)
    if [ -z "$pid" ] || ! running "$pid"; then say "$name: not running"; rm -f "$pidfile"; return; fi
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do running "$pid" || break; sleep 0.1; done
    if running "$pid"; then kill -KILL "$pid" 2>/dev/null; say "$name: killed"; else say "$name: stopped"; fi
    rm -f "$pidfile"
}

# Jobs still running would keep their processes alive after slurmd goes: cancel them first.
if command -v scancel >/dev/null && scontrol ping 2>/dev/null | grep -q UP; then
    scancel --full --quiet --user=root 2>/dev/null || true
fi
stop slurmd /run/slurmd.pid
stop slurmctld /run/slurmctld.pid
stop munged /run/munge/munged.pid
