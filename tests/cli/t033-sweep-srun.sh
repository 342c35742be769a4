#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A small sweep through Slurm's srun: a one-node cluster on localhost (munge, slurmctld,
# slurmd as root) started by this test and torn down after it. Skips, saying why, where
# Slurm is not installed or its daemons cannot start.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=slurm.sh
. "$(dirname "$0")/slurm.sh"
# shellcheck disable=SC2119 # (no names: one node named after this host)
slurm_up

expect_exit 0 "srun itself" -- srun -n1 true
expect_exit 0 "sweep through srun" -- "$TOPOTUNE" sweep --backend sim --launcher srun \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" \
    --repeat 1 --out "$TEST_TMP/srun"
check "every run went through srun and finished ok" python3 - "$TEST_TMP/srun" <<'PY'
import json, sys
d = sys.argv[1]
sweep = json.load(open(d + "/sweep.json"))
runs = [json.loads(l) for l in open(d + "/results.jsonl")]
assert sweep["launcher"] == "srun" and len(runs) == len(sweep["configs"]) == 18
assert all(r["outcome"] == "ok" for r in runs), [(r["env"], r["outcome"], r["stderr_tail"]) for r in runs]
PY

# What reaches the ranks through srun: the values travel in srun's environment (--export=ALL),
# so a comma inside one is not srun's list separator: NCCL_DEBUG_SUBSYS arrives whole, and a
# value that reads as a second NAME=VALUE sets nothing. The node count is the job's, from Slurm.
cat >"$TEST_TMP/wrapper.sh" <<EOF
#!/bin/sh
echo "subsys=\$NCCL_DEBUG_SUBSYS algo=\$NCCL_ALGO preload=\${LD_PRELOAD:-unset}" >>"$TEST_TMP/seen"
exec "$TOPOTUNE_BIN/topotune-bench" "\$@"
EOF
chmod +x "$TEST_TMP/wrapper.sh"
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1K", "max": "64K", "factor": 8},
 "vars": {"NCCL_ALGO": ["Ring,LD_PRELOAD=/nonexistent/x.so"]}, "fixed": {"NCCL_DEBUG_SUBSYS": "INIT,ENV,TUNING"},
 "repeat": 1, "iters": 2, "warmup": 1, "timeout_s": 10}' >"$TEST_TMP/commas.json"
env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/wrapper.sh" SLURM_JOB_NUM_NODES=2 "$TOPOTUNE" sweep --backend sim \
    --launcher srun --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --space "$TEST_TMP/commas.json" \
    --no-cures --out "$TEST_TMP/commas" >/dev/null 2>&1
# (LD_PRELOAD is what this test runs with: unset, or the sanitized run's own library)
check "a comma in a value arrives whole, and sets no other variable" grep -qxF \
    "subsys=INIT,ENV,TUNING algo=Ring,LD_PRELOAD=/nonexistent/x.so preload=${LD_PRELOAD:-unset}" "$TEST_TMP/seen"
check "the node count is the Slurm job's" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["nodes"] == 2' "$TEST_TMP/commas/sweep.json"

# Inside an allocation, --allocation maps and checks every allocated node through mpirun.
expect_exit 0 "topo --allocation inside salloc" -- salloc -N1 "$TOPOTUNE" topo --allocation --json
check "the allocated node mapped" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["nodes"]) == 1 and len(d["classes"]) == 1, d["classes"]' "$TEST_TMP/out"
salloc -N1 "$TOPOTUNE" doctor --allocation --json >"$TEST_TMP/out" 2>"$TEST_TMP/err"
check "doctor --allocation reports the node" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["nodes"]) == 1 and d["checks"][0]["name"] == "nodes-class", d' "$TEST_TMP/out"

# survey --allocation: the map names the allocated node; its launches go through mpirun, which
# starts its daemon through Slurm (Debian's Open MPI has no Slurm PMI for srun to start ranks).
salloc -N1 -n2 "$TOPOTUNE" survey --allocation --backend mpi --size 1M --iters 5 --timeout 30 \
    --out "$TEST_TMP/survey" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
check "survey --allocation inside salloc: exit 0 (exit $rc: $(tail -n 3 "$TEST_TMP/err" | tr '\n' ' '))" test "$rc" -eq 0
check "the node measured alone inside the allocation" python3 - "$TEST_TMP/survey" "$(hostname)" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/survey.json"))
assert [n["host"] for n in s["nodes"]] == [sys.argv[2]] and s["nodes"][0]["alone_busbw"] > 0, s["nodes"]
assert s["verdicts"] == [] and s["launches"]["total"] == 1, s["launches"]
PY
check "healthy.hostfile names it" test "$(cat "$TEST_TMP/survey/healthy.hostfile")" = "$(hostname)"
finish
