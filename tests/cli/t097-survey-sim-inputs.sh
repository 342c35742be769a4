#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey --backend sim` on inputs nobody scripted: a shipped spec whose defaults the
# model predicts to hang is refused with that outcome; two nodes make one pair, measured once;
# --pairs all on more nodes than it can take is refused before anything is written.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
cluster() { # cluster FILE SPEC COUNT [FAULTS JSON]
    printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "%s", "count": %s}], "faults": %s}\n' \
        "$2" "$3" "${4:-[]}" >"$1"
}

# The shipped RTX 4090 spec: P2P over PCIe hangs at NCCL's defaults; said so, not "no GPU".
cluster rtx.json rtx4090-8x-pcie.json 4
expect_exit 2 "RTX 4090 nodes refused" -- "$TOPOTUNE" survey --backend sim --cluster rtx.json --out rtx
expect_stderr_has "every launch on 'rtx4090-8x-pcie.json' hangs at init with NCCL's defaults" \
    "the predicted outcome said"
check "not 'no GPU'" test "$(grep -c "no GPU" "$TEST_TMP/err")" = 0
expect_no_file rtx "nothing written"

# Two nodes: one pair, one pair round (three matchings of two nodes are the same pair).
cluster two.json hgx-h100.json 2
expect_exit 0 "two nodes" -- "$TOPOTUNE" survey --backend sim --cluster two.json --out two
check "the pair measured once" python3 - two <<'PY'
import json, sys
stages = [json.loads(l)["stage"] for l in open(sys.argv[1] + "/launches.jsonl")]
assert stages.count("pairs") == 1, stages
assert len(json.load(open(sys.argv[1] + "/survey.json"))["pairs"]) == 1
PY
expect_stderr_has "[launch 1 of ~3]" "the plan counts one pair round"
# Three nodes have three pairs: three rounds, each pair once.
cluster three.json hgx-h100.json 3
expect_exit 0 "three nodes" -- "$TOPOTUNE" survey --backend sim --cluster three.json --out three
check "three pairs, each once" python3 - three/survey.json <<'PY'
import json, sys
pairs = sorted(tuple(sorted(p["hosts"])) for p in json.load(open(sys.argv[1]))["pairs"])
assert pairs == [("node0001", "node0002"), ("node0001", "node0003"), ("node0002", "node0003")], pairs
PY

# --pairs all on 65,536 nodes wrote gigabytes: above 512 nodes it is refused, nothing written.
cluster huge.json hgx-h100.json 65536
expect_exit 2 "--pairs all on 65,536 nodes refused" -- timeout 120 "$TOPOTUNE" survey --backend sim \
    --cluster huge.json --pairs all --out huge
expect_stderr_has "--pairs all: 65536 nodes would make 2147450880 pairs" "the size said"
expect_no_file huge "nothing written"
cluster max.json hgx-h100.json 513
expect_exit 2 "--pairs all on 513 nodes refused" -- timeout 120 "$TOPOTUNE" survey --backend sim \
    --cluster max.json --pairs all --out max
finish
