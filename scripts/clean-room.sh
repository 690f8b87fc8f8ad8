#!/usr/bin/env bash
# Runs README.md as a newcomer would, in a minimal Debian 12 root (root only):
#   1. mmdebstrap builds a minbase bookworm root from the mirror in this machine's apt sources;
#   2. the host's CUDA toolkit is bind-mounted read-only at /usr/local/cuda (the README's
#      prerequisite; NVIDIA's, not Debian's); a `git archive` of HEAD is unpacked at /root/kevolve,
#      so neither an untracked file nor a package already on the host can help;
#   3. the README's set-up-and-run command runs there, headless: it must end in kevolve-cli's
#      "no CUDA device" with exit code 4; then the README's test command must pass;
#   4. `cpack -G DEB` packages install with apt (dependencies from their metadata) and
#      `kevolve-cli tasks`, `kevolve-harness probe` and `kevolve --version` run from /usr/bin.
# The two commands are read from README.md itself (the first ```sh block under "## Set up" and
# under "## Run the tests"), so CI runs exactly what the README says.
#
#   scripts/clean-room.sh [--keep] [--root DIR] [--then CMD]...
#     --keep        leave the root (unmounted) for inspection instead of deleting it
#     --root DIR    build the root in DIR (must not exist; default: a new folder in /var/tmp)
#     --then CMD    after the checks, run CMD in /root/kevolve inside the root (bash -c), e.g.
#                   further CI stages on the same build: --then 'scripts/ci-cluster.sh build/release'
# Every mount is undone on every exit path; where mmdebstrap or mounting is impossible the script
# stops with the reason. Nothing runs on the host instead.
set -euo pipefail

die() {
    echo "clean-room: $*" >&2
    exit 2
}

keep=0
root_arg=""
then_cmds=()
while [ "$#" -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    --root)
        [ "$#" -ge 2 ] || die "--root needs a folder"
        root_arg=$2
        shift
        ;;
    --then)
        [ "$#" -ge 2 ] || die "--then needs a command"
        then_cmds+=("$2")
        shift
        ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

repo=$(cd "$(dirname "$0")/.." && pwd)
cuda=/usr/local/cuda
suite=bookworm

# --- Preconditions: each names what is missing; none falls back to the host. ---
[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap --mode=root, chroot and bind mounts)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (apt-get install mmdebstrap)"
command -v git >/dev/null || die "git is not installed"
git -C "$repo" rev-parse --verify -q HEAD >/dev/null || die "$repo is not a git checkout with a commit"
[ -x "$cuda/bin/nvcc" ] || die "no CUDA toolkit at $cuda (the README's prerequisite; it is bind-mounted into the root)"

# --- Timing, mounts and the trap. ---
t_start=$(date +%s)
timings=()
phase_start=0
phase_name=""
phase() {
    phase_end
    phase_name=$1
    phase_start=$(date +%s)
    echo
    echo "== clean-room [$(date -u +%H:%M:%S)]: $phase_name"
}
phase_end() {
    if [ -n "$phase_name" ]; then
        local s=$(($(date +%s) - phase_start))
        timings+=("$(printf '%-44s %4dm%02ds' "$phase_name" $((s / 60)) $((s % 60)))")
        phase_name=""
    fi
}
summary() {
    phase_end
    local s=$(($(date +%s) - t_start))
    echo
    echo "== clean-room timings"
    local t
    for t in "${timings[@]}"; do echo "  $t"; done
    printf '  %-44s %4dm%02ds\n' "total" $((s / 60)) $((s % 60))
}

