#!/bin/bash
# kevolve-cli's referee workers through a real Slurm and a real ssh (CTest label `cluster`).
#
#   cluster_test.sh CASE CLI FAKE_HARNESS HARNESS
#
# The Slurm cases need the cluster of tests/cluster/slurm-up.sh ($SLURM_CONF), the ssh cases the
# sshd of tests/cluster/ssh-up.sh ($KEVOLVE_SSH_CONFIG); without them a case is skipped (exit 77),
# visibly. scripts/ci-cluster.sh starts both and runs `ctest -L cluster`.
#
# Every wait below is bounded (a case fails, it never hangs) and generous: CI machines are busy,
# and these bounds are not measurements.
set -uo pipefail

case_name=$1 cli=$2 fake=$3 harness=$4
work=$(mktemp -d /tmp/kevolve-cluster-test.XXXXXX)
cli_pid=""
hold_job=""
cleanup() {
    if [ -n "$cli_pid" ] && kill -0 "$cli_pid" 2>/dev/null; then
        # SIGTERM first: kevolve-cli then stops its workers (and their jobs); KILL would orphan them.
        kill -TERM "$cli_pid" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$cli_pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$cli_pid" 2>/dev/null
    fi
    [ -n "$hold_job" ] && scancel "$hold_job" 2>/dev/null
    if [ -n "${SLURM_CONF:-}" ] && command -v squeue >/dev/null; then
        # This case's jobs only: their names start with its tag.
        local names
        names=$(jobs_named)
        [ -n "$names" ] && scancel --name="$names" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "FAILED ($case_name): $*"
    for f in "$work"/out "$work"/err; do
        [ -f "$f" ] && { echo "--- $f"; tail -40 "$f"; }
    done
    exit 1
}
skip() {
    echo "skipped: $*"
    exit 77
}

# Job names of this case: kev-<case>-<n>, so that one case never touches another's jobs.
tag="kev-${case_name}"
jobs_named() {
    squeue -h -o %j 2>/dev/null | grep "^$tag" | sort -u | paste -sd, -
}
my_jobs() { squeue -h -o "%i %j %t" 2>/dev/null | awk -v t="$tag" 'index($2, t) == 1'; }

# wait_for SECONDS COMMAND...: true as soon as COMMAND succeeds, false after SECONDS.
wait_for() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    while [ $SECONDS -lt $deadline ]; do
        "$@" && return 0
        sleep 0.3
    done
    "$@"
}

need_slurm() {
    [ -n "${SLURM_CONF:-}" ] || skip "no Slurm (run through tests/cluster/slurm-up.sh or scripts/ci-cluster.sh)"
    command -v srun >/dev/null || skip "srun is not installed"
    sinfo -h >/dev/null 2>&1 || skip "the Slurm controller of $SLURM_CONF does not answer"
}
need_ssh() {
    [ -n "${KEVOLVE_SSH_CONFIG:-}" ] || skip "no sshd (run through tests/cluster/ssh-up.sh or scripts/ci-cluster.sh)"
    ssh -F "$KEVOLVE_SSH_CONFIG" kev-ssh true 2>/dev/null || skip "cannot log in to kev-ssh"
}

# use_delay MS: the scripted coder's kernels tell kev-fake-harness to answer ok after MS ms (its
# "// fake:" line; docs/engine.md), so that a case can act while an evaluation is in flight.
use_delay() {
    cat >"$work/agents.json" <<EOF
{"sources": ["// fake: ok speedup=0.6 delay_ms=$1\n// iteration {iteration} beam {beam}\n#include <kevolve/abi.h>\nextern \"C\" int kevolve_launch(const KevolveArgs*, cudaStream_t) { return 0; }\n"]}
EOF
    export KEVOLVE_SCRIPTED_AGENTS="$work/agents.json"
}

# run_cli ARGS...: kevolve-cli run in the foreground (bounded), output in $work/out and err.
run_cli() {
    timeout -k 10 300 "$cli" run --task gemm_fp16_fp32_4096 --session "$work/session" "$@" \
        >"$work/out" 2>"$work/err"
    code=$?
    [ $code = 124 ] && fail "kevolve-cli did not finish within 300 s"
}
# start_cli ARGS...: kevolve-cli run in the background.
start_cli() {
    "$cli" run --task gemm_fp16_fp32_4096 --session "$work/session" "$@" \
        >"$work/out" 2>"$work/err" &
    cli_pid=$!
}
# wait_cli SECONDS: its exit code in $code.
wait_cli() {
    local deadline=$((SECONDS + $1))
    while kill -0 "$cli_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.3; done
    kill -0 "$cli_pid" 2>/dev/null && fail "kevolve-cli still runs after $1 s"
    wait "$cli_pid"
    code=$?
    cli_pid=""
}

