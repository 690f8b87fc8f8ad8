#!/bin/bash
# CI entry of the `cluster` tests (issue 22): kevolve-cli's referee workers through a real Slurm and
# a real sshd on this machine. Installs slurm-wlm, munge and openssh-server from Debian when they
# are missing, starts munged, slurmctld, slurmd (tests/cluster/slurm-up.sh) and sshd
# (tests/cluster/ssh-up.sh), runs `ctest -L cluster` against an existing build folder, and stops
# every daemon whatever happened. Needs root.
#
# usage: scripts/ci-cluster.sh BUILD_DIR      e.g. scripts/ci-cluster.sh build/ci
# Exit status: ctest's; 70 when a daemon did not come up; 2 for a usage error.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}
if [ -z "$build" ] || [ ! -f "$build/CTestTestfile.cmake" ]; then
    echo "usage: scripts/ci-cluster.sh BUILD_DIR (a configured and built tree, e.g. build/ci)" >&2
    exit 2
fi
build=$(cd "$build" && pwd)
for target in app/kevolve-cli tests/integration/fake_harness/kev-fake-harness; do
    if [ ! -x "$build/$target" ]; then
        echo "ci-cluster: $build has no $target; build it first" \
            "(cmake --build $build --target kevolve-cli kev-fake-harness kevolve-harness)" >&2
        exit 2
    fi
done

start=$SECONDS
state=$(mktemp -d /tmp/kevolve-ci-cluster.XXXXXX)
echo "ci-cluster: daemons' state and logs in $state"
"$here/tests/cluster/slurm-up.sh" --state "$state/slurm" \
    "$here/tests/cluster/ssh-up.sh" --state "$state/ssh" \
    ctest --test-dir "$build" -L cluster --output-on-failure --no-tests=error -j 2
rc=$?
echo "ci-cluster: exit $rc after $((SECONDS - start)) s"
exit $rc