mounts=()
sources_tmp=""
root=""
mmdebstrap_pid=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    set +e
    phase_end # the last phase's time, without the clean-up's
    # mmdebstrap interrupted: its own handler undoes the mounts it made.
    if [ -n "$mmdebstrap_pid" ]; then
        kill -TERM "$mmdebstrap_pid" 2>/dev/null
        wait "$mmdebstrap_pid" 2>/dev/null
    fi
    # Processes this run started inside the root (a test still running when a step failed).
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
    done
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount -R "${mounts[$i]}" 2>/dev/null || umount -R -l "${mounts[$i]}" ||
            echo "clean-room: could not unmount ${mounts[$i]}" >&2
    done
    # Anything still mounted below the root (left by an interrupted mmdebstrap), deepest first.
    if [ -n "$root" ]; then
        findmnt -rn -o TARGET | grep "^$root/" | sort -r | while read -r m; do
            umount "$m" 2>/dev/null || umount -l "$m"
        done
    fi
    [ -z "$sources_tmp" ] || rm -rf "$sources_tmp"
    if [ -n "$root" ] && [ -d "$root" ]; then
        if findmnt -rn -o TARGET | grep -q "^$root\(/\|$\)"; then
            echo "clean-room: mounts remain under $root; not deleting it:" >&2
            findmnt -rn -o TARGET | grep "^$root\(/\|$\)" >&2
            [ "$rc" = 0 ] && rc=1
        elif [ "$keep" = 1 ]; then
            echo "clean-room: the root is kept in $root"
        else
            rm -rf --one-file-system "$root"
        fi
    fi
    summary
    if [ "$rc" = 0 ]; then echo "clean-room: PASSED"; else echo "clean-room: FAILED (exit $rc)" >&2; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The Debian 12 entries of this machine's apt sources (deb822 stanzas and one-line entries);
