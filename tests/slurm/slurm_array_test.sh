#!/usr/bin/env bash
# A real Slurm job array runs `kvbill sweep --shard auto` and `kvbill plan
# --shard auto` (tools/slurm/) and each merged output equals the single run
# byte for byte.
#
#   tests/slurm/slurm_array_test.sh KVBILL_BINARY      (ctest label: slurm)
#
# Starts a single-node cluster of its own in a temporary directory: a munged
# on a private socket and key (a munged already running on the machine is
# neither used nor disturbed), slurmctld and slurmd on free ports, all state,
# spool, pid and log files in that directory. Submits tools/slurm/submit's
# 4-task sweep array with its merge job, and a second array by hand with
# --array=1-7:2 (IDs 1, 3, 5, 7: the step and offset of --shard auto), waits
# for both, and compares. Stops the three daemons it started by their pid
# files. Fails loudly, printing the daemon logs, when a daemon cannot start
# (Debian's slurm-wlm and munge: `tools/setup --tests`; the daemons run as
# the user running the test: root in CI). KVBILL_SKIP_SLURM_TEST=1 skips it,
# reported as skipped.
set -uo pipefail

kvbill="${1:?usage: slurm_array_test.sh KVBILL_BINARY}"
kvbill="$(cd "$(dirname "$kvbill")" && pwd)/$(basename "$kvbill")"
source_dir="$(cd "$(dirname "$0")/../.." && pwd)"
scenario="$source_dir/tests/data/scenarios/small_sweep.json"
timeout_s=90

if [[ "${KVBILL_SKIP_SLURM_TEST:-}" == 1 ]]; then
  echo "SKIPPED: KVBILL_SKIP_SLURM_TEST=1"
  exit 77
fi

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol python3; do
  command -v "$tool" >/dev/null ||
    fail "$tool not found: install Debian's slurm-wlm and munge (tools/setup --tests)"
done

# Short path: the munge socket's path must fit a sockaddr_un (108 bytes).
work="$(mktemp -d /tmp/kvbill-slurm.XXXXXX)" || fail "mktemp"
chmod 755 "$work"
mkdir -p "$work"/{state,spool,log,munge,sweep,stepped,plan}
chmod 711 "$work/munge"