# Which workers measured the session's steps (index.jsonl's measured_by.worker), sorted.
workers_of_steps() {
    python3 -c '
import json, sys
seen = set()
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        seen.add(json.loads(line).get("measured_by", {}).get("worker", -1))
print(" ".join(str(w) for w in sorted(seen)))' "$work/session/index.jsonl"
}
gpus_of_steps() {
    python3 -c '
import json, sys
seen = set()
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        seen.add(json.loads(line).get("measured_by", {}).get("gpu_uuid", "-"))
print(" ".join(sorted(seen)))' "$work/session/index.jsonl"
}
statuses_of_steps() {
    python3 -c '
import json, sys
print(" ".join(sorted({json.loads(l)["status"] for l in open(sys.argv[1]) if l.strip()})))' \
        "$work/session/index.jsonl"
}

no_jobs_left() { [ -z "$(my_jobs)" ]; }
job_state() { my_jobs | awk -v n="$1" '$2 == n { print $3 }'; }
job_running() { [ "$(job_state "$1")" = R ]; }
job_pending() { [ "$(job_state "$1")" = PD ]; }
err_has() { grep -q -- "$1" "$work/err" 2>/dev/null; }
out_has() { grep -q -- "$1" "$work/out" 2>/dev/null; }

# Holds both GPUs of the node so that a new job waits; its id in $hold_job.
hold_node() {
    hold_job=$(sbatch --parsable -J "$tag-hold" --gres=gpu:2 --output=/dev/null --wrap "sleep 600") || fail "sbatch"
    wait_for 60 job_running "$tag-hold" || fail "the holding job did not start"
}

case "$case_name" in

srun-two-workers)
    # Requests and results through srun's stdio; both workers get work; each step records which
    # worker and GPU measured it; the jobs end with the run.
    need_slurm
    use_delay 300
    run_cli --backend scripted --beam 2 --iterations 2 --plateau 0 --target 0 --json \
        --harness "srun -J $tag-0 --gres=gpu:1 $fake serve --device 0" \
        --harness "srun -J $tag-1 --gres=gpu:1 $fake serve --device 1"
    [ "$code" = 0 ] || fail "exit code $code, expected 0"
    [ "$(statuses_of_steps)" = ok ] || fail "step statuses $(statuses_of_steps), expected ok"
    [ "$(workers_of_steps)" = "0 1" ] || fail "steps measured by workers '$(workers_of_steps)', expected both"
    [ "$(gpus_of_steps)" = "GPU-00000000-fake GPU-00000001-fake" ] ||
        fail "steps measured on GPUs '$(gpus_of_steps)'"
    grep -q '"launcher":"srun -J' "$work/session/index.jsonl" || fail "no launcher in the steps"
    wait_for 60 no_jobs_left || fail "jobs left after the run: $(my_jobs)"
    ;;

srun-real-harness)
    # The real referee through srun: hello, eval and its no_device report cross srun's stdio.
    need_slurm
    run_cli --backend builtin --iterations 1 --harness "srun -J $tag-0 --gres=gpu:1 $harness serve"
    [ "$code" = 4 ] || fail "exit code $code, expected 4 (no CUDA device)"
    err_has "no CUDA device" || fail "no \"no CUDA device\" message"
    [ "$(statuses_of_steps)" = no_device ] || fail "step statuses $(statuses_of_steps)"
    [ "$(workers_of_steps)" = 0 ] || fail "the step does not record its worker"
    wait_for 60 no_jobs_left || fail "jobs left after the run: $(my_jobs)"
    ;;

