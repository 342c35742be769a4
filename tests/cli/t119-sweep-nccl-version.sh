#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sweep's NCCL version rules with the NCCL the runs load (a stand-in libnccl.so.2 that says
# 2.22.3 or 2.29.3): a variable that release does not read is dropped, a fixed one it does not
# read is warned about, and --resume under another release is refused; where no version is
# known (a topology file), the variables only some releases read are said to be unchecked; with
# --hosts the release is the hosts' (their map through mpirun), not unknown. A variable NCCL reads
# for some collectives only is dropped where the sweep runs none of them: NCCL_PAT_ENABLE without
# all_gather nor reduce_scatter, NCCL_NVLS_CHUNKSIZE without a collective NVLS runs (across nodes
# as NCCL counts them, all_reduce alone), the point-to-point channels without alltoall nor
# sendrecv; --resume refuses a sweep that dropped others. fake-bench.sh (mode collectives) stands
# in for topotune-bench.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
fakes="$TOPOTUNE_BIN/tests/tuner"
if [ ! -r "$fakes/libtuner-fake-nccl-2.22.so" ]; then
    echo "note: the stand-in NCCL libraries are not built here: not run"
    finish
    exit
fi
mkdir n22 n29
cp "$fakes/libtuner-fake-nccl-2.22.so" n22/libnccl.so.2
cp "$fakes/libtuner-fake-nccl.so" n29/libnccl.so.2
fake_bench bench collectives
# sendrecv: a workload that reads NCCL_P2P_PER_CHANNEL_NET_BW (cases 1-5)
printf '{"schema": "topotune/workload/1", "entries": [{"collective": "sendrecv", "size": 1048576, "weight": 1}]}\n' >p2p.json
cat >space.json <<'JSON'
{"schema": "topotune/space/1", "backend": "nccl", "sizes": {"min": "1M", "max": "1M"},
 "vars": {"NCCL_PAT_ENABLE": [null, "0"], "NCCL_P2P_PER_CHANNEL_NET_BW": [null, "28"]},
 "fixed": {"NCCL_CTA_POLICY": "1"}, "repeat": 1, "timeout_s": 10}
JSON
sweep() { env LD_LIBRARY_PATH="$PWD/$1" TOPOTUNE_BENCH_PROGRAM="$PWD/bench" "$TOPOTUNE" sweep \
    --space space.json --workload p2p.json --no-cures "${@:2}"; }

# 1. NCCL 2.22.3: PAT (2.23.4) and the per-channel bandwidth (2.29.2) are dropped; the fixed CTA
# policy (2.27.3) is set in every run and changes nothing: said.
expect_exit 0 "sweep under NCCL 2.22.3" -- sweep n22 --out s22
check "both dropped, with the release that reads each" python3 - s22/sweep.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["versions"]["nccl"] == "2.22.3", d["versions"]
why = {p["var"]: p["reason"] for p in d["pruned"]}
assert "NCCL 2.23.4 on does" in why["NCCL_PAT_ENABLE"], why
assert "NCCL 2.29.2 on does" in why["NCCL_P2P_PER_CHANNEL_NET_BW"], why
assert len(d["configs"]) == 1, d["configs"]
PY
expect_stderr_has "fixed NCCL_CTA_POLICY: NCCL 2.22.3 does not read it" "the fixed variable said"

# 2. The same directory resumed under NCCL 2.29.3: refused, both releases named, nothing run.
lines=$(wc -l <s22/results.jsonl)
expect_exit 2 "resume under another NCCL" -- sweep n29 --out s22 --resume
expect_stderr_has "swept with NCCL 2.22.3, the runs now load NCCL 2.29.3" "both releases named"
check "nothing more run" test "$(wc -l <s22/results.jsonl)" -eq "$lines"

# 3. NCCL 2.29.3 reads all three: nothing dropped for its release, nothing said (PAT is dropped for
# another reason: this sendrecv sweep runs no all_gather nor reduce_scatter, case 6).
expect_exit 0 "sweep under NCCL 2.29.3" -- sweep n29 --out s29
check "nothing dropped for the release" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert [p["var"] for p in d["pruned"]] == ["NCCL_PAT_ENABLE"], d
assert "does not read" not in d["pruned"][0]["reason"] and len(d["configs"]) == 2, d' s29/sweep.json
check "no warning" bash -c "! grep -q 'does not read\|unchecked' '$TEST_TMP/err'"

