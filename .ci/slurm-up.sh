#!/usr/bin/env bash
# Bring up a one-node Slurm cluster on localhost, without systemd, for the Slurm tests.
#
#   bash .ci/slurm-up.sh      # install (if needed), start munged, slurmctld, slurmd; wait for the node
#   bash .ci/slurm-down.sh    # stop them again by their pid files
#
# Idempotent: when the controller answers and the node is usable, it does nothing. Debian's
# slurm-wlm 22.05 + munge, without systemd. What it relies on, as measured on Debian 12:
# /run/munge must be made by hand, proctrack/linuxproc + task/none (no cgroup setup needed), no
# accounting, batch_sched_delay=0 and MinJobAge=5 so `sbatch --wait` returns within ~2 s, and a
# restarted controller reports the node IDLE from saved state before the new slurmd registers,
# so we wait for a SlurmdStartTime at or after our own start.
set -euo pipefail

CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
STATE_DIR=/var/spool/slurmctld
SPOOL_DIR=/var/spool/slurmd
LOG_DIR=/var/log/slurm
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
MUNGE_PID=/run/munge/munged.pid
NODE=localhost
T0=$(date +%s.%N)

say() { echo "slurm-up: $*"; }
# A daemon killed without being reaped stays a zombie, and `kill -0` still succeeds on it: read
# its state instead (CI ends what a session left running, so stale pid files are normal here).
alive() {
    local pid state
    [ -f "$1" ] || return 1
    pid=$(cat "$1" 2>/dev/null)
    [ -n "$pid" ] && [ -r "/proc/$pid/status" ] || return 1
    state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}
munge_ok() { timeout 5 munge -n 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; }

node_usable() {
    local state
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n1) || return 1
    case "$state" in idle|mixed|allocated|completing) return 0 ;; *) return 1 ;; esac
}

if command -v slurmctld >/dev/null && alive "$CTLD_PID" && alive "$SLURMD_PID" \
        && scontrol ping 2>/dev/null | grep -q UP && node_usable; then
    say "already up ($(sinfo -h -o '%P %T %D' | head -n1)); nothing to do"
    exit 0
fi

# --- packages -------------------------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
        || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurmctld slurmd slurm-client munge"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

# --- munge ----------------------------------------------------------------------------------
mkdir -p /run/munge /var/log/munge /var/lib/munge /etc/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    say "creating a munge key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! alive "$MUNGE_PID"; then
    rm -f "$MUNGE_PID" /run/munge/munge.socket.2*
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 50); do munge_ok && break; sleep 0.1; done
munge_ok || { say "munge does not work; see /var/log/munge/munged.log"; exit 1; }

# --- slurm.conf -----------------------------------------------------------------------------
# CPUs and memory as slurmd sees them; RealMemory a little below so the node is not drained.
read -r CPUS MEM < <(slurmd -C | awk '/^NodeName/ {
    for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    print v["CPUs"], int(v["RealMemory"] * 0.95) }')
mkdir -p "$CONF_DIR" "$STATE_DIR" "$SPOOL_DIR" "$LOG_DIR"
cat >"$CONF" <<EOF
# Written by .ci/slurm-up.sh: a one-node test cluster on localhost. Not for production.
ClusterName=synthgen-ci
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
MinJobAge=5
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
KillWait=10
NodeName=$NODE CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF

# --- daemons --------------------------------------------------------------------------------
if ! alive "$CTLD_PID"; then
    slurmctld -i
fi
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
scontrol ping | grep -q UP || { say "slurmctld did not answer; see $LOG_DIR/slurmctld.log"; exit 1; }

START=$(date +%s)
if alive "$SLURMD_PID"; then
    # A second slurmd would kill the running one through the pid file: restart it ourselves.
    kill "$(cat "$SLURMD_PID")" 2>/dev/null || true
    for _ in $(seq 50); do alive "$SLURMD_PID" || break; sleep 0.1; done
fi
slurmd -N "$NODE"

registered=""
for _ in $(seq 300); do
    line=$(scontrol show node "$NODE" 2>/dev/null || true)
    started=$(sed -n 's/.*SlurmdStartTime=\([0-9T:-]*\).*/\1/p' <<<"$line" | head -n1)
    if [ -n "$started" ] && [ "$started" != "None" ]; then
        started_s=$(date -d "$started" +%s 2>/dev/null || echo 0)
        if [ "$started_s" -ge "$START" ]; then registered=yes; break; fi
    fi
    sleep 0.1
done
[ -n "$registered" ] || { say "slurmd did not register; see $LOG_DIR/slurmd.log"; exit 1; }
if ! node_usable; then
    scontrol update NodeName="$NODE" State=RESUME 2>/dev/null || true
fi
for _ in $(seq 100); do node_usable && break; sleep 0.1; done
node_usable || { say "node $NODE is not usable: $(sinfo -h -n "$NODE" -o '%T %E')"; exit 1; }

say "up in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: $(sinfo -h -o '%P %T %D node(s)' | head -n1), $CPUS CPUs, ${MEM} MiB"