srun-pending)
    # While the node is held, the worker's job pends and kevolve-cli says so; when the node is
    # free the job starts and the run completes.
    need_slurm
    hold_node
    start_cli --backend scripted --iterations 1 --plateau 0 --target 0 \
        --harness "srun -J $tag-0 --gres=gpu:1 $fake serve"
    wait_for 120 err_has "waiting for an allocation" || fail "no \"waiting for an allocation\""
    job_pending "$tag-0" || fail "the worker's job is not pending: $(my_jobs)"
    kill -0 "$cli_pid" 2>/dev/null || fail "kevolve-cli ended while its job was pending"
    scancel "$hold_job"
    hold_job=""
    wait_cli 180
    [ "$code" = 0 ] || fail "exit code $code, expected 0"
    err_has "allocation granted" || fail "no \"allocation granted\""
    [ "$(statuses_of_steps)" = ok ] || fail "step statuses $(statuses_of_steps)"
    wait_for 60 no_jobs_left || fail "jobs left after the run: $(my_jobs)"
    ;;

srun-interrupt)
    # Ctrl-C (SIGINT) while both workers' jobs run an evaluation: exit 130, and the jobs are
    # cancelled (squeue empty afterwards).
    need_slurm
    use_delay 600000
    start_cli --backend scripted --beam 2 --iterations 1 \
        --harness "srun -J $tag-0 --gres=gpu:1 $fake serve --device 0" \
        --harness "srun -J $tag-1 --gres=gpu:1 $fake serve --device 1"
    wait_for 120 job_running "$tag-0" || fail "job 0 did not start: $(my_jobs)"
    wait_for 120 job_running "$tag-1" || fail "job 1 did not start: $(my_jobs)"
    wait_for 60 out_has ': evaluating' || fail "no evaluation started"
    kill -INT "$cli_pid"
    wait_cli 60
    [ "$code" = 130 ] || fail "exit code $code, expected 130"
    err_has "interrupted" || fail "no \"interrupted\" message"
    wait_for 60 no_jobs_left || fail "jobs left after Ctrl-C: $(my_jobs)"
    ;;

srun-interrupt-pending)
    # Ctrl-C while the worker's job still waits in the queue: the pending job is withdrawn too
    # (srun revokes it on SIGTERM; a SIGKILLed srun would leave it queued).
    need_slurm
    hold_node
    start_cli --backend scripted --iterations 1 --harness "srun -J $tag-0 --gres=gpu:1 $fake serve"
    wait_for 120 err_has "waiting for an allocation" || fail "no \"waiting for an allocation\""
    job_pending "$tag-0" || fail "the worker's job is not pending: $(my_jobs)"
    kill -INT "$cli_pid"
    wait_cli 60
    [ "$code" = 130 ] || fail "exit code $code, expected 130"
    worker_gone() { [ -z "$(job_state "$tag-0")" ]; }
    wait_for 30 worker_gone || fail "the pending job is left after Ctrl-C: $(my_jobs)"
    job_running "$tag-hold" || fail "the holding job was touched"
    ;;

srun-scancel)
    # A worker whose job is cancelled from outside mid-request is restarted (a new job) and the
    # request is retried once: the run ends normally with the step measured.
    need_slurm
    use_delay 8000
    start_cli --backend scripted --iterations 1 --plateau 0 --target 0 \
        --harness "srun -J $tag-0 --gres=gpu:1 $fake serve"
    wait_for 120 job_running "$tag-0" || fail "the job did not start: $(my_jobs)"
    wait_for 60 out_has ': evaluating' || fail "no evaluation started"
    first=$(my_jobs | awk '{ print $1 }')
    scancel "$first" || fail "scancel $first"
    wait_cli 240
    [ "$code" = 0 ] || fail "exit code $code, expected 0"
    err_has "restarting it" || fail "no restart reported"
    [ "$(statuses_of_steps)" = ok ] || fail "step statuses $(statuses_of_steps), expected the retry's ok"
    wait_for 60 no_jobs_left || fail "jobs left after the run: $(my_jobs)"
    ;;

srun-cancelled)
    # A job cancelled before it ever starts, every time it is submitted: the worker is given up
    # and the run fails with exit code 3 and srun's own words.
    need_slurm
    hold_node
    start_cli --backend scripted --iterations 1 --harness "srun -J $tag-0 --gres=gpu:1 $fake serve"
    deadline=$((SECONDS + 180))
    while kill -0 "$cli_pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
        for id in $(my_jobs | awk -v h="$tag-hold" '$2 != h { print $1 }'); do scancel "$id"; done
        sleep 0.5
    done
    wait_cli 30
    [ "$code" = 3 ] || fail "exit code $code, expected 3"
    err_has "never answered" || fail "no \"never answered\" in the message"
    grep -qi "revoked\|cancel" "$work/err" || fail "srun's reason is not in the message"
    ;;