# 4. A topology file names no NCCL: the variables only some releases read are said unchecked.
expect_exit 0 "sweep with --topology" -- sweep n29 --out st --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
expect_stderr_has "the NCCL version the runs load is not known" "said"
expect_stderr_has ": NCCL_P2P_PER_CHANNEL_NET_BW, read by some NCCL releases only" "named"

# 5. --hosts: the hosts' NCCL (localhost's map, loading the stand-in) decides.
expect_exit 0 "sweep --hosts localhost under NCCL 2.22.3" -- sweep n22 --out sh --hosts localhost
check "the host's release recorded and applied" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["versions"]["nccl"] == "2.22.3", d["versions"]
assert {p["var"] for p in d["pruned"]} == {"NCCL_PAT_ENABLE", "NCCL_P2P_PER_CHANNEL_NET_BW"}, d["pruned"]' sh/sweep.json

# 6. PAT only where the sweep runs all_gather or reduce_scatter; the network's point-to-point
# channels only where it runs alltoall or sendrecv.
cat >pat.json <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "1M"},
 "vars": {"NCCL_PAT_ENABLE": [null, "0"], "NCCL_ALGO": [null, "Ring"]}, "repeat": 1}
JSON
two="$TOPOTUNE_SRC/profiles/specs/hgx-h100-2nodes.json"
expect_exit 0 "an all_reduce sweep" -- "$TOPOTUNE" sweep --space pat.json --topology "$two" --out pat-ar -q
check "PAT dropped, with why" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [p["var"] for p in d["pruned"]] == ["NCCL_PAT_ENABLE"] and "all_gather" in d["pruned"][0]["reason"], d["pruned"]
assert len(d["configs"]) == 2, d["configs"]' pat-ar/sweep.json
expect_exit 0 "an FSDP sweep" -- "$TOPOTUNE" sweep --space pat.json --topology "$two" --out pat-fsdp --workload fsdp -q
check "PAT kept" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["pruned"] == [] and len(d["configs"]) == 4, d' pat-fsdp/sweep.json
cat >p2p-space.json <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "1M"},
 "vars": {"NCCL_NCHANNELS_PER_NET_PEER": [null, "4"], "NCCL_P2P_PER_CHANNEL_NET_BW": [null, "28"],
          "NCCL_NVLS_CHUNKSIZE": [null, "262144"]}, "repeat": 1}
JSON
expect_exit 0 "an all_reduce sweep of the point-to-point channels" -- "$TOPOTUNE" sweep --space p2p-space.json \
    --topology "$two" --out p2p-ar -q
check "both dropped, NVLS's chunk kept" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); why = {p["var"]: p["reason"] for p in d["pruned"]}
assert sorted(why) == ["NCCL_NCHANNELS_PER_NET_PEER", "NCCL_P2P_PER_CHANNEL_NET_BW"], why
assert all("which alltoall and sendrecv are made of" in w for w in why.values()), why
assert all("this sweep runs all_reduce on 2 node(s)" in w for w in why.values()), why
assert len(d["configs"]) == 2, d["configs"]' p2p-ar/sweep.json
expect_exit 0 "an MoE sweep of them" -- "$TOPOTUNE" sweep --space p2p-space.json --topology "$two" \
    --out p2p-moe --workload moe -q
check "the channels kept, NVLS's chunk dropped (alltoall runs no NVLS)" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert [p["var"] for p in d["pruned"]] == ["NCCL_NVLS_CHUNKSIZE"], d["pruned"]
assert "NVLS for all_reduce, all_gather and reduce_scatter on one node" in d["pruned"][0]["reason"]
assert len(d["configs"]) == 4, d["configs"]' p2p-moe/sweep.json
# NVLS across nodes runs all_reduce alone (without CollNet): an FSDP sweep drops its chunk size on
# two nodes and keeps it on one.
expect_exit 0 "an FSDP sweep of them on 2 nodes" -- "$TOPOTUNE" sweep --space p2p-space.json --topology "$two" \
    --out p2p-fsdp2 --workload fsdp -q
