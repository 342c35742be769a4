#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey --backend sim`: a node that lost a GPU or a NIC is a class of its own; next to
# the larger class of its GPU model it is named node-differs with the facts that differ, never
# healthy (it once got no verdict and went to healthy.hostfile); two legitimate classes (another
# GPU model; or the same model, neither a part short of the other) are not. --expect SPEC: every
# node of another class is node-differs, whatever the sizes; a bad --expect is refused.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
spec() { # spec FILE GPUS NICS
    printf '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": %s, "fabric": "nvswitch", "nics": [{"model": "CX7-400G-IB", "count": %s, "per": "gpu"}]}\n' \
        "$2" "$3" >"$1"
}
verdicts() {
    python3 -c 'import json, sys
print(";".join(sorted(" ".join(v["hosts"]) + " " + v["kind"] for v in json.load(open(sys.argv[1]))["verdicts"])))' "$1/survey.json"
}
spec lost-gpu.json 7 8
spec lost-nic.json 8 7
cat >lost.json <<'JSON'
{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 12},
 {"spec": "lost-gpu.json", "count": 1, "prefix": "g"}, {"spec": "lost-nic.json", "count": 2, "prefix": "n"}],
 "faults": [{"kind": "slow-link", "hosts": ["node0005"], "factor": 0.5}]}
JSON
expect_exit 1 "lost parts: exit 1" -- "$TOPOTUNE" survey --backend sim --cluster lost.json --out lost
got=$(verdicts lost)
check "the nodes that lost a part node-differs, the slow link link-slow (got: $got)" test "$got" = \
    "g0001 node-differs;n0001 node-differs;n0002 node-differs;node0005 link-slow"
check "the differing facts as evidence; none of them healthy" python3 - lost <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/survey.json"))
ev = {v["hosts"][0]: v["evidence"] for v in s["verdicts"]}
assert ev["g0001"]["differs"]["gpus"] == [7, 8], ev["g0001"]
assert ev["n0001"]["differs"]["nics"] == [7, 8] and ev["n0001"]["differs"]["nic_gbps"] == [2800, 3200], ev["n0001"]
assert ev["g0001"]["like"].startswith("h100-") and not ev["g0001"]["expected"], ev["g0001"]
healthy = open(d + "/healthy.hostfile").read().split()
assert not {"g0001", "n0001", "n0002", "node0005"} & set(healthy) and len(healthy) == 11, healthy
PY
check "survey.json valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/survey.schema.json" lost/survey.json

# Legitimate mixed fleets: an A100 class beside the H100s; six H100s with 4 NICs beside six with
# 8 (as many: no minority, a design rather than a part lost).
cat >mixed.json <<'JSON'
{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 10},
 {"spec": "dgx-a100.json", "count": 3, "prefix": "a"}]}
JSON
expect_exit 0 "an A100 class beside the H100s: exit 0" -- "$TOPOTUNE" survey --backend sim --cluster mixed.json --out mixed
check "nothing named ($(verdicts mixed))" test -z "$(verdicts mixed)"
spec half-nics.json 8 4
cat >halves.json <<'JSON'
{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 6},
 {"spec": "half-nics.json", "count": 6, "prefix": "h"}]}
JSON
expect_exit 0 "two H100 classes of six: exit 0" -- "$TOPOTUNE" survey --backend sim --cluster halves.json --out halves
check "nothing named ($(verdicts halves))" test -z "$(verdicts halves)"

# --expect: the H100 class of four nodes beside six short of NICs; and an A100 expected.
cat >expect.json <<'JSON'
{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4},
 {"spec": "half-nics.json", "count": 6, "prefix": "h"}]}
JSON
expect_exit 1 "--expect the full H100: exit 1" -- "$TOPOTUNE" survey --backend sim --cluster expect.json \
    --expect "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out expect
check "the six short of NICs node-differs against --expect ($(verdicts expect))" test "$(verdicts expect)" = \
    "h0001 node-differs;h0002 node-differs;h0003 node-differs;h0004 node-differs;h0005 node-differs;h0006 node-differs"
check "evidence: expected, the NICs" python3 - expect/survey.json <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["verdicts"][0]
assert v["evidence"]["expected"] is True and v["evidence"]["differs"]["nics"] == [4, 8], v
PY
expect_exit 1 "--expect an A100: every node differs" -- "$TOPOTUNE" survey --backend sim --cluster expect.json \
    --expect "$TOPOTUNE_SRC/profiles/specs/dgx-a100.json" --out expect-a100
check "ten nodes named node-differs" test "$(grep -c node-differs expect-a100/excluded.txt)" -eq 10
expect_exit 2 "--expect a missing file" -- "$TOPOTUNE" survey --backend sim --cluster expect.json \
    --expect nosuch.json --out expect-bad
expect_no_file expect-bad "nothing written"
finish
