#!/usr/bin/env bash
# slurm_cluster_test.sh — headlab-cli against a real Slurm: a single-node cluster on loopback.
#
#   tests/slurm/slurm_cluster_test.sh HEADLAB_CLI
#
# Installs Debian's slurm-wlm and munge where missing, starts munged, slurmctld and slurmd on
# 127.0.0.1 (ports 6817, 6818) with a configuration of its own in a temporary directory, then:
#   1. submits a 6-run CPU sweep as an array of 3 (`headlab-cli slurm`), waits, merges, and checks
#      that the merged session equals the same sweep run locally, number for number;
#   2. submits a longer copy, cancels one array element mid-run with `scancel`, submits again,
#      merges, and checks again: the cancelled task's runs resumed from their checkpoints;
#   3. submits a boundary search (two configurations, budget 11) whose rounds Slurm chains itself,
#      and checks that its summary equals the same search run locally.
# Every daemon it started is stopped by PID, whatever happens. With HEADLAB_SLURM_SCREENSHOT=FILE.png
# (and HEADLAB_APP, the desktop app) it then submits a larger sweep and takes a picture of the app
# watching it (docs/CLUSTER.md's). Exit 77 (ctest: skipped) only when
# it is not root and Slurm is not installed; CI is root on Debian, so there it runs.
set -euo pipefail

CLI="$(realpath "${1:?usage: slurm_cluster_test.sh HEADLAB_CLI}")"
say() { printf 'slurm-test: %s\n' "$*"; }
die() { printf 'slurm-test: FAILED: %s\n' "$*" >&2; exit 1; }

if [[ $EUID -ne 0 ]]; then
    say "SKIPPED: needs root to install and run slurmctld, slurmd and munged (CI runs it as root)"
    exit 77
fi
missing=()
for pair in slurmctld:slurm-wlm slurmd:slurm-wlm munged:munge; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
        { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null; } ||
        die "cannot install slurm-wlm and munge"
fi
for port in 6817 6818; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then die "port $port is in use (another Slurm?)"; fi
done

T="$(mktemp -d /tmp/headlab-slurm.XXXXXX)"
chmod 755 "$T"
PIDS=()
cleanup() {
    local status=$?
    for pidfile in "$T/slurmd.pid" "$T/slurmctld.pid" "$T/munge/munged.pid"; do
        [[ -s "$pidfile" ]] || continue
        local pid; pid="$(cat "$pidfile")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        say "stopped $(basename "$pidfile" .pid) (PID $pid)"
    done
    if [[ $status -ne 0 ]]; then
        for log in "$T"/slurmctld.log "$T"/slurmd.log "$T"/*/s.results/slurm/*.log; do
            [[ -f "$log" ]] && { echo "--- $log (last 30 lines)"; tail -30 "$log"; }
        done
    fi
    rm -rf "$T"
}
trap cleanup EXIT

# --- munge: its own daemon and socket, with the key the package made ------------------------------
[[ -f /etc/munge/munge.key ]] || { mungekey --create >/dev/null 2>&1 || /usr/sbin/mungekey --create; }
install -d -o munge -g munge -m 0755 "$T/munge"
runuser -u munge -- munged --socket="$T/munge/munge.socket" --pid-file="$T/munge/munged.pid" \
    --seed-file="$T/munge/munged.seed" --log-file="$T/munge/munged.log" || die "munged did not start"
for _ in $(seq 50); do [[ -S "$T/munge/munge.socket" ]] && break; sleep 0.1; done
say "munged running (PID $(cat "$T/munge/munged.pid"))"

# --- Slurm: one node, one partition with the machine's CPUs ------------------------------------------
NODE="$(hostname -s)"
CPUS="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" # the machine's, not one test's share
mkdir -p "$T/state" "$T/spool"
cat >"$T/slurm.conf" <<CONF
ClusterName=headlab-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket,cred_expire=5
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=bf_interval=1,batch_sched_delay=0,sched_interval=1
MpiDefault=none
ReturnToService=2
KillWait=30
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN
PartitionName=headlab Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -c || die "slurmctld did not start (see $T/slurmctld.log)"
slurmd -c || die "slurmd did not start"
for _ in $(seq 100); do
    state="$(sinfo -h -N -o '%T' 2>/dev/null | head -1)"
    [[ "$state" == idle* ]] && break
    sleep 0.2
done
[[ "$state" == idle* ]] || die "the node did not come up (sinfo says '${state:-nothing}')"
say "slurmctld (PID $(cat "$T/slurmctld.pid")) and slurmd (PID $(cat "$T/slurmd.pid")) up: node $NODE, $CPUS CPUs, $(sinfo --version)"

# --- the sweep: 6 runs = 3 widths x 2 seeds, so 3 ensembles of 2, one per array task ------------------
session() { # STEPS
    cat <<YAML
schema_version: 2
name: slurm-test
checkpoints: {every: 500, keep: 2}
experiment:
  task: {kind: addition, train_pairs: 256, test_pairs: 16}
  model: {d_model: 8, heads: 2, layers: 1}
  phases:
    - {name: answer, objective: answer, steps: $1, batch_size: 8}
  lr: 3.0e-3
  eval_every: 100
  log_every: 50
  device: cpu
sweep:
  d_model: [8, 12, 16]
  seed: [0, 1]
YAML
}

wait_for_job() { # JOB TIMEOUT_S
    for _ in $(seq $(( $2 * 5 ))); do
        [[ -z "$(squeue -h -j "$1" 2>/dev/null)" ]] && return 0
        sleep 0.2
    done
    squeue -j "$1" || true
    die "job $1 did not finish within $2 s"
}

submit() { # SESSION -> job id
    local out
    out="$("$CLI" slurm "$1" --array 3 --cpus-per-task 1)" || die "headlab-cli slurm failed: $out"
    echo "$out" >&2
    sed -n 's/^submitted job \([0-9]*\):.*/\1/p' <<<"$out"
}

