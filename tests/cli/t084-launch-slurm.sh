#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A profile's sbatch.sh submitted to a real Slurm (22.05 here): a one-node cluster on localhost
# with 8 GPUs Slurm believes in (device files that are /dev/null), started by this test as root
# and torn down after it, as t033 does (auth/none here: no munge daemon to share). The job asks
# for the nodes measured, so it runs on a one-node partition instead of pending for ever
# (PartitionNodeLimit); an mpi profile asks for no GPU; a job of another shape than the table's
# is warned about once, before torchrun starts. Skips, saying why, where Slurm or torchrun is
# missing or the daemons cannot start.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
skip() {
    echo "skipped: $*"
    finish
    exit 0
}
for cmd in sbatch squeue sinfo slurmctld slurmd torchrun; do
    command -v "$cmd" >/dev/null || skip "$cmd not installed (tools/install-deps.sh installs slurm-wlm and python3-torch)"
done
[ "$(id -u)" = 0 ] || skip "a private Slurm cluster needs root"
[ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/auth_none.so ] || [ -n "$(find /usr/lib* -name auth_none.so 2>/dev/null | head -1)" ] ||
    skip "Slurm's auth/none plugin is not installed"
cd "$TEST_TMP" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

slurm=$TEST_TMP/slurm
mkdir -p "$slurm/state" "$slurm/spool" "$slurm/dev"
host=$(hostname)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TEST_TMP"
}
trap cleanup EXIT
for i in 0 1 2 3 4 5 6 7; do
    mknod "$slurm/dev/gpu$i" c 1 3 || skip "cannot make device files for Slurm's GPUs"
done
cat >"$slurm/slurm.conf" <<CONF
ClusterName=topotune-launch
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
GresTypes=gpu
MpiDefault=none
StateSaveLocation=$slurm/state
SlurmdSpoolDir=$slurm/spool
SlurmctldPidFile=$slurm/slurmctld.pid
SlurmdPidFile=$slurm/slurmd.pid
SlurmctldPort=16937
SlurmdPort=16938
SlurmctldLogFile=$slurm/slurmctld.log
SlurmdLogFile=$slurm/slurmd.log
ReturnToService=2
NodeName=$host CPUs=$(nproc) Gres=gpu:8 State=UNKNOWN
PartitionName=one Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s/dev/gpu[0-7]\n' "$host" "$slurm" >"$slurm/gres.conf"
export SLURM_CONF=$slurm/slurm.conf
slurmctld -D -i >/dev/null 2>&1 &
pids+=($!)
slurmd -D >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 40); do
    sinfo -h -o %T 2>/dev/null | grep -q idle && break
    sleep 0.5
done
sinfo -h -o %T 2>/dev/null | grep -q idle ||
    skip "the one-node Slurm did not come up: $(tail -n 2 "$slurm/slurmctld.log" "$slurm/slurmd.log" 2>/dev/null | tr '\n' ' ')"

# run_job NAME SCRIPT ARGS...: sbatch SCRIPT (with this environment: sbatch exports it), wait for the job to leave the queue (a job pending
# for a reason that will not change fails at once), output in NAME.out; exit code of the job.
run_job() {
    local name=$1 id state reason code
    shift
    # a loaded machine's slurmctld may miss a connection: sbatch again, a few times
    local try
    for try in 1 2 3 4 5; do
        id=$(sbatch --parsable -o "$TEST_TMP/$name.out" "$@" 2>"$TEST_TMP/$name.sbatch") && break
        grep -q "Unable to contact slurm controller" "$TEST_TMP/$name.sbatch" || break
        sleep "$try"
    done
    [ -n "${id:-}" ] || { cat "$TEST_TMP/$name.sbatch" >&2; return 1; }
    for _ in $(seq 240); do
        read -r state reason < <(squeue -h -j "$id" -o '%T %r' 2>/dev/null)
        [ -n "${state:-}" ] || break
        if [ "$state" = PENDING ] && [[ $reason =~ ^(PartitionNodeLimit|BadConstraints|ReqNodeNotAvail) ]]; then
            echo "job $name pends: $reason" >"$TEST_TMP/$name.out"
            scancel "$id"
            return 1
        fi
        state=
        sleep 0.5
    done
    code=$(scontrol show job "$id" 2>/dev/null | grep -o 'ExitCode=[0-9:]*' | head -1)
    [ "$code" = "ExitCode=0:0" ]
}