# the mirror is never written into the repository.
sources_tmp=$(mktemp -d /tmp/kevolve-clean-room-sources.XXXXXX)
shopt -s nullglob
sources_args=()
for f in /etc/apt/sources.list.d/*.sources; do
    awk -v suite="$suite" '
        function flush() { if (ours && !other && stanza != "") printf "%s\n", stanza; stanza = ""; ours = 0; other = 0 }
        /^[ \t]*#/ { next }
        /^[ \t]*$/ { flush(); next }
        { stanza = stanza $0 "\n" }
        tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i ~ ("^" suite "(-|$)")) ours = 1 }
        tolower($1) == "types:" { t = 0; for (i = 2; i <= NF; i++) if ($i == "deb") t = 1; if (!t) other = 1 }
        tolower($1) == "enabled:" && tolower($2) == "no" { other = 1 }
        END { flush() }' "$f" >>"$sources_tmp/host.sources"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && awk -v suite="$suite" '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ ("^" suite "(-|$)")) { print; next } }' \
        "$f" >>"$sources_tmp/host.list"
done
shopt -u nullglob
for f in "$sources_tmp/host.sources" "$sources_tmp/host.list"; do
    [ -s "$f" ] && sources_args+=("$f")
done
[ "${#sources_args[@]}" -gt 0 ] || die "no Debian 12 ($suite) 'deb' entry in /etc/apt/sources.list{,.d/*}: cannot pick a mirror"

# $root is set only once it is this run's own folder: the trap deletes it.
if [ -z "$root_arg" ]; then
    root_arg=$(mktemp -u /var/tmp/kevolve-clean-room.XXXXXX)
fi
[ ! -e "$root_arg" ] || die "--root $root_arg already exists"
mkdir "$root_arg" || die "cannot create $root_arg"
root=$(realpath "$root_arg")

mount_in() { # mount_in TARGET MOUNT-ARGS...: mounts at $root/TARGET and records it for the trap
    local target=$root$1
    shift
    mkdir -p "$target"
    mount "$@" "$target" || die "cannot mount $target (mount $*): the clean room needs a root with CAP_SYS_ADMIN (a privileged container or a VM)"
    mounts+=("$target")
}

in_root() { # in_root CMD: bash -c CMD in /root/kevolve as a newcomer's login shell would see it
    # In the background and waited for, so that a signal reaches the trap at once (bash defers
    # traps until a foreground child ends); the trap then kills what still runs in the root.
    chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb \
        LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "cd /root/kevolve && $1" &
    local pid=$!
    wait "$pid"
}

# The first ```sh block under the README heading that starts with $1.
readme_command() {
    awk -v heading="$1" '
        index($0, heading) == 1 { under = 1; next }
        under && /^## / { exit }
        under && /^```sh/ { inblock = 1; next }
        inblock && /^```/ { exit }
        inblock { print }' "$repo/README.md"
}

setup_cmd=$(readme_command "## Set up")
test_cmd=$(readme_command "## Run the tests")
[ -n "$setup_cmd" ] || die "README.md has no \`\`\`sh block under '## Set up'"
[ -n "$test_cmd" ] || die "README.md has no \`\`\`sh block under '## Run the tests'"

# --- 1. The root. ---
phase "mmdebstrap: minimal Debian 12 root"
echo "root: $root; sources: $(cat "${sources_args[@]}" | grep -E '^(URIs:|deb )' | tr '\n' ' ')"
rc=0
mmdebstrap --mode=root --variant=minbase --format=directory "$suite" "$root" "${sources_args[@]}" &
mmdebstrap_pid=$!
wait "$mmdebstrap_pid" || rc=$?
mmdebstrap_pid=""
[ "$rc" = 0 ] || die "mmdebstrap could not build the Debian 12 root in $root (exit $rc; its messages are above)"

phase "mounts and the repository (git archive HEAD)"
mount_in /proc -t proc proc
mount_in /sys -t sysfs sysfs
# The host's cgroup hierarchy (v1 or v2, as the host has it): slurmd (the cluster tests that run
# here through --then) refuses to start without it.
mount_in /sys/fs/cgroup --rbind /sys/fs/cgroup
mount_in /dev --bind /dev
mount_in /dev/pts --bind /dev/pts
mount_in /dev/shm -t tmpfs tmpfs
mount_in /usr/local/cuda --bind "$(realpath "$cuda")"
mount -o remount,bind,ro "$root/usr/local/cuda" || die "cannot make $root/usr/local/cuda read-only"
touch "$root/usr/local/cuda/.kevolve-clean-room-write-test" 2>/dev/null &&
    die "$root/usr/local/cuda is writable: the read-only bind mount did not take"
mkdir -p "$root/root/kevolve"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$root/root/kevolve"
echo "HEAD $(git -C "$repo" rev-parse --short HEAD): $(git -C "$repo" log -1 --format=%s | cut -c1-100)"

# --- 2. The README's set-up-and-run command, headless. ---
phase "README's set-up command"
echo "\$ $setup_cmd"
rc=0
exec {log_fd}> >(tee "$root/root/setup.log")
tee_pid=$!
in_root "$setup_cmd" >&"$log_fd" 2>&1 || rc=$?
exec {log_fd}>&-
wait "$tee_pid" || true # the log is complete before it is read
# kevolve-cli --help: "4  no CUDA device: the harness found no GPU".
if [ "$rc" != 4 ] || ! grep -q "no CUDA device" "$root/root/setup.log"; then
    echo "clean-room: the set-up command exited $rc; expected kevolve-cli's 'no CUDA device' with exit code 4" >&2
    exit 1
fi
echo "clean-room: the set-up command ended in kevolve-cli's 'no CUDA device', exit code 4, as documented"

# --- 3. The README's test command. ---
phase "README's test command"
echo "\$ $test_cmd"
# A failing test does not stop the package checks: the log then shows every problem at once.
failures=()
in_root "$test_cmd" || failures+=("README's test command (exit $?)")

# --- 4. The packages, installed from their metadata and run from the installed files. ---
phase "cpack -G DEB and apt-get install"
in_root 'rm -rf /root/debs && mkdir /root/debs && cd build/release && cpack -G DEB -B /root/debs >/dev/null &&
         ls -l /root/debs/*.deb && cd /root/debs &&
         DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ./kevolve_*.deb ./kevolve-harness_*.deb'

phase "installed files: kevolve-cli tasks, kevolve-harness probe, kevolve --version"
# Outside the checkout and with no build tree on the way, so only installed files can answer.
in_root 'cd / && set -e
         for f in kevolve kevolve-cli kevolve-harness; do
             [ "$(command -v $f)" = /usr/bin/$f ] || { echo "$f is not installed in /usr/bin"; exit 1; }
         done
         kevolve-cli tasks
         echo "--- kevolve-harness probe"
         # probe exits 0 with the devices it finds ({"devices": []} here: no GPU in CI).
         kevolve-harness probe | tee /tmp/probe
         grep -q "\"devices\"" /tmp/probe
         echo "--- kevolve --version"
         QT_QPA_PLATFORM=offscreen kevolve --version | tee /tmp/version
         grep -q "^kevolve [0-9]" /tmp/version
         ls /usr/share/kevolve/examples/*/session.json'

i=0
for cmd in "${then_cmds[@]}"; do
    i=$((i + 1))
    phase "--then $i"
    echo "\$ $cmd"
    in_root "$cmd" || failures+=("--then $i: $cmd (exit $?)")
done
if [ "${#failures[@]}" -gt 0 ]; then
    printf 'clean-room: failed: %s\n' "${failures[@]}" >&2
    exit 1
fi