same_numbers() { # A.yaml B.yaml: every curve point and status equal
    mkdir -p "$T/csv-a" "$T/csv-b"
    "$CLI" export-csv "$1" -o "$T/csv-a" >/dev/null
    "$CLI" export-csv "$2" -o "$T/csv-b" >/dev/null
    cmp -s "$T/csv-a/curves.csv" "$T/csv-b/curves.csv" || { diff "$T/csv-a/curves.csv" "$T/csv-b/curves.csv" | head; die "curves differ: $1 vs $2"; }
    local done_runs; done_runs="$(grep -c ',done,' "$T/csv-a/runs.csv" || true)"
    [[ "$done_runs" == 6 ]] || die "$1: $done_runs of 6 runs done"
    rm -rf "$T/csv-a" "$T/csv-b"
}

# 1. An array of 3 equals the local run.
mkdir -p "$T/local" "$T/array" "$T/cancel" "$T/cancel-local"
session 1500 >"$T/local/s.yaml"; cp "$T/local/s.yaml" "$T/array/s.yaml"
"$CLI" run "$T/local/s.yaml" --threads 1 >/dev/null 2>&1 || die "the local run failed"
job="$(submit "$T/array/s.yaml")"
[[ -n "$job" ]] || die "no job id"
wait_for_job "$job" 300
"$CLI" status "$T/array/s.yaml"
"$CLI" merge "$T/array/s.yaml" || die "merge failed"
same_numbers "$T/array/s.yaml" "$T/local/s.yaml"
say "PASS: job $job, 6 runs as an array of 3, merged: identical to the local run"

# 2. scancel one element mid-run, submit again: its runs resume from their checkpoints.
session 6000 >"$T/cancel/s.yaml"; cp "$T/cancel/s.yaml" "$T/cancel-local/s.yaml"
"$CLI" run "$T/cancel-local/s.yaml" --threads 1 >/dev/null 2>&1 || die "the local run failed"
job="$(submit "$T/cancel/s.yaml")"
victim=""
for _ in $(seq 600); do # an element that has been training for a second (a run takes about four)
    for task in 0 1 2; do
        if [[ "$(squeue -h -j "${job}_${task}" -o %T 2>/dev/null)" == RUNNING ]] &&
           grep -q "to train" "$T/cancel/s.results/slurm/${job}_${task}.log" 2>/dev/null; then
            victim=$task; break 2
        fi
    done
    sleep 0.1
