#!/bin/bash
# A real one-node Slurm on localhost for the `cluster` tests: installs slurm-wlm and munge from
# Debian when they are missing, writes a configuration into a private state folder (the node
# offers a generic resource gpu:2 standing for two GPUs; nothing under /etc is changed), starts
# munged, slurmctld and slurmd, waits until `sinfo` shows the node idle, runs COMMAND with
# $SLURM_CONF pointing at that configuration, and stops every daemon when it leaves, whatever
# happened (exit, error, Ctrl-C, TERM).
#
# usage: tests/cluster/slurm-up.sh [--state DIR] [COMMAND ARGS...]
#        without COMMAND it holds the cluster up until interrupted.
# Needs root (the daemons and apt-get). Exit status: COMMAND's, or 70 when the cluster did not come up.
set -uo pipefail

state=""
if [ "${1:-}" = "--state" ]; then
    state=$2
    shift 2
fi
[ -n "$state" ] || state=$(mktemp -d /tmp/kevolve-slurm.XXXXXX)
mkdir -p "$state"
state=$(cd "$state" && pwd)

say() { echo "slurm-up: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
    say "needs root (it starts slurmd and munged)"
    exit 70
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null || ! command -v srun >/dev/null; then
    say "installing slurm-wlm and munge"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get install -y --no-install-recommends slurm-wlm munge >"$state/apt.log" 2>&1 ||
        { apt-get update >>"$state/apt.log" 2>&1 &&
            apt-get install -y --no-install-recommends slurm-wlm munge >>"$state/apt.log" 2>&1; }; }; then
        tail -20 "$state/apt.log" >&2
        say "cannot install slurm-wlm and munge"
        exit 70
    fi
fi

node=$(hostname -s)
pids=()

stop_all() {
    local rc=$?
    trap - EXIT INT TERM
    # Jobs first, so that no step outlives its daemons; then the daemons, newest first.
    if [ -f "$state/slurm.conf" ] && pgrep -F "$state/slurmctld.pid" >/dev/null 2>&1; then
        SLURM_CONF="$state/slurm.conf" scancel --full --quiet --user=root >/dev/null 2>&1 || true
    fi
    for pidfile in slurmd.pid slurmctld.pid munged.pid; do
        [ -f "$state/$pidfile" ] || continue
        local pid
        pid=$(cat "$state/$pidfile" 2>/dev/null)
        [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    # Daemons that do not leave within 10 s are killed.
    for _ in $(seq 1 50); do
        local alive=0
        for pidfile in slurmd.pid slurmctld.pid munged.pid; do
            [ -f "$state/$pidfile" ] && kill -0 "$(cat "$state/$pidfile" 2>/dev/null)" 2>/dev/null && alive=1
        done
        [ $alive = 0 ] && break
        sleep 0.2
    done
    for pidfile in slurmd.pid slurmctld.pid munged.pid; do
        [ -f "$state/$pidfile" ] && kill -KILL "$(cat "$state/$pidfile" 2>/dev/null)" 2>/dev/null
    done
    say "stopped (state and logs in $state)"
    exit $rc
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# munge: its own socket, key and pid file in the state folder.
mkdir -p "$state/munge"
chmod 700 "$state/munge"
if [ ! -f "$state/munge/munge.key" ]; then
    dd if=/dev/urandom of="$state/munge/munge.key" bs=1 count=1024 status=none
    chmod 400 "$state/munge/munge.key"
fi
munged --force --socket="$state/munge/munge.socket" --key-file="$state/munge/munge.key" \
    --pid-file="$state/munged.pid" --log-file="$state/munged.log" --seed-file="$state/munge/seed" \
    >"$state/munged.out" 2>&1 || {
    cat "$state/munged.out" "$state/munged.log" >&2 2>/dev/null
    say "munged did not start"
    exit 70
}

# Free ports, so that two clusters (two CI jobs on one machine) never meet.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=16817
while ! port_free $ctld_port || ! port_free $((ctld_port + 1)); do ctld_port=$((ctld_port + 2)); done
slurmd_port=$((ctld_port + 1))

cpus=$(nproc)
memory=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
mkdir -p "$state/ctld" "$state/spool"
cat >"$state/slurm.conf" <<EOF
# Written by tests/cluster/slurm-up.sh: one node, localhost, two GPUs as a generic resource.
ClusterName=kevolve-ci
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2
GresTypes=gpu
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
InactiveLimit=0
KillWait=3
MinJobAge=2
MessageTimeout=10
SlurmdTimeout=60
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
# Slurm drops a GPU without a device file; two empty files stand for /dev/nvidia0 and 1.
mkdir -p "$state/dev"
touch "$state/dev/nvidia0" "$state/dev/nvidia1"
cat >"$state/gres.conf" <<EOF
AutoDetect=off
NodeName=$node Name=gpu File=$state/dev/nvidia[0-1]
EOF
# The packaged plugstack.conf is fine; cgroup.conf is not needed with task/none.
export SLURM_CONF="$state/slurm.conf"

slurmctld -f "$SLURM_CONF" -i >"$state/slurmctld.out" 2>&1 || {
    cat "$state/slurmctld.out" "$state/slurmctld.log" >&2 2>/dev/null
    say "slurmctld did not start"
    exit 70
}
slurmd -f "$SLURM_CONF" -N "$node" >"$state/slurmd.out" 2>&1 || {
    cat "$state/slurmd.out" "$state/slurmd.log" >&2 2>/dev/null
    say "slurmd did not start"
    exit 70
}

# Up when the node is idle (60 s at most: on a busy machine the first registration is slow).
up=0
for _ in $(seq 1 120); do
    if [ "$(sinfo -h -N -n "$node" -o %t 2>/dev/null)" = "idle" ]; then
        up=1
        break
    fi
    sleep 0.5
done
if [ $up = 0 ]; then
    sinfo -N -l >&2 2>&1
    tail -20 "$state/slurmctld.log" "$state/slurmd.log" >&2 2>/dev/null
    say "the node did not become idle"
    exit 70
fi
say "node $node idle with gpu:2, slurmctld on port $ctld_port (SLURM_CONF=$SLURM_CONF)"

if [ $# = 0 ]; then
    say "holding the cluster up; Ctrl-C stops it"
    while true; do sleep 3600 & wait $!; done
fi
"$@"
