#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# survey --drain / --resume-nodes against a real Slurm (slurmctld and two slurmd started by this
# test, node0001 and node0002 on this host): a simulated survey names node0002 slow; the dry run
# prints the scontrol command and changes nothing; --apply drains node0002 with topotune's reason
# (sinfo shows it); a later clean survey resumes it with --resume-nodes --apply; node0001, drained
# by an administrator, is neither drained over nor resumed; a failing `topotune check --drain
# --apply` drains its own node; as the Prolog, a failing check keeps the job off the node and Slurm
# drains it. Skips where Slurm cannot start.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=slurm.sh
. "$(dirname "$0")/slurm.sh"
# a slow node: its benchmark runs a configuration the check's reference knows nothing of
cat >"$TEST_TMP/slow-bench.sh" <<EOF
#!/bin/sh
exec env NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=2 "$TOPOTUNE_BENCH" "\$@"
EOF
chmod +x "$TEST_TMP/slow-bench.sh"
# a Prolog that runs `topotune check` once the test says so (a slow node on the sim)
cat >"$TEST_TMP/prolog.sh" <<EOF
#!/bin/sh
[ -e "$TEST_TMP/prolog-on" ] || exit 0
exec env TMPDIR="$TEST_TMP" TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/slow-bench.sh" "$TOPOTUNE" check \
    --backend sim --input "$TEST_TMP/h100.json" --no-doctor >>"$TEST_TMP/prolog.log" 2>&1
EOF
chmod +x "$TEST_TMP/prolog.sh"
export SLURM_EXTRA_CONF="Prolog=$TEST_TMP/prolog.sh"
slurm_up node0001 node0002
cd "$TEST_TMP" || exit 1
echo '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8}' >h100.json

cluster() { # cluster FILE [FAULTS JSON]
    printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}], "faults": %s}\n' \
        "${2:-[]}" >"$1"
}
state() { sinfo -h -N -n "$1" -o '%T|%E'; }
# a resumed node is pinged again ("idle*", not responding, for a moment)
settled() { for _ in $(seq 40); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.25; done; return 1; }
cluster slow.json '[{"kind": "slow-node", "hosts": ["node0002"], "factor": 0.3}]'
cluster clean.json

expect_exit 0 "an administrator drains node0001" -- scontrol update nodename=node0001 state=drain \
    "reason=admin: new DIMMs"

# 1. The dry run prints the command and changes nothing.
"$TOPOTUNE" survey --backend sim --cluster slow.json --out dry --drain >dry.out 2>dry.err
rc=$?
check "dry run: exit 1, something named (exit $rc)" test "$rc" -eq 1
check "dry run: node0002's drain printed with topotune's reason, nothing else" python3 - dry.out <<'PY'
import shlex, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
w = shlex.split(lines[0])
assert w[:4] == ["scontrol", "update", "nodename=node0002", "state=drain"], w
assert w[4].startswith("reason=topotune: node-slow busbw=") and w[4].endswith("(predicted)"), w
PY
check "dry run: Slurm unchanged" test "$(state node0002)" = "idle|none"

# 2. --apply: node0002 drained with the reason; the administrator's drain left as it is.
"$TOPOTUNE" survey --backend sim --cluster slow.json --out apply --drain --apply >apply.out 2>apply.err
rc=$?
check "apply: exit 1 (exit $rc: $(tail -n 2 apply.err | tr '\n' ' '))" test "$rc" -eq 1
check "sinfo: node0002 drained by topotune (got: $(state node0002))" \
    grep -Eq '^drain(ed|ing)\|topotune: node-slow busbw=' <<<"$(state node0002)"
check "sinfo: node0001 keeps the administrator's reason (got: $(state node0001))" \
    test "$(state node0001)" = "drained|admin: new DIMMs"

# 3. A survey naming node0001 does not overwrite the administrator's drain, and says so.
cluster both.json '[{"kind": "slow-node", "hosts": ["node0001"], "factor": 0.3}]'
"$TOPOTUNE" survey --backend sim --cluster both.json --out both --drain --apply >both.out 2>both.err
check "node0001 not drained over" test "$(state node0001)" = "drained|admin: new DIMMs"
check "and it says why" grep -q "node0001: already drained by someone else (reason: admin: new DIMMs)" both.err
check "no command for it" test ! -s both.out

