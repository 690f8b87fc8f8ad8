#!/bin/bash
# A real sshd on 127.0.0.1 for the `cluster` tests: installs openssh-server when it is missing,
# generates a host key and a client key in a private state folder, starts sshd on a free port
# with its own configuration (only that key, no passwords; nothing under /etc or ~/.ssh changes),
# writes an ssh_config with two hosts, runs COMMAND with $KEVOLVE_SSH_CONFIG naming it, and stops
# sshd when it leaves, whatever happened.
#
#   kev-ssh      the sshd started here (BatchMode, the generated key, its own known_hosts)
#   kev-refused  127.0.0.1 on a port where nothing listens: every connection is refused
#
# usage: tests/cluster/ssh-up.sh [--state DIR] [COMMAND ARGS...]
# Needs root. Exit status: COMMAND's, or 70 when sshd did not come up.
set -uo pipefail

state=""
if [ "${1:-}" = "--state" ]; then
    state=$2
    shift 2
fi
[ -n "$state" ] || state=$(mktemp -d /tmp/kevolve-ssh.XXXXXX)
mkdir -p "$state"
state=$(cd "$state" && pwd)
chmod 700 "$state"

say() { echo "ssh-up: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
    say "needs root (sshd)"
    exit 70
fi
if [ ! -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
    say "installing openssh-server"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get install -y --no-install-recommends openssh-server openssh-client >"$state/apt.log" 2>&1 ||
        { apt-get update >>"$state/apt.log" 2>&1 &&
            apt-get install -y --no-install-recommends openssh-server openssh-client >>"$state/apt.log" 2>&1; }; }; then
        tail -20 "$state/apt.log" >&2
        say "cannot install openssh-server"
        exit 70
    fi
fi

stop_all() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -f "$state/sshd.pid" ]; then
        local pid
        pid=$(cat "$state/sshd.pid" 2>/dev/null)
        if [ -n "$pid" ]; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 1 25); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.2
            done
            kill -KILL "$pid" 2>/dev/null
        fi
    fi
    say "stopped (state and log in $state)"
    exit $rc
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A free port: the first one from 22220 that nothing listens on.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port=22220
while ! port_free $port; do port=$((port + 1)); done
# A refused port: one that nothing listens on, and that this sshd will not take.
refused=$((port + 1))
while ! port_free $refused; do refused=$((refused + 1)); done

[ -f "$state/host_ed25519" ] || ssh-keygen -q -t ed25519 -N "" -f "$state/host_ed25519"
[ -f "$state/client_ed25519" ] || ssh-keygen -q -t ed25519 -N "" -f "$state/client_ed25519"
cp "$state/client_ed25519.pub" "$state/authorized_keys"
chmod 600 "$state/authorized_keys"
mkdir -p /run/sshd

cat >"$state/sshd_config" <<EOF
# Written by tests/cluster/ssh-up.sh
ListenAddress 127.0.0.1
Port $port
HostKey $state/host_ed25519
PidFile $state/sshd.pid
AuthorizedKeysFile $state/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel VERBOSE
MaxStartups 100:30:200
MaxSessions 50
AcceptEnv none
EOF
/usr/sbin/sshd -f "$state/sshd_config" -E "$state/sshd.log" || {
    cat "$state/sshd.log" >&2
    say "sshd did not start"
    exit 70
}

cat >"$state/ssh_config" <<EOF
Host kev-ssh
    HostName 127.0.0.1
    Port $port
    User root
Host kev-refused
    HostName 127.0.0.1
    Port $refused
    User root
Host *
    IdentityFile $state/client_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $state/known_hosts
    StrictHostKeyChecking accept-new
    BatchMode yes
    ConnectTimeout 10
    LogLevel ERROR
EOF
export KEVOLVE_SSH_CONFIG="$state/ssh_config"

up=0
for _ in $(seq 1 50); do
    if ssh -F "$KEVOLVE_SSH_CONFIG" kev-ssh true 2>"$state/probe.err"; then
        up=1
        break
    fi
    sleep 0.2
done
if [ $up = 0 ]; then
    cat "$state/probe.err" "$state/sshd.log" >&2
    say "cannot log in through the sshd on port $port"
    exit 70
fi
say "sshd on 127.0.0.1:$port (KEVOLVE_SSH_CONFIG=$KEVOLVE_SSH_CONFIG; hosts kev-ssh, kev-refused)"

if [ $# = 0 ]; then
    say "holding sshd up; Ctrl-C stops it"
    while true; do sleep 3600 & wait $!; done
fi
"$@"