print_logs() {
  local f
  for f in "$work"/log/* "$work"/munge/munged.log "$work"/sweep/slurm-*.out \
    "$work"/stepped/slurm-*.out "$work"/plan/slurm-*.out; do
    [[ -f "$f" ]] || continue
    echo "---- $f" >&2
    tail -n 60 "$f" >&2
  done
}

# Stops what this script started, by pid file, and waits for it to exit.
stop_daemons() {
  local pid_file pid i
  for pid_file in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge/munged.pid"; do
    [[ -s "$pid_file" ]] || continue
    pid="$(cat "$pid_file")"
    kill "$pid" 2>/dev/null || continue
    for ((i = 0; i < 100; i++)); do
      # Gone, or a zombie waiting for its parent to reap it.
      [[ -e "/proc/$pid" ]] || break
      [[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" == Z ]] && break
      sleep 0.1
    done
  done
}

status=1
finish() {
  stop_daemons
  if ((status == 0)); then
    rm -rf "$work"
  else
    print_logs
    echo "slurm_array_test: kept $work for inspection" >&2
  fi
}
trap 'finish' EXIT
trap 'exit 1' INT TERM

# munged with a key of its own, on a socket of its own.
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --force --socket="$work/munge/socket" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/seed" ||
  fail "munged did not start"

# Two free TCP ports, held only while they are picked.
read -r ctld_port d_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*[x.getsockname()[1] for x in s])') || fail "no free ports"

host="$(hostname -s)"
user="$(id -un)"
export SLURM_CONF="$work/slurm.conf"
# sched_interval/bf_interval=1: the dependent merge job starts within a second
# of the array's end. The daemons talk over 127.0.0.1, whatever the host name
# resolves to. (A failed array cancels the merge job through submit's
# --kill-on-invalid-dep=yes.)
cat >"$SLURM_CONF" <<EOF
ClusterName=kvbilltest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
MpiDefault=none
ReturnToService=2
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for ((i = 0; ; i++)); do
  state="$(sinfo -h -o %T 2>/dev/null)"
  [[ "$state" == idle ]] && break
  ((i < 200)) || fail "the node did not become idle in 20 s (sinfo: \"$state\")"
  sleep 0.1
done
echo "slurm_array_test: cluster up (ports $ctld_port, $d_port)"

# The single run, the reference.
"$kvbill" sweep --jobs 1 --scenario "$scenario" --format json -o "$work/single.json" ||
  fail "the single run failed"
"$kvbill" sweep --jobs 1 --scenario "$scenario" --format csv -o "$work/single.csv" ||
  fail "the single run failed"

plan_scenario="$source_dir/tests/data/scenarios/plan_small.json"
# shellcheck disable=SC2054  # the commas separate values inside one flag
plan_flags=(--gpus h100-sxm,a100-80gb --max-gpus 2 --kv-formats bf16,fp8)
"$kvbill" plan --jobs 1 --scenario "$plan_scenario" "${plan_flags[@]}" --format json \
  -o "$work/single-plan.json" || fail "the single plan run failed"

# A format the merge job cannot write is refused before anything is
# queued (it once ran the whole array and failed at the merge).
if KVBILL="$kvbill" "$source_dir/tools/slurm/submit" --format xml sweep 4 "$work/bad" \
  --scenario "$scenario" 2>"$work/bad-format.err"; then
  fail "tools/slurm/submit took --format xml"
fi
grep -q 'must be csv or json, got "xml"' "$work/bad-format.err" ||
  fail "tools/slurm/submit --format xml: unexpected message: $(cat "$work/bad-format.err")"
[[ -z "$(squeue -h 2>/dev/null)" ]] || fail "tools/slurm/submit --format xml queued jobs"

# The 4-task array and its merge job, through tools/slurm/submit.
ids="$(KVBILL="$kvbill" "$source_dir/tools/slurm/submit" --format json sweep 4 "$work/sweep" \
  --scenario "$scenario")" || fail "tools/slurm/submit failed"
# A stepped array by hand: IDs 1, 3, 5, 7 are slices 0..3 of 4.
stepped="$(KVBILL="$kvbill" sbatch --parsable --array=1-7:2 \
  --output="$work/stepped/slurm-%A_%a.out" "$source_dir/tools/slurm/sweep.sbatch" \
  "$work/stepped" --scenario "$scenario")" || fail "sbatch of the stepped array failed"
# The same for plan: 8 candidates over 4 tasks (issue 22's plan.sbatch).
plan_ids="$(KVBILL="$kvbill" "$source_dir/tools/slurm/submit" --format json plan 4 "$work/plan" \
  --scenario "$plan_scenario" "${plan_flags[@]}")" || fail "tools/slurm/submit plan failed"
echo "slurm_array_test: submitted jobs" $ids "$stepped" $plan_ids

start=$SECONDS
while [[ -n "$(squeue -h 2>/dev/null)" ]]; do
  if ((SECONDS - start > timeout_s)); then
    squeue >&2
    fail "the jobs did not finish in $timeout_s s"
  fi
  sleep 0.2
done
echo "slurm_array_test: jobs done in $((SECONDS - start)) s"

for shard in "$work"/sweep/shard-{0,1,2,3}.json "$work"/stepped/shard-{1,3,5,7}.json; do
  [[ -f "$shard" ]] || fail "an array task wrote no $shard (its log is below)"
done

# Each task took its own slice: shard i holds exactly the points k mod 4 == i
# (6 points: 2, 2, 1, 1), in both arrays.
check_slices() {
  python3 - "$@" <<'EOF'
import json, sys
for i, path in enumerate(sys.argv[1:]):
    doc = json.load(open(path))
    got = [p["index"] for p in doc["points"]]
    want = [k for k in range(doc["total_points"]) if k % 4 == i]
    if got != want:
        sys.exit(f"{path}: points {got}, expected {want}")
EOF
}
check_slices "$work"/sweep/shard-{0,1,2,3}.json || fail "the sweep array's slices are wrong"
check_slices "$work"/stepped/shard-{1,3,5,7}.json || fail "the stepped array's slices are wrong"

[[ -f "$work/sweep/sweep.json" ]] || fail "the merge job wrote no $work/sweep/sweep.json"
cmp "$work/single.json" "$work/sweep/sweep.json" ||
  fail "the merge job's output differs from the single run"
"$kvbill" merge "$work"/sweep/shard-*.json --format csv -o "$work/sweep.csv" &&
  cmp "$work/single.csv" "$work/sweep.csv" ||
  fail "the merged CSV differs from the single run"
"$kvbill" merge "$work"/stepped/shard-*.json --format json -o "$work/stepped.json" &&
  cmp "$work/single.json" "$work/stepped.json" ||
  fail "the stepped array's merged output differs from the single run"

[[ -f "$work/plan/plan.json" ]] || fail "the plan merge job wrote no $work/plan/plan.json"
cmp "$work/single-plan.json" "$work/plan/plan.json" ||
  fail "the plan array's merged output differs from the single plan run"

status=0
echo "slurm_array_test: PASS"