srun-missing)
    # No srun on PATH: exit code 3 and a message naming the launcher.
    dir=$(mktemp -d "$work/bin.XXXXXX")
    timeout -k 10 300 env PATH="$dir" "$cli" run --task gemm_fp16_fp32_4096 --session "$work/session" \
        --backend scripted --iterations 1 --harness "srun --gres=gpu:1 $fake serve" \
        >"$work/out" 2>"$work/err"
    code=$?
    [ "$code" = 3 ] || fail "exit code $code, expected 3"
    err_has 'cannot start it' || fail "no \"cannot start it\""
    err_has '"srun --gres=gpu:1' || fail "the message does not name the launcher"
    ;;

ssh-two-workers)
    need_ssh
    use_delay 300
    run_cli --backend scripted --beam 2 --iterations 2 --plateau 0 --target 0 \
        --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-ssh $fake serve --device 0" \
        --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-ssh $fake serve --device 1"
    [ "$code" = 0 ] || fail "exit code $code, expected 0"
    [ "$(statuses_of_steps)" = ok ] || fail "step statuses $(statuses_of_steps)"
    [ "$(workers_of_steps)" = "0 1" ] || fail "steps measured by workers '$(workers_of_steps)'"
    ;;

ssh-real-harness)
    need_ssh
    run_cli --backend builtin --iterations 1 --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-ssh $harness serve"
    [ "$code" = 4 ] || fail "exit code $code, expected 4 (no CUDA device)"
    err_has "no CUDA device" || fail "no \"no CUDA device\" message"
    [ "$(statuses_of_steps)" = no_device ] || fail "step statuses $(statuses_of_steps)"
    ;;

ssh-interrupt)
    # Ctrl-C ends the remote harnesses too (their session closes; they leave at end of input).
    need_ssh
    use_delay 600000
    marker="$work/interrupt-marker"
    start_cli --backend scripted --beam 2 --iterations 1 \
        --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-ssh $fake serve --device 0 --state $marker" \
        --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-ssh $fake serve --device 1 --state $marker"
    # The remote harnesses, not the local ssh clients whose command lines name them too.
    remote_count() { pgrep -f -- "^$fake serve .*--state $marker" | wc -l; }
    two_remote() { [ "$(remote_count)" = 2 ]; }
    none_remote() { [ "$(remote_count)" = 0 ]; }
    wait_for 60 two_remote || fail "the two remote harnesses did not start"
    wait_for 60 out_has ': evaluating' || fail "no evaluation started"
    kill -INT "$cli_pid"
    wait_cli 60
    [ "$code" = 130 ] || fail "exit code $code, expected 130"
    wait_for 60 none_remote || fail "remote harnesses left after Ctrl-C"
    ;;

ssh-kill)
    # The remote harness killed from outside mid-request: restarted, the request retried once.
    need_ssh
    use_delay 6000
    marker="$work/kill-marker"
    start_cli --backend scripted --iterations 1 --plateau 0 --target 0 \
        --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-ssh $fake serve --state $marker"
    remote_pids() { pgrep -f -- "^$fake serve .*--state $marker"; }
    remote_up() { [ -n "$(remote_pids)" ]; }
    wait_for 60 remote_up || fail "the remote harness did not start"
    wait_for 60 out_has ': evaluating' || fail "no evaluation started"
    kill -KILL $(remote_pids)
    wait_cli 120
    [ "$code" = 0 ] || fail "exit code $code, expected 0"
    err_has "restarting it" || fail "no restart reported"
    [ "$(statuses_of_steps)" = ok ] || fail "step statuses $(statuses_of_steps)"
    ;;

ssh-refused)
    # A host that refuses: exit code 3 and ssh's own words, without hanging.
    need_ssh
    run_cli --backend scripted --iterations 1 --harness "ssh -F $KEVOLVE_SSH_CONFIG kev-refused $fake serve"
    [ "$code" = 3 ] || fail "exit code $code, expected 3"
    err_has "Connection refused" || fail "ssh's reason is not in the message"
    err_has "never answered" || fail "no \"never answered\" in the message"
    ;;

*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
# What kevolve-cli said, for the log (ctest -V).
[ -f "$work/err" ] && tail -n 12 "$work/err"
echo "ok ($case_name)"
