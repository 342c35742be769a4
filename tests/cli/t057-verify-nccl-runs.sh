#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# verify --backend nccl proves only with this verify's runs: NCCL's logs of an earlier verify in a
# reused --out prove nothing, and --out is locked; the reference is NCCL's defaults with the
# profile's system variables (a cure: the bare defaults would hang); the shell's NCCL_* reach no
# run; another tuner in NCCL's log (the network plugin's) is named, with what env+table did with
# it; -C runs that collective. fake-bench.sh (mode verify) stands in for topotune-bench.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
if [ ! -r "$TOPOTUNE_BIN/tuner/libnccl-tuner-topotune.so" ]; then
    echo "note: the tuner plugin is not built here: verify --backend nccl not run"
    finish
    exit
fi
p="$TEST_TMP/profile"
mkdir -p "$p"
cat >"$p/profile.json" <<'JSON'
{"schema": "topotune/profile/1", "class": "test-class",
 "variables": [{"name": "NCCL_P2P_DISABLE", "value": "1", "role": "system"},
               {"name": "NCCL_ALGO", "value": "Tree", "role": "tuning"}]}
JSON
printf '%s\n' "# topotune tuner table 1" "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels" \
    "allreduce,0,inf,1,1,tree,ll,0" >"$p/tuner-table.txt"
export FAKE_PIDS=$TEST_TMP/fake
for mode in verify unloaded; do
    fake_bench "$TEST_TMP/bench-$mode" verify "[ $mode = unloaded ] && unset TOPOTUNE_TUNER_TABLE"