done
[[ -n "$victim" ]] || die "no array element was found running"
sleep 1.5
scancel "${job}_${victim}"
wait_for_job "$job" 300
log="$T/cancel/s.results/slurm/${job}_${victim}.log"
grep -q "Terminated: stopping the runs in progress and saving" "$log" || { cat "$log"; die "the cancelled task did not save its runs"; }
stopped="$("$CLI" status "$T/cancel/s.yaml" | sed -n 's/.*, \([0-9]*\) stopped.*/\1/p')"
[[ "$stopped" == 2 ]] || { "$CLI" status "$T/cancel/s.yaml"; die "expected the cancelled task's 2 runs stopped, got '${stopped}'"; }
say "cancelled ${job}_${victim} mid-run: its 2 runs saved as stopped, with checkpoints where they stopped"
"$CLI" status "$T/cancel/s.yaml" || true
again="$(submit "$T/cancel/s.yaml")"
wait_for_job "$again" 300
grep -hE "resumed [0-9]+ runs? from checkpoints" "$T/cancel/s.results/slurm/${again}_"*.log || die "no task of job $again resumed from checkpoints"
"$CLI" merge "$T/cancel/s.yaml" || die "merge failed"
same_numbers "$T/cancel/s.yaml" "$T/cancel-local/s.yaml"
say "PASS: ${job}_${victim} cancelled mid-run, job $again resumed it from checkpoints: identical to the local run"

# 3. A boundary search: each round an array, the next round planned and submitted by a job that
#    waits for the array (headlab-cli slurm chains them), until the search stops. The same search
#    run locally gives the same rounds, runs and summary.
mkdir -p "$T/search" "$T/search-local"
FIXTURES="$(cd "$(dirname "${BASH_SOURCE[0]}")/../search/fixtures" && pwd)"
for dir in search search-local; do
    cp "$FIXTURES/copy.txt" "$T/$dir/copy.txt"
    # The fixture's search over two head counts, with a budget of 11 runs each (three rounds).
    sed 's/^  range: \[3.0e-5, 3.0e-2\]$/  range: [3.0e-5, 3.0e-2]\n  budget: 11/; s/^search:$/sweep:\n  heads: [1, 2]\nsearch:/' \
        "$FIXTURES/copy-search.yaml" >"$T/$dir/s.yaml"
done
grep -q "budget: 11" "$T/search/s.yaml" || die "the search fixture changed: no range line to add the budget to"
"$CLI" run "$T/search-local/s.yaml" --threads 1 >/dev/null 2>&1 || die "the local search failed"
out="$("$CLI" slurm "$T/search/s.yaml" --array 2 --cpus-per-task 1)" || die "headlab-cli slurm failed: $out"
echo "$out"
for _ in $(seq 900); do
    if [[ -z "$(squeue -h 2>/dev/null)" ]]; then break; fi
    sleep 0.2
done
[[ -z "$(squeue -h 2>/dev/null)" ]] || { squeue; die "the search's jobs did not end within 180 s"; }
"$CLI" summary "$T/search/s.yaml" >"$T/search/summary.txt" || die "summary failed"
"$CLI" summary "$T/search-local/s.yaml" >"$T/search-local/summary.txt" || die "summary failed"
grep -q "; finished" "$T/search/summary.txt" || { cat "$T/search/summary.txt"; tail -5 "$T"/search/s.results/slurm/next_*.log; die "the chained search did not finish"; }
cmp -s "$T/search/summary.txt" "$T/search-local/summary.txt" ||
    { diff "$T/search/summary.txt" "$T/search-local/summary.txt"; die "the search on Slurm differs from the local one"; }
rounds="$(sed -n 's/^boundary search along lr: \([0-9]*\) rounds.*/\1/p' "$T/search/summary.txt")"
[[ "${rounds:-0}" -ge 2 ]] || die "expected at least 2 rounds, got '${rounds}'"
say "PASS: a boundary search as $rounds chained arrays of 2 (planned between them by Slurm jobs): identical to the local search"

# 4. Optional: the app watching a sweep that Slurm runs (the picture in docs/CLUSTER.md).
if [[ -n "${HEADLAB_SLURM_SCREENSHOT:-}" ]]; then
    mkdir -p "$T/watch"
    session 20000 | sed 's/seed: \[0, 1\]/seed: [0, 1, 2]/; s/every: 500/every: 250/' >"$T/watch/s.yaml"
    sed -i 's/^name: slurm-test/name: watched-from-the-app/' "$T/watch/s.yaml"
    job="$(submit "$T/watch/s.yaml")"
    sleep 2
    xvfb-run -a -s "-screen 0 1600x1000x24" env QT_QPA_PLATFORM=xcb "${HEADLAB_APP:?HEADLAB_APP=path/to/headlab}" \
        "$T/watch/s.yaml" --figure loss --screenshot "$HEADLAB_SLURM_SCREENSHOT" --screenshot-after "${HEADLAB_SLURM_SCREENSHOT_AFTER:-20}"
    "$CLI" status "$T/watch/s.yaml" || true
    scancel "$job"
    wait_for_job "$job" 120
    say "picture of the app watching job $job: $HEADLAB_SLURM_SCREENSHOT"
fi