# 4. A clean survey resumes what topotune drained, and nothing else.
"$TOPOTUNE" survey --backend sim --cluster clean.json --out clean --resume-nodes >clean.out 2>clean.err
check "resume dry run: exit 0, node0002's resume printed" \
    test "$(cat clean.out)" = "scontrol update nodename=node0002 state=resume"
expect_exit 0 "resume applied" -- "$TOPOTUNE" survey --backend sim --cluster clean.json --out clean2 \
    --resume-nodes --apply
check "sinfo: node0002 back in service (got: $(state node0002))" settled node0002 "idle|none"
check "sinfo: node0001 still drained by its administrator" test "$(state node0001)" = "drained|admin: new DIMMs"

# 5. topotune check as a HealthCheckProgram: a failing check drains its own node (Slurm's name
# from SLURMD_NODENAME), and the next clean survey resumes it.
TMPDIR="$TEST_TMP" SLURMD_NODENAME=node0002 TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/slow-bench.sh" "$TOPOTUNE" check \
    --backend sim --input h100.json --drain --apply >check.out 2>check.err
rc=$?
check "a failing check: exit 1 (exit $rc: $(tail -n 1 check.err))" test "$rc" -eq 1
check "sinfo: node0002 drained by the check (got: $(state node0002))" \
    test "$(state node0002)" = "drained|topotune: check-fails checks=busbw (predicted)"
expect_exit 0 "a clean survey resumes it" -- "$TOPOTUNE" survey --backend sim --cluster clean.json \
    --out clean3 --resume-nodes --apply
check "sinfo: node0002 back (got: $(state node0002))" settled node0002 "idle|none"

# A failing check on node0001, which its administrator drained, leaves the reason as it is.
TMPDIR="$TEST_TMP" SLURMD_NODENAME=node0001 TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/slow-bench.sh" "$TOPOTUNE" check \
    --backend sim --input h100.json --drain --apply >check1.out 2>check1.err
check "the check fails on node0001" grep -q "^FAIL busbw" check1.out
check "node0001 keeps its administrator's reason" test "$(state node0001)" = "drained|admin: new DIMMs"
check "and the check says why" grep -q "node0001: already drained by someone else" check1.err

# topotune check as the Prolog: a job's step on a node that fails it does not start, and Slurm
# drains the node ("Prolog error", Slurm's reason: a later survey does not resume it).
expect_exit 0 "a job on node0002 while the check passes (the Prolog does nothing)" -- timeout 60 srun -w node0002 true
touch prolog-on
timeout 60 srun -w node0002 true >srun.out 2>&1
rc=$?
check "the job does not start (srun exit $rc)" test "$rc" -ne 0
check "Slurm drained node0002 for its Prolog (got: $(state node0002))" test "$(state node0002)" = "drained|Prolog error"
check "the Prolog's check said why" grep -q "^FAIL busbw" prolog.log
rm -f prolog-on
scontrol update nodename=node0002 state=resume

# 6. Refusals and failures: --apply alone; Slurm not answering.
expect_exit 2 "--apply without --drain or --resume-nodes" -- "$TOPOTUNE" survey --backend sim \
    --cluster clean.json --out x --apply
# sinfo as it ends when its controller is down (a real sinfo without a configuration here waits
# a minute first, and topotune's 30 s deadline cut it: the suite's time, not a second path)
mkdir -p down
printf '%s\n' '#!/bin/sh' 'echo "sinfo: error: Unable to contact slurm controller (connect failure)" >&2' 'exit 1' \
    >down/sinfo
chmod +x down/sinfo
PATH="$TEST_TMP/down:$PATH" expect_exit 3 "--resume-nodes when sinfo cannot answer" -- "$TOPOTUNE" survey \
    --backend sim --cluster clean.json --out y --resume-nodes
expect_stderr_has "sinfo exited 1: sinfo: error: Unable to contact slurm controller" "said, with sinfo's words"
finish