done
measured() { env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-$1" "$TOPOTUNE" verify "$p" --backend nccl \
    --launcher direct --np 1 --repeat 1 -b 8 -e 8 "${@:2}"; }

# 1. The reference carries the profile's cure; the shell's NCCL_* reach no run.
: >"$FAKE_PIDS.env"
expect_exit 0 "verify" -- env NCCL_IB_HCA=mlx5_9 NCCL_DEBUG=WARN TOPOTUNE_NEXT_TUNER=x \
    TOPOTUNE_TUNER_DIGEST=0123456789abcdef \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-verify" "$TOPOTUNE" verify "$p" --backend nccl \
    --launcher direct --np 1 --repeat 1 -b 8 -e 8 --out "$TEST_TMP/v1"
expect_stderr_has "one rank: its all_reduce is a local copy" "one rank: no gain can show, and it says so"
check "three runs: the reference with the cure alone, the others with every variable" python3 - "$FAKE_PIDS.env" <<'PY'
import sys
runs = [dict(w.split("=", 1) for w in l.split()) for l in open(sys.argv[1])]
assert len(runs) == 3, runs
assert all(r["FAKE_COLL"] == "all_reduce" for r in runs), runs
assert runs[0].get("NCCL_P2P_DISABLE") == "1" and "NCCL_ALGO" not in runs[0], runs[0]
assert runs[1].get("NCCL_P2P_DISABLE") == "1" and runs[1].get("NCCL_ALGO") == "Tree", runs[1]
for r in runs:
    assert "NCCL_IB_HCA" not in r and "TOPOTUNE_NEXT_TUNER" not in r, r
    assert "TOPOTUNE_TUNER_DIGEST" not in r, r  # another table's: the env + table run would fail
    assert r["NCCL_DEBUG"] == "INFO" and r["NCCL_DEBUG_SUBSYS"] == runs[0]["NCCL_DEBUG_SUBSYS"], r
PY
check "the reference named, with the cure" grep -q "reference: NCCL's defaults with the profile's system variable(s) NCCL_P2P_DISABLE=1" "$TEST_TMP/out"
check "the cleared names said" grep -q "^# cleared from this shell for every run: .*NCCL_IB_HCA" "$TEST_TMP/out"

# 1b. A '[' in --out is a character of the folder's name: NCCL's logs there were looked for as a
# pattern, none found, and the table called not applied (exit 3).
expect_exit 0 "verify into a folder named with brackets" -- measured verify --out "$TEST_TMP/o[1]"

# A direct launch is one process: --np 2 with it said only "cannot build the direct launch",
# after making --out.
expect_exit 2 "--launcher direct --np 2" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-verify" \
    "$TOPOTUNE" verify "$p" --backend nccl --launcher direct --np 2 --out "$TEST_TMP/two"
expect_stderr_has "--launcher direct runs one rank, not --np 2" "said, with the fix"
expect_no_file "$TEST_TMP/two" "nothing made"

# 2. An earlier verify's logs in the reused --out prove nothing: the plugin did not load now.
cp -r "$TEST_TMP/v1" "$TEST_TMP/v2"
for f in "$TEST_TMP"/v2/env-table-r0.*.log.nccl.*; do cp "$f" "$TEST_TMP/v2/env-table-r0.log.nccl.host.1"; done
expect_exit 3 "a reused --out with an earlier run's proof" -- measured unloaded --out "$TEST_TMP/v2"
expect_stderr_has "the table was not applied" "said why"

# ... nor do its events: a run that writes none failed, whatever an earlier one left.
cp -r "$TEST_TMP/v1" "$TEST_TMP/v3"
fake_bench "$TEST_TMP/bench-nojson" no-json
expect_exit 3 "a reused --out with an earlier run's events" -- measured nojson --out "$TEST_TMP/v3"
expect_stderr_has "the reference run failed" "the run without events failed"

# 3. --out is locked while a verify uses it (the directory itself, as util_lock_dir locks it).
# the sleep holds the lock itself (exec): killed, it lets go, and leaves no process behind that
# keeps ctest's output open (flock's child did: the test waited 30 s for it)
(exec 9<"$TEST_TMP/v1" && flock 9 && exec sleep 30) &
holder=$!
held() { ! flock -n "$TEST_TMP/v1" true; }
poll 100 0.1 held
expect_exit 3 "--out held by another verify" -- measured verify --out "$TEST_TMP/v1"
expect_stderr_has "in use by another verify" "said why"
kill "$holder"
wait "$holder" 2>/dev/null

# 4. NCCL's own tuner ("Using internal tuner plugin.", every run without a plugin) is no other.
expect_exit 0 "verify where NCCL uses its internal tuner" -- measured verify --json
check "no other tuner named" bash -c "! grep -q 'had tuner' '$TEST_TMP/err'"
check "--json: no other tuner" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert not d.get("other_tuner"), d' "$TEST_TMP/out"

# 5. Another tuner in NCCL's log (the network plugin's): named, and the plugin's chain to it.
export FAKE_OTHER_TUNER=ofi-tuner
expect_exit 0 "verify with the network plugin's tuner" -- measured verify --json
unset FAKE_OTHER_TUNER
expect_stderr_has "the reference runs had tuner ofi-tuner (NCCL's log): env+table passed every call without a row to it" "named"
check "--json: the other tuner and the chain" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["other_tuner"] == "ofi-tuner" and d["chained_to"] == "ofi-tuner", d' "$TEST_TMP/out"

# 6. -C all_gather: every run is all_gather, and the header and JSON say so.
: >"$FAKE_PIDS.env"
expect_exit 0 "verify -C all_gather" -- measured verify -C all_gather
check "every run is all_gather" sh -c "test \$(grep -c 'FAKE_COLL=all_gather\$' '$FAKE_PIDS.env') -eq 3"
check "the header names it" grep -q "^# MEASURED all_gather (float) by topotune-bench" "$TEST_TMP/out"
check "the table's rows counted for it: none, the all_reduce row left to -C all_reduce" sh -c "
    grep -q '^# the table has 0 all_gather row(s)' '$TEST_TMP/out' &&
    grep -q '^# 1 row(s) for all_reduce are not verified by this run: verify -C all_reduce' '$TEST_TMP/out' &&
    grep -q '^# no row is this run.s: env+table is env-only here' '$TEST_TMP/out'"
expect_exit 0 "verify -C reduce_scatter --json" -- measured verify -C reduce_scatter --json
check "--json names it, with its rows" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["collective"] == "reduce_scatter" and d["table_rows_collective"] == 0, d
assert d["table_rows"] == 1 and d["table_rows_not_verified"] == 1, d' "$TEST_TMP/out"
finish