check "all three dropped" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); why = {p["var"]: p["reason"] for p in d["pruned"]}
assert sorted(why) == ["NCCL_NCHANNELS_PER_NET_PEER", "NCCL_NVLS_CHUNKSIZE", "NCCL_P2P_PER_CHANNEL_NET_BW"], why
assert "across nodes without CollNet for all_reduce alone" in why["NCCL_NVLS_CHUNKSIZE"], why' p2p-fsdp2/sweep.json
expect_exit 0 "an FSDP sweep of them on 1 node" -- "$TOPOTUNE" sweep --space p2p-space.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out p2p-fsdp1 --workload fsdp -q
check "NVLS's chunk kept there" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert "NCCL_NVLS_CHUNKSIZE" not in [p["var"] for p in d["pruned"]], d["pruned"]' \
    p2p-fsdp1/sweep.json
# CollNet fixed on lets NVLS run all_gather across nodes: kept; fixed off changes nothing.
for on in 0 1; do
    python3 -c 'import json, sys
d = json.load(open("p2p-space.json")); d["fixed"] = {"NCCL_COLLNET_ENABLE": sys.argv[1]}
json.dump(d, open("collnet%s.json" % sys.argv[1], "w"))' "$on"
    expect_exit 0 "an FSDP sweep on 2 nodes, CollNet fixed at $on" -- "$TOPOTUNE" sweep --space "collnet$on.json" \
        --topology "$two" --out "cn$on" --workload fsdp -q
done
check "NVLS's chunk dropped with CollNet off, kept with it on" python3 -c 'import json
off, on = ([p["var"] for p in json.load(open(d + "/sweep.json"))["pruned"]] for d in ("cn0", "cn1"))
assert "NCCL_NVLS_CHUNKSIZE" in off and "NCCL_NVLS_CHUNKSIZE" not in on, (off, on)'
# Two GB200 trays of one NVL72 rack are one node as NCCL counts them: NVLS runs all_gather
# there, and an FSDP sweep keeps its chunk size.
expect_exit 0 "an FSDP sweep on 2 trays of one rack" -- "$TOPOTUNE" sweep --space p2p-space.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/gb200-nvl72.json" --nodes 2 --out p2p-gb -q --workload fsdp
check "NVLS's chunk kept, one node said" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); why = {p["var"]: p["reason"] for p in d["pruned"]}
assert "NCCL_NVLS_CHUNKSIZE" not in why and "on 1 node(s)" in why["NCCL_P2P_PER_CHANNEL_NET_BW"], why' \
    p2p-gb/sweep.json
# A sweep whose dropped variables were another topotune's (one that read NCCL_NVLS_CHUNKSIZE as
# swept there) is not resumed: its configurations would differ.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["pruned"] = [p for p in d["pruned"] if p["var"] != "NCCL_NVLS_CHUNKSIZE"]
json.dump(d, open(sys.argv[1], "w"))' p2p-fsdp2/sweep.json
lines=$(wc -l <p2p-fsdp2/results.jsonl)
expect_exit 2 "resume under other rules" -- "$TOPOTUNE" sweep --space p2p-space.json --topology "$two" \
    --out p2p-fsdp2 --workload fsdp -q --resume
expect_stderr_has "it dropped [NCCL_NCHANNELS_PER_NET_PEER, NCCL_P2P_PER_CHANNEL_NET_BW]; this sweep drops [NCCL_NVLS_CHUNKSIZE," \
    "both lists named"
check "nothing more run" test "$(wc -l <p2p-fsdp2/results.jsonl)" -eq "$lines"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["pruned"].append({"var": "NCCL_ALGO", "reason": "older rules"})
json.dump(d, open(sys.argv[1], "w"))' p2p-fsdp1/sweep.json
expect_exit 2 "resume where the old sweep dropped one more" -- "$TOPOTUNE" sweep --space p2p-space.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out p2p-fsdp1 --workload fsdp -q --resume
expect_stderr_has "NCCL_ALGO]; this sweep drops [" "the extra one named"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["pruned"] = list(reversed(d["pruned"][:-1]))
for p in d["pruned"]: p["reason"] = "worded otherwise"
json.dump(d, open(sys.argv[1], "w"))' p2p-fsdp1/sweep.json
expect_exit 0 "the same rules resume (order and wording aside)" -- "$TOPOTUNE" sweep --space p2p-space.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out p2p-fsdp1 --workload fsdp -q --resume
finish
