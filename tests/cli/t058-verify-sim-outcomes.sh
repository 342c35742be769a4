#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# verify (sim) claims no gain where the model predicts a configuration hangs, fails or corrupts:
# it says the outcome instead of a busbw, and exits 1 when env + table is one of them; its
# reference is NCCL's defaults with the profile's system variables (the cure); rows that fit no
# node x rank shape of the run are not counted as applied; -C verifies another collective's rows.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"
p="$TEST_TMP/profile"
mkdir -p "$p"
table() { printf '%s\n' "# topotune tuner table 1" \
    "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels" "$@" >"$p/tuner-table.txt"; }
vars() { printf '{"schema": "topotune/profile/1", "class": "x", "variables": [%s]}\n' "$1" >"$p/profile.json"; }

# 1. Consumer GPUs over PCIe: P2P hangs at init in every configuration: no busbw, no gain.
vars ""
table "allreduce,0,inf,*,*,ring,simple,0"
expect_exit 1 "verify: every configuration hangs" -- "$TOPOTUNE" verify "$p" --topology "$specs/rtx4090-8x-pcie.json" -b 8 -e 128
check "a line per size: hangs, no gain" test "$(grep -c '^ *predicted .* hangs  *hangs  *hangs .* no gain  *no gain$' "$TEST_TMP/out")" -eq 3
check "no busbw printed" bash -c "! grep -q 'GB/s' '$TEST_TMP/out'"
check "why, in words" grep -q "^# env+table is predicted not to run: .*NCCL_P2P_DISABLE=1" "$TEST_TMP/out"
expect_stderr_has "predicted not to run correctly at 3 size(s)" "exit 1 said"

# 2. The profile's cure is the reference; LL128 forced over PCIe corrupts: said, no gain.
vars '{"name": "NCCL_P2P_DISABLE", "value": "1", "role": "system"}, {"name": "NCCL_PROTO", "value": "LL128", "role": "tuning"}'
expect_exit 1 "verify: the cure runs, LL128 corrupts" -- "$TOPOTUNE" verify "$p" --topology "$specs/rtx4090-8x-pcie.json" -b 8 -e 128 --json
check "--json: the reference runs, env and env+table corrupt, no gain" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference_env"] == {"NCCL_P2P_DISABLE": "1"}, d["reference_env"]
for s in d["sizes"]:
    assert s["outcome_reference"] == "ok" and s["busbw_defaults"] is not None, s
    assert s["outcome_env"] == "corrupts" and s["outcome_env_table"] == "corrupts", s
    assert s["busbw_env_table"] is None and s["gain_vs_env_pct"] is None and s["gain_vs_defaults_pct"] is None, s' "$TEST_TMP/out"

# 3. Rows for 4 nodes x 32 ranks only, on one node of 8 GPUs: none applies, and it says so.
vars ""
table "allreduce,0,inf,4,32,tree,simple,0"
expect_exit 0 "verify: no row fits the run" -- "$TOPOTUNE" verify "$p" --topology "$specs/hgx-h100.json" -b 8 -e 128
check "0 of 1 rows fit, said" grep -q "0 of its 1 all_reduce row(s) fit 1 node(s) x 8 rank(s)" "$TEST_TMP/out"
check "no row fits: said" grep -q "^# no row fits this run" "$TEST_TMP/out"
expect_exit 0 "verify --json: no row fits the run" -- "$TOPOTUNE" verify "$p" --topology "$specs/hgx-h100.json" -b 8 -e 128 --json
check "--json: table_rows_fitting 0" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["table_rows"] == 1 and d["table_rows_fitting"] == 0, d' "$TEST_TMP/out"

# 4. A workload profile's rows: -C all_gather applies the allgather row (SIMPLE where NCCL's
# defaults pick LL at 1 MiB) and says the allreduce row is left to -C all_reduce.
table "allreduce,0,inf,*,*,ring,ll,0" "allgather,0,inf,*,*,ring,simple,0"
expect_exit 0 "verify -C all_gather" -- "$TOPOTUNE" verify "$p" -C all_gather --topology "$specs/hgx-h100.json" -b 1M -e 1M
check "the all_gather run named" grep -q "^# PREDICTED all_gather (float) by the topotune model" "$TEST_TMP/out"
check "1 of its 1 all_gather rows fits" grep -q "1 of its 1 all_gather row(s) fit 1 node(s) x 8 rank(s)" "$TEST_TMP/out"
check "the all_reduce row left to -C all_reduce" grep -q "^# 1 row(s) for all_reduce are not verified by this run: verify -C all_reduce shows them" "$TEST_TMP/out"
check "the row's pair applied" grep -q "^ *predicted *1048576 .* RING/SIMPLE\*" "$TEST_TMP/out"
# The sizes are those topotune-bench runs (and the measured comparison measures): on a rack of
# 72 GPUs an all_gather of 1000 B runs nothing, 4000 B runs 3456 B.
expect_exit 0 "verify -C all_gather on 72 ranks" -- "$TOPOTUNE" verify "$p" -C all_gather --topology "$specs/gb200-nvl72.json" -b 1000 -e 4000
check "one line, at 3456 B" test "$(awk '/^ *predicted/ {printf "%s ", $2}' "$TEST_TMP/out")" = "3456 "
# A table planted as a link beside profile.json was read through it: refused, as profile.json
# in a profile directory is not followed.
mkdir -p "$TEST_TMP/linked"
cp "$p/profile.json" "$TEST_TMP/linked/"
echo "secret" >"$TEST_TMP/secret.txt"
ln -s "$TEST_TMP/secret.txt" "$TEST_TMP/linked/tuner-table.txt"
expect_exit 2 "a tuner-table.txt that is a link" -- "$TOPOTUNE" verify "$TEST_TMP/linked" \
    --topology "$specs/hgx-h100.json"
expect_stderr_has "tuner-table.txt' is not a regular file (a link?)" "said"
# -b above -e printed a header without a row and exited 0
expect_exit 2 "verify -b 1G -e 8" -- "$TOPOTUNE" verify "$p" -b 1G -e 8 --topology "$specs/hgx-h100.json"
expect_stderr_has "-e (--maxbytes) 8 is below -b (--minbytes) 1073741824" "said"
expect_exit 2 "verify -C sendrecv" -- "$TOPOTUNE" verify "$p" -C sendrecv --topology "$specs/hgx-h100.json"
expect_stderr_has "asks no tuner" "sends and receives refused, with why"
finish