cat >train.py <<'PY'
import os
import torch.distributed as dist

dist.init_process_group("gloo")
with open(os.path.join(os.environ["OUT_DIR"], "rank%d" % dist.get_rank()), "w") as f:
    f.write("%d %s\n" % (dist.get_world_size(), os.environ["LOCAL_RANK"]))
dist.destroy_process_group()
PY
# Debian's torchrun needs --redirects/--tee (t042)
export TOPOTUNE_TORCHRUN_ARGS="--redirects 1 --tee 1"

# An mpi profile of this machine: 1 node x 2 CPU ranks, no GPU.
expect_exit 0 "mpi sweep" -- "$TOPOTUNE" sweep --backend mpi --np 2 --space "$TOPOTUNE_FIXTURES/space-mpi-tiny.json" --out mpi
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs mpi --profiles profiles
mpi=$(echo "$TEST_TMP"/profiles/*/latest)
mkdir -p ranks-mpi
OUT_DIR="$TEST_TMP/ranks-mpi" run_job mpi "$mpi/launch/sbatch.sh" "$TEST_TMP/train.py"
rc=$?
check "the mpi profile's sbatch.sh runs on a one-node partition (job output: $(tail -n 3 mpi.out | tr '\n' ' '))" \
    test "$rc" -eq 0
check "torchrun started the 2 ranks measured" bash -c "grep -qx '2 0' ranks-mpi/rank0 && grep -qx '2 1' ranks-mpi/rank1"
check "no warning about the table's shape" bash -c "! grep -q 'per-size table' mpi.out"

# A profile with a per-size row for 1 node x 8 ranks (t085's), started with 2 ranks per node:
# it asks for the node's 8 GPUs and runs, and the warning comes once, from sbatch.sh.
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "256M", "factor": 16},
 "objective": {"min": "1M", "max": "16M"}, "vars": {"NCCL_ALGO": [null, "Tree"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 10, "cv_max": 0.05}' >space.json
"$TOPOTUNE" -q sweep --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --space space.json --out plain || true
mkdir -p forced
cp plain/sweep.json forced/
python3 - plain/results.jsonl forced/results.jsonl <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as out:
    for r in runs:
        if r["env"].get("NCCL_ALGO") == "Tree":
            base = next(b for b in runs if not b["env"] and b["rep"] == r["rep"] and b["final"] == r["final"])
            bw = {s["size"]: s["busbw"] for s in base["sizes"]}
            for s in r["sizes"]:
                if s["size"] == max(bw):
                    s["busbw"] = bw[s["size"]] * 3
        out.write(json.dumps(r) + "\n")
PY
expect_exit 0 "gen (rows)" -- "$TOPOTUNE" gen --runs forced --profiles rows
rows=$(echo "$TEST_TMP"/rows/*/latest)
mkdir -p ranks-rows
OUT_DIR="$TEST_TMP/ranks-rows" TOPOTUNE_PPN=2 run_job rows "$rows/launch/sbatch.sh" "$TEST_TMP/train.py"
rc=$?
check "the 8-GPU profile's sbatch.sh runs with TOPOTUNE_PPN=2 (job output: $(tail -n 3 rows.out | tr '\n' ' '))" \
    test "$rc" -eq 0
check "2 ranks ran" bash -c "grep -qx '2 0' ranks-rows/rank0 && grep -qx '2 1' ranks-rows/rank1"
check "the table's shape warned about once, before torchrun (job output: $(head -c 600 rows.out))" \
    test "$(grep -c 'per-size table (tuner-table.txt) was measured on 1 node(s) x 8 ranks; this job runs 1 node(s) x 2 ranks' rows.out)" -eq 1
finish
