#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hardware specs through topo and predict: expansion, predicted labels, bad specs.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"

expect_exit 0 "topo --input spec" -- "$TOPOTUNE" topo --input "$specs/hgx-h100.json" --json "$TEST_TMP/h100.json"
check "spec expands: 8 GPUs, NV18 on 4 NVSwitches, 8 NICs at 400G, each beside its GPU" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
assert t["source"]["kind"] == "spec" and len(t["gpus"]) == 8 and t["nvswitches"] == 4
assert all(c == "NV18" for i, r in enumerate(t["matrix"]["rows"][:8]) for j, c in enumerate(r[:8]) if i != j)
assert len(t["nics"]) == 8 and all(n["speed_gbps"] == 400 and n["kind"] == "ib" for n in t["nics"])
assert all(t["matrix"]["rows"][g][8 + g] == "PIX" for g in range(8))
assert t["gpus"][0]["sm"] == 90 and t["p2p_broken"] is False' "$TEST_TMP/h100.json"
# A topology JSON reads back with the same class.
expect_exit 0 "topology JSON as input" -- "$TOPOTUNE" topo --input "$TEST_TMP/h100.json" --json "$TEST_TMP/again.json"
check "same class after a round trip" python3 -c '
import json, sys
a, b = (json.load(open(f))["class"]["id"] for f in sys.argv[1:])
assert a == b, (a, b)' "$TEST_TMP/h100.json" "$TEST_TMP/again.json"

# Every catalog GPU makes a spec that predicts (the catalog's later entries among them: a spec
# naming one was refused as an unknown GPU); its SM is the catalog's.
python3 - "$TOPOTUNE_SRC/profiles/hardware/gpus.json" >"$TEST_TMP/catalog.txt" <<'PY'
import json, sys
for g in json.load(open(sys.argv[1]))["gpus"]:
    fabric = "nvswitch" if g["nvswitches"] else "pcie"
    print(g["name"], g["sm"], fabric, 4 if g["name"].startswith(("GB200", "GB300")) else 2)
PY
while read -r gpu sm fabric count; do
    printf '{"schema": "topotune/spec/1", "name": "x", "gpu": "%s", "count": %s, "fabric": "%s"}\n' \
        "$gpu" "$count" "$fabric" >"$TEST_TMP/one.json"
    expect_exit 0 "a spec of $gpu predicts" -- "$TOPOTUNE" predict --input "$TEST_TMP/one.json" -b 1M -e 1M --json
    check "$gpu: sm $sm" bash -c "'$TOPOTUNE' topo --input '$TEST_TMP/one.json' --json - 2>/dev/null |
        python3 -c 'import json, sys; assert json.load(sys.stdin)[\"gpus\"][0][\"sm\"] == $sm'"
done <"$TEST_TMP/catalog.txt"

# Every shipped spec and collective across two nodes: a bandwidth above 0 at every size, or a
# stated fault (exit 1). A spec without NICs (nodes over sockets) predicted a sendrecv time of
# inf and a busbw of 0 with exit 0: a band of 0 to 0, a check that cannot fail.
for spec in "$specs"/*.json; do
    for coll in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
        rc=0
        "$TOPOTUNE" predict --input "$spec" --nodes 2 -C "$coll" -b 1K -e 64M --json \
            >"$TEST_TMP/p2.jsonl" 2>"$TEST_TMP/p2.err" || rc=$?
        check "$(basename "$spec") $coll on 2 nodes: busbw above 0 and finite, or a fault" \
            python3 -c '
import json, math, sys
rc = int(sys.argv[2])
ev = [json.loads(l) for l in open(sys.argv[1])]
sizes = [e for e in ev if e["event"] == "size"]
if rc == 1:
    assert not sizes or ev[-1]["outcome"] != "ok", ev[-1]
else:
    assert rc == 0 and sizes, (rc, len(sizes))
    assert all(e["busbw"] > 0 and math.isfinite(e["time_us"]) for e in sizes), sizes[:2]' \
            "$TEST_TMP/p2.jsonl" "$rc"
    done
done

# A larger size never takes less time on the same algorithm and protocol: NCCL's tree
# correction steps at each power of two, and 3.5 MiB of Tree LL128 took longer than 4 MiB.
for spec in "$specs"/*.json; do
    for nodes in 2 4; do # Tree runs across nodes
        "$TOPOTUNE" predict --input "$spec" --nodes "$nodes" -b 64K -e 512M --json >"$TEST_TMP/m1.jsonl" 2>/dev/null
        "$TOPOTUNE" predict --input "$spec" --nodes "$nodes" -b 112K -e 512M --json >"$TEST_TMP/m2.jsonl" 2>/dev/null
        check "$(basename "$spec") on $nodes node(s): time grows with size" python3 - "$TEST_TMP/m1.jsonl" "$TEST_TMP/m2.jsonl" <<'PY'
import json, sys
rows = sorted((e["size"], e["time_us"], e["algo"], e["proto"]) for f in sys.argv[1:] for l in open(f)
              for e in [json.loads(l)] if e["event"] == "size")
bad = [(a, b) for a, b in zip(rows, rows[1:]) if a[2:] == b[2:] and b[1] < a[1] * (1 - 1e-9)]
assert not bad, bad[:3]
PY
    done
done

expect_exit 0 "predict" -- "$TOPOTUNE" predict --input "$specs/hgx-h100.json"
check "every row predicted" bash -c "grep -v '^#' '$TEST_TMP/out' | grep -v '^ *predicted ' | wc -l | grep -qx 0"
check "header says PREDICTED" grep -q "^# PREDICTED" "$TEST_TMP/out"
check "and the units of its columns, as nccl-tests gives them" grep -qE '^# +\(elements\) +\(GB/s\) +\(GB/s\) +\(GB/s\) +\(us\)$' "$TEST_TMP/out"
expect_exit 0 "predict --json" -- "$TOPOTUNE" predict --input "$specs/hgx-h100-2nodes.json" --json
check "JSON events predicted, 16 ranks" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[0]["ranks"] == 16 and ev[0]["nodes"] == 2
assert all(e["predicted"] is True for e in ev if "predicted" in e)
assert [e["event"] for e in ev][-1] == "end"' "$TEST_TMP/out"
expect_exit 1 "predicted hang, JSON" -- "$TOPOTUNE" predict --input "$specs/rtx4090-8x-pcie.json" --json
check "stdout stays JSON Lines with a predicted hang" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-1]["outcome"] == "timeout"' "$TEST_TMP/out"
expect_exit 1 "predicted hang exits 1" -- "$TOPOTUNE" predict --input "$specs/rtx4090-8x-pcie.json"
check "the hang is explained" grep -q "predicted outcome: hang at init" "$TEST_TMP/out"
expect_exit 0 "with the fix" -- "$TOPOTUNE" predict --input "$specs/rtx4090-8x-pcie.json" --env NCCL_P2P_DISABLE=1
expect_exit 2 "bad --env" -- "$TOPOTUNE" predict --input "$specs/hgx-h100.json" --env "NCCL_ALGO=\$(rm)"
# NCCL's per-function syntax, parts separated by ';' (docs/model.md): refused before as a
# character outside the value's set
expect_exit 0 "NCCL_ALGO per function, all_reduce" -- "$TOPOTUNE" predict --input "$specs/hgx-h100.json" \
    -b 1G -e 1G --env 'NCCL_ALGO=allreduce:ring;broadcast:tree'
check "all_reduce on its part: Ring" grep -qE '^ +predicted +1073741824 .* RING ' "$TEST_TMP/out"
expect_exit 1 "broadcast on its part: Tree, which broadcast has not" -- "$TOPOTUNE" predict \
    --input "$specs/hgx-h100.json" -C broadcast -b 1G -e 1G --env 'NCCL_ALGO=allreduce:ring;broadcast:tree'
"$TOPOTUNE" expect --input "$specs/hgx-h100.json" -b 1G -e 1G --env 'NCCL_ALGO=allreduce:ring;broadcast:ring' \
    --format nhc >"$TEST_TMP/semi.nhc"
check "expect's NHC check quotes it" grep -qF "out=\$(NCCL_ALGO='allreduce:ring;broadcast:ring' " "$TEST_TMP/semi.nhc"
check "and shellcheck accepts it" shellcheck -s bash "$TEST_TMP/semi.nhc"

# Workstation and consumer cards published nccl-tests runs use: 8 A40s in NVLink pairs (a bridge
# per pair) with P2P over PCIe between the pairs, as nccl-tests issue 74's server; two RTX 5090s,
# whose stock driver offers no P2P, through host memory; the 5090 has no NVLink to bridge.
printf '{"schema": "topotune/spec/1", "gpu": "A40", "count": 8, "fabric": "nvlink", "cpu": {"vendor": "amd"}}\n' >"$TEST_TMP/a40.json"
expect_exit 0 "topo: 8 A40 in NVLink pairs" -- "$TOPOTUNE" topo --input "$TEST_TMP/a40.json"
check "NV4 within a pair, PCIe between pairs" python3 - "$TEST_TMP/out" <<'PY'
import sys
rows = {l.split("\t")[0]: l.split("\t")[1:9] for l in open(sys.argv[1]) if l.startswith("GPU") and "\t" in l}
assert rows["GPU0"][1].strip() == "NV4", rows["GPU0"]
assert all(c.strip() in ("PHB", "SYS", "NODE", "PXB", "PIX") for c in rows["GPU0"][2:]), rows["GPU0"]
PY
expect_exit 0 "predict: 8 A40, P2P offered" -- "$TOPOTUNE" predict --input "$TEST_TMP/a40.json" -b 1G -e 1G --json
check "no hang, no host memory: P2P between the pairs" python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-1]["outcome"] == "ok" and [e for e in ev if e["event"] == "size"][0]["busbw"] > 0, ev[-1]' "$TEST_TMP/out"
printf '{"schema": "topotune/spec/1", "gpu": "RTX-5090", "count": 2, "cpu": {"vendor": "amd", "sockets": 1}}\n' >"$TEST_TMP/5090.json"
expect_exit 0 "predict: 2 RTX 5090, stock driver" -- "$TOPOTUNE" predict --input "$TEST_TMP/5090.json" -b 1G -e 1G
check "through host memory, one switch's Gen5 link shared by the two: 0.8 x 48 / 2 = 19.2" \
    grep -qE "^ +predicted +1073741824 .* 19\.[12][0-9] +RING +SIMPLE" "$TEST_TMP/out"
printf '{"schema": "topotune/spec/1", "gpu": "RTX-5090", "count": 2, "fabric": "nvlink"}\n' >"$TEST_TMP/5090-nvl.json"
expect_exit 2 "an RTX 5090 with NVLink: refused" -- "$TOPOTUNE" predict --input "$TEST_TMP/5090-nvl.json"

# Current systems: P2P as the driver reports it, all-to-all NVLink, NVLink domains across nodes.
printf '{"schema": "topotune/spec/1", "gpu": "RTX-4090", "count": 8, "cpu": {"vendor": "amd"}}\n' >"$TEST_TMP/stock.json"
expect_exit 0 "8 RTX 4090 with the stock driver (no P2P offered) run through host memory" -- \
    "$TOPOTUNE" predict --input "$TEST_TMP/stock.json" -b 1G -e 1G
check "over SHM: 0.8 x the Gen4 switch link's 24 GB/s over its 2 GPUs, no hang" \
    grep -qE "^ +predicted +1073741824 .* 9\.[56][0-9] +RING +SIMPLE" "$TEST_TMP/out"
# Through host memory two GPUs behind one PCIe switch share its link to the CPU both ways: a
# ring (every GPU sends) gets half, a chain of two (one sender) all of it; a GPU per socket
# shares nothing (then the CPU interconnect, xGMI's 16 GB/s, decides).
declare -A bw
for sockets in 1 2; do
    printf '{"schema": "topotune/spec/1", "gpu": "RTX-4090", "count": 2, "cpu": {"vendor": "amd", "sockets": %d}}\n' \
        "$sockets" >"$TEST_TMP/shm$sockets.json"
    for c in all_reduce all_gather alltoall broadcast; do
        bw[$c$sockets]=$("$TOPOTUNE" predict --input "$TEST_TMP/shm$sockets.json" -C "$c" -b 1G -e 1G |
            awk '/^ +predicted/ {print $6}')
    done
done
check "one switch: the rings and alltoall at half the link (9.6)" python3 -c '
import sys; assert all(9.5 < float(v) < 9.7 for v in sys.argv[1:]), sys.argv' \
    "${bw[all_reduce1]}" "${bw[all_gather1]}" "${bw[alltoall1]}"
check "one switch: a chain of two at the whole link (19.2)" python3 -c '
import sys; assert 19.0 < float(sys.argv[1]) < 19.3, sys.argv' "${bw[broadcast1]}"
check "a GPU per socket: nothing shared, all at 0.8 x xGMI (12.8)" python3 -c '
import sys; assert all(12.7 < float(v) < 12.9 for v in sys.argv[1:]), sys.argv' \
    "${bw[all_reduce2]}" "${bw[all_gather2]}" "${bw[alltoall2]}" "${bw[broadcast2]}"
# What shares the link is the PCIe path, not what nvidia-smi letters: with P2P off a bridged
# pair behind one switch goes through host memory as an unbridged one does.
for fabric in pcie nvlink; do
    printf '{"schema": "topotune/spec/1", "gpu": "A100-PCIE-80GB", "count": 2, "fabric": "%s", "cpu": {"sockets": 1}}\n' \
        "$fabric" >"$TEST_TMP/a100-$fabric.json"
    bw[$fabric]=$("$TOPOTUNE" predict --input "$TEST_TMP/a100-$fabric.json" -b 1G -e 1G --env NCCL_P2P_DISABLE=1 |
        awk '/^ +predicted/ {print $6}')
done
check "P2P off: the bridged pair shares its switch's link too (9.6 both)" python3 -c '
import sys; assert all(9.5 < float(v) < 9.7 for v in sys.argv[1:]), sys.argv' "${bw[pcie]}" "${bw[nvlink]}"
# Across nodes a node's part of the ring is a chain from NIC to NIC: with GPUDirect RDMA (a NIC
# beside each GPU) host memory carries one send there, the whole link (0.8 x 24).
printf '{"schema": "topotune/spec/1", "gpu": "A100-PCIE-80GB", "count": 2, "fabric": "pcie", "cpu": {"sockets": 1},
 "nics": [{"model": "CX7-400G-IB", "count": 1, "per": "gpu"}]}\n' >"$TEST_TMP/a100-2n.json"
for c in all_reduce broadcast sendrecv; do
    bw[2n$c]=$("$TOPOTUNE" predict --input "$TEST_TMP/a100-2n.json" --nodes 2 -C "$c" -b 1G -e 1G \
        --env NCCL_P2P_DISABLE=1 | awk '/^ +predicted/ {print $6}')
done
check "2 nodes, P2P off, GDR: the rings and chains at the whole link (19.2)" python3 -c '
import sys; assert all(19.0 < float(v) < 19.3 for v in sys.argv[1:]), sys.argv' \
    "${bw[2nall_reduce]}" "${bw[2nbroadcast]}" "${bw[2nsendrecv]}"
# The NIC on the socket's host bridge instead (GPUDirect RDMA allowed that far): its traffic
# crosses the switches' links too, and the ring is back to the switch's share (9.6).
printf '{"schema": "topotune/spec/1", "gpu": "A100-PCIE-80GB", "count": 2, "fabric": "pcie", "cpu": {"sockets": 1},
 "nics": [{"model": "CX7-400G-IB", "count": 1, "per": "node"}]}\n' >"$TEST_TMP/a100-2n-far.json"
bw[far]=$("$TOPOTUNE" predict --input "$TEST_TMP/a100-2n-far.json" --nodes 2 -b 1G -e 1G \
    --env NCCL_P2P_DISABLE=1 --env NCCL_NET_GDR_LEVEL=SYS | awk '/^ +predicted/ {print $6}')
check "2 nodes, P2P off, the NIC on the host bridge: the switch's share (9.6)" python3 -c '
import sys; assert 9.5 < float(sys.argv[1]) < 9.7, sys.argv' "${bw[far]}"
# Each GPU's own link decides with its switch-mates: a lone GPU at x8 (12 GB/s) is no slower
# than two x16 GPUs sharing one switch's link (24 / 2), so the ring runs at 0.8 x 12.
printf '{"schema": "topotune/spec/1", "gpu": "RTX-4090", "count": 3, "cpu": {"vendor": "amd", "sockets": 1}}\n' \
    >"$TEST_TMP/three.json"
"$TOPOTUNE" topo --input "$TEST_TMP/three.json" --json "$TEST_TMP/three-t.json" 2>/dev/null
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert [r[:3] for r in d["matrix"]["rows"][:3]] == [
    ["X", "PIX", "PHB"], ["PIX", "X", "PHB"], ["PHB", "PHB", "X"]], d["matrix"]
d["gpus"][2]["pcie"].update(width=8, gbs=15.752); json.dump(d, open(sys.argv[2], "w"))' \
    "$TEST_TMP/three-t.json" "$TEST_TMP/three-x8.json"
bw[x8]=$("$TOPOTUNE" predict --input "$TEST_TMP/three-x8.json" -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
check "a lone x8 GPU beside two sharing x16 ones: 9.6" python3 -c '
import sys; assert 9.5 < float(sys.argv[1]) < 9.7, sys.argv' "${bw[x8]}"
expect_exit 0 "GH200 node: topo" -- "$TOPOTUNE" topo --input "$specs/gh200-4x-slingshot.json" --json "$TEST_TMP/gh.json"
check "mesh: every pair NV6, the spec's P2P table" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
assert all(c == "NV6" for i, r in enumerate(t["matrix"]["rows"][:4]) for j, c in enumerate(r[:4]) if i != j)
assert t["p2p"]["source"] == "spec" and t["p2p"]["rows"][0] == ["X", "OK", "OK", "OK"]
assert [n["kind"] for n in t["nics"]] == ["cxi"] * 4, t["nics"]  # Slingshot, not RoCE
assert [n["netdev"] for n in t["nics"]] == ["hsn%d" % i for i in range(4)], t["nics"]' "$TEST_TMP/gh.json"
expect_exit 0 "its topology read back predicts as the spec" -- \
    "$TOPOTUNE" predict --input "$TEST_TMP/gh.json" --nodes 2 -b 32M -e 32M
grep predicted "$TEST_TMP/out" >"$TEST_TMP/gh-json.txt"
expect_exit 0 "the spec itself" -- "$TOPOTUNE" predict --input "$specs/gh200-4x-slingshot.json" --nodes 2 -b 32M -e 32M
check "the same number, over RDMA (more than sockets' 0.6 x 100 GB/s)" python3 - "$TEST_TMP/gh-json.txt" "$TEST_TMP/out" <<'PY'
import sys
a = [l for l in open(sys.argv[1])]
b = [l for l in open(sys.argv[2]) if "predicted" in l]
assert a == b and len(a) == 1, (a, b)
assert float(a[0].split()[5]) > 60, a
PY
# NCCL corrects a tree's bandwidth by size below 512 MiB only (tuning.cc, logSize < 23): two
# A100 nodes on 4 x 100G EFA, Tree/Simple, gain the correction's 1/0.9 from 256 to 512 MiB.
printf '{"schema": "topotune/spec/1", "gpu": "A100-SXM4-80GB", "count": 8, "fabric": "nvswitch",
 "nics": [{"model": "EFA-100G", "count": 4, "per": "gpu"}], "cpu": {"vendor": "intel", "sockets": 2}}\n' \
    >"$TEST_TMP/p4de.json"
for s in 256M 512M; do
    bw[tree$s]=$("$TOPOTUNE" predict --input "$TEST_TMP/p4de.json" --nodes 2 -b "$s" -e "$s" \
        --env NCCL_ALGO=Tree --env NCCL_PROTO=Simple | awk '/^ +predicted/ {print $6}')
done
check "a tree's size correction ends at 512 MiB (x 1/0.9 past it)" python3 -c '
import sys; a, b = map(float, sys.argv[1:]); assert 1.08 < b / a < 1.2, (a, b)' \
    "${bw[tree256M]}" "${bw[tree512M]}"
# Beside EFA, NCCL runs through aws-ofi-nccl and sees only its NICs: a p6-b200's two ConnectX-7
# that manage its NVSwitches (an hwloc export of one shows them) carry nothing. Counted, they
# priced 10 NICs for 8 GPUs with InfiniBand's costs (+78% at 8 MiB, +4% at 1 GiB).
for n in 0 2; do
    printf '{"schema": "topotune/spec/1", "gpu": "B200-SXM-180GB", "count": 8, "fabric": "nvswitch",
 "nics": [{"model": "EFA-400G", "count": 8, "per": "gpu"}%s], "cpu": {"vendor": "intel", "sockets": 2}}\n' \
        "$([ "$n" = 0 ] || echo ', {"model": "CX7-400G-IB", "count": 2}')" >"$TEST_TMP/p6-$n.json"
    "$TOPOTUNE" predict --input "$TEST_TMP/p6-$n.json" --nodes 2 -b 8M -e 1G |
        awk '/^ +predicted/ {print $2, $6, $7, $8}' >"$TEST_TMP/p6-$n.txt"
done
check "EFA beside two InfiniBand HCAs: predicted as EFA alone" cmp "$TEST_TMP/p6-0.txt" "$TEST_TMP/p6-2.txt"
# NCCL_IB_HCA is read by NCCL's verbs transport, not by the plugin: naming none of those HCAs
# was predicted as NCCL failing to start
expect_exit 0 "NCCL_IB_HCA beside EFA: no fault" -- "$TOPOTUNE" predict --input "$TEST_TMP/p6-2.json" \
    --nodes 2 -b 1G -e 1G --env NCCL_IB_HCA=mlx5_0
# One GPU per node: NCCL's search builds only the simple tree pattern, priced at 0.85 (tuning.cc).
# With the network at its line rate (net_scale 1), a 2-node tree of one 200G NIC each moves
# 0.85 x 0.92 x 2 x 25 GB/s, half of it as algbw (busbw = algbw at 2 ranks): 19.55.
printf '{"schema": "topotune/spec/1", "gpu": "A100-SXM4-80GB", "count": 1, "fabric": "nvswitch",
 "nics": [{"model": "CX6-200G-IB", "count": 1, "per": "gpu"}], "cpu": {"vendor": "amd", "sockets": 2}}\n' \
    >"$TEST_TMP/one-gpu.json"
printf '{"schema": "topotune/calibration/1", "params": {"net_scale": 1}}\n' >"$TEST_TMP/line-rate.json"
bw[tree1g]=$("$TOPOTUNE" predict --input "$TEST_TMP/one-gpu.json" --nodes 2 -b 1G -e 1G \
    --env NCCL_ALGO=Tree --env NCCL_PROTO=Simple --calibration "$TEST_TMP/line-rate.json" |
    awk '/^ +predicted/ {print $6}')
check "one GPU per node: the simple tree at 0.85 (${bw[tree1g]} GB/s)" python3 -c '
import sys; assert 18.5 < float(sys.argv[1]) < 20.5, sys.argv' "${bw[tree1g]}"
# One send/recv pair on one node runs on NCCL's p2p split (enqueue.cc): 8 GPUs start on 4 of the
# node's 32 p2p channels and double while a part exceeds 16 MiB (8 at 128 MiB, 16 at 256 MiB),
# each at most one NVLink's rate; published on an HGX H100: 79 GB/s at 32 MiB, 299 at 256 MiB.
for s in 32M 64M 128M 256M 1G; do
    bw[sr$s]=$("$TOPOTUNE" predict --input "$specs/hgx-h100.json" -C sendrecv -b "$s" -e "$s" |
        awk '/^ +predicted/ {print $6}')
done
check "sendrecv on one HGX H100: 4 channels to 64 MiB, 8 at 128, 16 at 256, the links at 1 GiB" \
    python3 -c '
import sys; a, a64, a128, b, c = map(float, sys.argv[1:])
assert 60 < a < 4 * 20.6, a  # 4 channels of 20.6 GB/s at the links share
assert 0.95 < a64 / a < 1.15 and 1.8 < a128 / a64 < 2.2, (a, a64, a128)  # doubling past 64 MiB
assert 3.6 < b / a < 4.6 and b < 16 * 20.6, (a, b)
assert b < c < 18 * 20.6, (b, c)' "${bw[sr32M]}" "${bw[sr64M]}" "${bw[sr128M]}" "${bw[sr256M]}" "${bw[sr1G]}"
# Across nodes every send/recv peer gets NCCL's channels per peer (paths.cc, 2.29): a 400G NIC
# asks for 4 (14 GB/s each), halved while 4 x the batches of 8 peers exceed the p2p channels (4
# per NIC, at most 16). 10 nodes of 1 H100 and its NIC: 2 channels, 28 GB/s; of 8: 1, 14 GB/s
# (published: 24.9 and 15.2); 2 nodes of 8 B200s keep 4, their NIC's 42.
for g in 1 8; do
    printf '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": %d, "fabric": "nvswitch",
 "nics": [{"model": "CX7-400G-IB", "count": %d, "per": "gpu"}]}\n' "$g" "$g" >"$TEST_TMP/h100x$g.json"
    bw[sr10n$g]=$("$TOPOTUNE" predict --input "$TEST_TMP/h100x$g.json" --nodes 10 -C sendrecv -b 1G -e 1G |
        awk '/^ +predicted/ {print $6}')
done
bw[srb200]=$("$TOPOTUNE" predict --input "$specs/hgx-b200.json" --nodes 2 -C sendrecv -b 1G -e 1G |
    awk '/^ +predicted/ {print $6}')
check "sendrecv on 10 nodes: 2 channels a peer for 10 ranks, 1 for 80; 2 B200 nodes their NIC" python3 -c '
import sys; a, b, c = map(float, sys.argv[1:])
assert 27 < a < 28.1 and 13.5 < b < 14.1 and 41 < c < 43.5, (a, b, c)' \
    "${bw[sr10n1]}" "${bw[sr10n8]}" "${bw[srb200]}"
# The two variables NCCL reads for it: NCCL_NCHANNELS_PER_NET_PEER=4 sets 4 (no halving: the NIC's
# 42.5), NCCL_P2P_PER_CHANNEL_NET_BW=50 asks 1 channel of a 400G NIC (14).
bw[srpeer]=$("$TOPOTUNE" predict --input "$TEST_TMP/h100x8.json" --nodes 10 -C sendrecv -b 1G -e 1G \
    --env NCCL_NCHANNELS_PER_NET_PEER=4 | awk '/^ +predicted/ {print $6}')
bw[srperbw]=$("$TOPOTUNE" predict --input "$TEST_TMP/h100x1.json" --nodes 10 -C sendrecv -b 1G -e 1G \
    --env NCCL_P2P_PER_CHANNEL_NET_BW=50 | awk '/^ +predicted/ {print $6}')
check "NCCL_NCHANNELS_PER_NET_PEER and NCCL_P2P_PER_CHANNEL_NET_BW read" python3 -c '
import sys; a, b = map(float, sys.argv[1:])
assert 41 < a < 43.5 and 13.5 < b < 14.1, (a, b)' "${bw[srpeer]}" "${bw[srperbw]}"
# NCCL_MAX_CTAS=16 leaves 16 p2p channels: a pair of 8 GPUs starts on 2 (paths.cc, enqueue.cc)
bw[srctas]=$("$TOPOTUNE" predict --input "$specs/hgx-h100.json" -C sendrecv -b 32M -e 32M \
    --env NCCL_MAX_CTAS=16 | awk '/^ +predicted/ {print $6}')
check "sendrecv with NCCL_MAX_CTAS=16: 2 channels at 32 MiB, half of 4" python3 -c '
import sys; a, b = map(float, sys.argv[1:]); assert 0.45 < b / a < 0.6, (a, b)' \
    "${bw[sr32M]}" "${bw[srctas]}"
# Four H100s, each pair on 6 NVLinks (no NVSwitch): NCCL's rings share every link, as published
# (300 GB/s all_gather busbw at 128 MiB on such a node); a mesh with one pair on fewer links
# keeps half of a GPU's links each way.
cat >"$TEST_TMP/mesh4.json" <<'JSON'
{"schema": "topotune/spec/1", "name": "h100-mesh4", "gpu": "H100-SXM5-80GB", "count": 4,
 "fabric": "mesh", "cpu": {"vendor": "amd", "sockets": 2}}
JSON
expect_exit 0 "H100 mesh of 4: topo" -- "$TOPOTUNE" topo --input "$TEST_TMP/mesh4.json" --json "$TEST_TMP/mesh4-t.json"
python3 -c 'import json, sys
t = json.load(open(sys.argv[1])); r = t["matrix"]["rows"]; r[0][1] = r[1][0] = "NV4"
t["gpus"][0]["nvlinks"] = t["gpus"][1]["nvlinks"] = 16
json.dump(t, open(sys.argv[2], "w"))' "$TEST_TMP/mesh4-t.json" "$TEST_TMP/mesh4-uneven.json"
# A topology JSON may state a GPU's links apart from its pairs (or not at all): the pairs count.
python3 -c 'import json, sys
t = json.load(open(sys.argv[1])); t["gpus"][0]["nvlinks"] = None
json.dump(t, open(sys.argv[2], "w"))' "$TEST_TMP/mesh4-t.json" "$TEST_TMP/mesh4-nototal.json"
for m in mesh4-t mesh4-uneven mesh4-nototal; do
    bw[$m]=$("$TOPOTUNE" predict --input "$TEST_TMP/$m.json" -C all_gather -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
done
check "an even mesh of 4: every link (${bw[mesh4-t]} GB/s)" python3 -c '
import sys; assert 330 < float(sys.argv[1]) < 400, sys.argv' "${bw[mesh4-t]}"
check "an uneven one: half of them (${bw[mesh4-uneven]} GB/s)" python3 -c '
import sys; assert 140 < float(sys.argv[1]) < 200, sys.argv' "${bw[mesh4-uneven]}"
check "a GPU's total unstated: its pairs' links (${bw[mesh4-nototal]} GB/s)" \
    test -n "${bw[mesh4-t]}" -a "${bw[mesh4-nototal]}" = "${bw[mesh4-t]}"
# A send/recv pair of the mesh has its own 6 links (123.6 GB/s), not all 18 of a GPU's.
bw[mesh4sr]=$("$TOPOTUNE" predict --input "$TEST_TMP/mesh4-t.json" -C sendrecv -b 1G -e 1G |
    awk '/^ +predicted/ {print $6}')
check "a mesh's sendrecv pair: its own 6 links (${bw[mesh4sr]} GB/s)" python3 -c '
import sys; assert 90 < float(sys.argv[1]) < 6 * 20.6, sys.argv' "${bw[mesh4sr]}"
# The same through NVSwitches: a GPU's links into them, unstated, are its pair's count.
expect_exit 0 "HGX H100: topo" -- "$TOPOTUNE" topo --input "$specs/hgx-h100.json" --json "$TEST_TMP/h100-t.json"
python3 -c 'import json, sys
t = json.load(open(sys.argv[1])); t["gpus"][0]["nvlinks"] = None
json.dump(t, open(sys.argv[2], "w"))' "$TEST_TMP/h100-t.json" "$TEST_TMP/h100-nototal.json"
for m in h100-t h100-nototal; do
    bw[$m]=$("$TOPOTUNE" predict --input "$TEST_TMP/$m.json" -C all_gather -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
done
check "NVSwitch, a GPU's total unstated: the same (${bw[h100-nototal]} GB/s)" \
    test -n "${bw[h100-t]}" -a "${bw[h100-nototal]}" = "${bw[h100-t]}"
# aws-ofi-nccl reads neither NCCL_IB_HCA nor NCCL_IB_DISABLE: no fault, no change on Slingshot.
for e in NCCL_IB_HCA=mlx5_0 NCCL_IB_DISABLE=1; do
    expect_exit 0 "Slingshot with $e" -- "$TOPOTUNE" predict --input "$specs/gh200-4x-slingshot.json" --nodes 2 -b 32M -e 32M --env "$e"
    check "$e changes nothing over libfabric" test "$(grep predicted "$TEST_TMP/out")" = "$(cat "$TEST_TMP/gh-json.txt")"
done
expect_exit 0 "a GB200 NVL72 rack: 18 trays, one NVLink domain" -- \
    "$TOPOTUNE" predict --input "$specs/gb200-nvl72.json" -b 8G -e 8G --json
check "72 ranks as one node (NCCL's clique): NVLS, not a network algorithm" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
size = [e for e in ev if e["event"] == "size"][0]
assert ev[0]["ranks"] == 72 and size["algo"] == "NVLS", (ev[0], size)' "$TEST_TMP/out"
expect_exit 0 "two racks: two cliques over the network" -- \
    "$TOPOTUNE" predict --input "$specs/gb200-nvl72.json" --nodes 36 -b 8G -e 8G --json
check "144 ranks, NVLSTree between the racks" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
size = [e for e in ev if e["event"] == "size"][0]
assert ev[0]["ranks"] == 144 and size["algo"] == "NVLSTREE", (ev[0], size)' "$TEST_TMP/out"
expect_exit 0 "broadcast at 1 GiB" -- "$TOPOTUNE" predict --input "$specs/hgx-h100.json" -C broadcast -b 1G -e 1G
check "its band: broadcast's and reduce's (busbw x 0.824 to x 2.355), said in the header" python3 - "$TEST_TMP/out" <<'PY'
import sys
text = open(sys.argv[1]).read()
assert "cut from broadcast's and reduce's published rows" in text, text
row = [l.split() for l in text.splitlines() if l.startswith("   predicted")][0]
busbw, (lo, hi) = float(row[5]), map(float, row[8].split("-"))
assert abs(lo / busbw - 0.824) < 0.01 and abs(hi / busbw - 2.355) < 0.01, row
PY
expect_exit 0 "16 trays of a GB300 rack at 1 MiB" -- \
    "$TOPOTUNE" predict --input "$specs/gb300-nvl72.json" --nodes 16 -b 1M -e 1M --json
check "NVLS: an operation with less than a chunk fills with what it has (OCI measured 67 us)" \
    python3 -c '
import json, sys
size = [e for e in map(json.loads, open(sys.argv[1])) if e["event"] == "size"][0]
assert size["algo"] == "NVLS" and size["time_us"] < 100, size' "$TEST_TMP/out"

# Through topology JSON and back, the same predictions: the NVLink domain and the P2P table kept.
for f in "$TEST_TMP/stock.json" "$specs/gb200-nvl72.json"; do
    "$TOPOTUNE" topo --input "$f" --json "$TEST_TMP/rt.json" 2>/dev/null
    "$TOPOTUNE" predict --input "$f" -b 1M -e 8G | grep -v '^#' >"$TEST_TMP/a.txt"
    "$TOPOTUNE" predict --input "$TEST_TMP/rt.json" -b 1M -e 8G | grep -v '^#' >"$TEST_TMP/b.txt"
    check "$(basename "$f"): the same predictions from its topology JSON" cmp -s "$TEST_TMP/a.txt" "$TEST_TMP/b.txt"
done
printf '{"schema": "topotune/spec/1", "gpu": "RTX-4090", "count": 2}\n' >"$TEST_TMP/two.json"
"$TOPOTUNE" topo --input "$TEST_TMP/two.json" --json "$TEST_TMP/two-t.json"
sed 's/"NS"/"maybe"/' "$TEST_TMP/two-t.json" >"$TEST_TMP/bad-p2p-table.json"
expect_exit 2 "a P2P table cell that is no status is refused" -- "$TOPOTUNE" topo --input "$TEST_TMP/bad-p2p-table.json"
expect_stderr_has "p2p.rows[0][1]" "the cell is named"

# Bad specs: exit 2, the field named, the catalog's names listed; nothing written.
spec() { printf '{"schema": "topotune/spec/1", %s}\n' "$1" >"$TEST_TMP/$2.json"; }
spec '"gpu": "H100-SXM9", "count": 8' unknown-gpu
spec '"gpu": "H100-SXM5-80GB", "count": 0' zero-count
spec '"gpu": "H100-SXM5-80GB", "count": 8, "nics": [{"model": "CX9-1600G", "count": 8, "per": "gpu"}]' unknown-nic
spec '"gpu": "H100-SXM5-80GB", "count": 8, "colour": "green"' unknown-field
spec '"gpu": "RTX-4090", "count": 8, "fabric": "nvswitch"' no-nvlink
spec '"gpu": "GB200-186GB", "count": 4, "nvlink_domain": 70' bad-domain
spec '"gpu": "H100-SXM5-80GB", "count": 8, "p2p": "maybe"' bad-p2p
for name in unknown-gpu zero-count unknown-nic unknown-field no-nvlink bad-domain bad-p2p; do
    expect_exit 2 "$name" -- "$TOPOTUNE" topo --input "$TEST_TMP/$name.json" --json "$TEST_TMP/$name.out"
    expect_stderr_lines 1 "$name: one line"
    expect_no_file "$TEST_TMP/$name.out" "$name"
done
expect_exit 2 "unknown GPU (again, for its message)" -- "$TOPOTUNE" topo --input "$TEST_TMP/unknown-gpu.json"
expect_stderr_has 'field "gpu"' "the field is named"
expect_stderr_has "H100-SXM5-80GB, " "the catalog's names are listed"
expect_exit 2 "unknown NIC (again)" -- "$TOPOTUNE" topo --input "$TEST_TMP/unknown-nic.json"
expect_stderr_has "CX7-400G-IB" "the NIC catalog is listed"
expect_exit 2 "zero count (again)" -- "$TOPOTUNE" topo --input "$TEST_TMP/zero-count.json"
expect_stderr_has 'field "count"' "count is named"
expect_exit 2 "predict a bad spec" -- "$TOPOTUNE" predict --input "$TEST_TMP/unknown-gpu.json"

# predict --json records the environment the model was given (--env), not this shell's; its
# start event says the sizes double, as they do.
expect_exit 0 "predict --json under a shell with NCCL_ALGO set" -- env NCCL_ALGO=Tree CUDA_HOME=/x \
    "$TOPOTUNE" predict --input "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --env NCCL_PROTO=Simple -e 64 --json
check "the start event records --env only, and the doubling" python3 - "$TEST_TMP/out" <<'PY'
import json, sys
start = json.loads(open(sys.argv[1]).readline())
assert start["env"] == {"NCCL_PROTO": "Simple"}, start["env"]
assert start.get("step_factor") == 2 and "step_bytes" not in start, start
PY
# Model v6: the calibrated defaults, and a calibration file with NCCL's own constants gives v1 on one
# node (the network's parameters and v3's two-node tree rule do not apply there).
printf '{"schema": "topotune/calibration/1", "params": {"nvls_scale": 1, "fill_bytes": 0, "net_scale": 1, "lat_scale": 1, "net_lat_scale": 1, "efa_lat_us": 0, "nvls_fill_bytes": 0}}\n' >"$TEST_TMP/nccl.json"
expect_exit 0 "predict, calibrated defaults" -- "$TOPOTUNE" predict -i "$specs/hgx-h100.json" -b 1G -e 1G --json
check "H100 1 GiB: 439.8 GB/s, NVLS (model v6)" python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"size\"" in l][0]
assert round(s["busbw"], 1) == 439.8 and s["algo"] == "NVLS", s' "$TEST_TMP/out"
expect_exit 0 "predict --calibration with NCCL's constants" -- "$TOPOTUNE" predict -i "$specs/hgx-h100.json" \
    -b 1G -e 1G --json --calibration "$TEST_TMP/nccl.json"
check "H100 1 GiB: 586.4 GB/s, as model v1" python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"size\"" in l][0]
assert round(s["busbw"], 1) == 586.4, s' "$TEST_TMP/out"
# a --calibration the user names is followed when it is a link (it was refused as one)
ln -s nccl.json "$TEST_TMP/nccl-link.json"
expect_exit 0 "predict --calibration through a link" -- "$TOPOTUNE" predict -i "$specs/hgx-h100.json" \
    -b 1G -e 1G --json --calibration "$TEST_TMP/nccl-link.json"
check "the linked calibration used" python3 -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"size\"" in l][0]
assert round(s["busbw"], 1) == 586.4, s' "$TEST_TMP/out"
printf '{"schema": "topotune/calibration/1", "params": {"nvls_scale": 7}}\n' >"$TEST_TMP/bad.json"
expect_exit 2 "a calibration out of range" -- "$TOPOTUNE" predict -i "$specs/hgx-h100.json" --calibration "$TEST_TMP/bad.json"
expect_stderr_has "params.nvls_scale" "the parameter named"
# a misspelt parameter: it left the default in place, unsaid (exit 0)
printf '{"schema": "topotune/calibration/1", "params": {"nvls_scal": 0.4}}\n' >"$TEST_TMP/bad.json"
expect_exit 2 "a calibration's misspelt parameter" -- "$TOPOTUNE" predict -i "$specs/hgx-h100.json" --calibration "$TEST_TMP/bad.json"
expect_stderr_has "params.nvls_scal: not a parameter of the model (nvls_scale," "named, with the parameters there are"
printf '{"schema": "x", "params": {}}\n' >"$TEST_TMP/bad.json"
expect_exit 2 "another schema" -- "$TOPOTUNE" predict -i "$specs/hgx-h100.json" --calibration "$TEST_TMP/bad.json"
# Chains (broadcast, reduce) across nodes, model v7: a network hop per node boundary (NCCL's
# tuning charges one per rank), and one-step slices that send twice all_gather's messages: s /
# (2 - s) of the line rate for a ring's share s (ring_net_scale, v11), against all_gather's s.
# The share moves smoothly with s (no jump where the node's links and the network cross),
# never lets a chain beat the ring (s above 1), and NCCL, which does not know of it,
# still picks Simple for large chains.
for s in 0.9 0.92 0.93 1.2; do
    printf '{"schema": "topotune/calibration/1", "params": {"ring_net_scale": %s}}\n' "$s" >"$TEST_TMP/s$s.json"
    for c in broadcast all_gather; do
        "$TOPOTUNE" predict -i "$specs/hgx-h100.json" --nodes 4 -C $c -b 8K -e 8G --json \
            --calibration "$TEST_TMP/s$s.json" >"$TEST_TMP/$c-4-$s.json"
    done
done
"$TOPOTUNE" predict -i "$specs/hgx-b200.json" --nodes 4 -C broadcast -b 8G -e 8G --json >"$TEST_TMP/b200.json"
check "a chain across nodes: a hop per node boundary, s / (2 - s) of the network, NCCL's pick" python3 - "$TEST_TMP" <<'PY'
import json, os, sys
d = sys.argv[1]
def sizes(f):
    return {e["size"]: e for e in map(json.loads, open(os.path.join(d, f))) if e["event"] == "size"}
b, g = ({s: sizes("%s-4-%s.json" % (c, s)) for s in ("0.9", "0.92", "0.93", "1.2")}
        for c in ("broadcast", "all_gather"))
assert b["0.9"][8192]["time_us"] < 80, b["0.9"][8192]  # 32 ranks: 143 us in v6
big = 8 << 30
ratio = b["0.9"][big]["busbw"] / g["0.9"][big]["busbw"]
assert abs(ratio - 1 / (2 - 0.9)) < 0.01, ratio  # both Ring/Simple, the network deciding
step = b["0.93"][big]["busbw"] / b["0.92"][big]["busbw"]
assert step < 1.03, step  # v7's first cut jumped 8.7% here
assert b["1.2"][big]["busbw"] <= g["1.2"][big]["busbw"] * 1.001, (b["1.2"][big], g["1.2"][big])
pick = sizes("b200.json")[big]
assert pick["proto"] == "SIMPLE", pick  # the share alone would have made LL128 look faster
PY

# v11: a ring's time across nodes takes ring_net_scale of the NICs' line rate and nothing of
# net_scale, which prices Tree and NVLSTree and every algorithm in NCCL's choice (its tuning gives
# them one network): 4 HGX H100 nodes' all_gather (a ring) at 8 GiB follows ring_net_scale alone,
# and all_reduce stays NVLSTree there even when rings are given more than the line rate.
for c in "ring_net_scale 0.8" "ring_net_scale 0.9" "net_scale 0.7" "ring_net_scale 1.2"; do
    read -r name value <<<"$c"
    printf '{"schema": "topotune/calibration/1", "params": {"%s": %s}}\n' "$name" "$value" >"$TEST_TMP/$name-$value.json"
    for coll in all_gather all_reduce; do
        "$TOPOTUNE" predict -i "$specs/hgx-h100.json" --nodes 4 -C $coll -b 8G -e 8G --json \
            --calibration "$TEST_TMP/$name-$value.json" >"$TEST_TMP/v11-$coll-$name-$value.json"
    done
done
check "a ring across nodes at ring_net_scale, NCCL's choice at net_scale" python3 - "$TEST_TMP" <<'PY'
import json, os, sys
def at(coll, name):
    path = os.path.join(sys.argv[1], "v11-%s-%s.json" % (coll, name))
    return [e for e in map(json.loads, open(path)) if e["event"] == "size"][0]
r8, r9 = at("all_gather", "ring_net_scale-0.8"), at("all_gather", "ring_net_scale-0.9")
assert r8["algo"] == r9["algo"] == "RING", (r8, r9)
assert abs(r9["busbw"] / r8["busbw"] - 0.9 / 0.8) < 0.01, (r8["busbw"], r9["busbw"])
assert at("all_gather", "net_scale-0.7")["busbw"] == r9["busbw"]  # 0.9: the default
assert at("all_reduce", "ring_net_scale-1.2")["algo"] == "NVLSTREE", at("all_reduce", "ring_net_scale-1.2")
PY

# v15: a chain on one node of Volta or Ampere GPUs on NVSwitch pays a hop per forwarding rank
# (n - 1, as the model counts them across nodes), where NCCL's tuning counts one for channels
# that share a path; Hopper, and a mesh without NVSwitch, keep the one hop. NCCL's count still
# picks the protocol. With NCCL's constants (lat_scale 1): 8 A100s 6.6 + 7 x 0.6 us at 8 B (LL);
# Simple at 1 and 2 MiB, as one hop makes NCCL choose, whose latency (2 t(1M) - t(2M)) is
# 8.4 + 7 x 3.4; 8 H100s and a mesh of 4 A100s 6.6 + 0.6 at 8 B.
for c in broadcast reduce; do
    "$TOPOTUNE" predict -i "$specs/dgx-a100.json" -C $c -b 8 -e 2M --json \
        --calibration "$TEST_TMP/nccl.json" >"$TEST_TMP/v15-a100-$c.json"
done
"$TOPOTUNE" predict -i "$specs/hgx-h100.json" -C broadcast -b 8 -e 8 --json \
    --calibration "$TEST_TMP/nccl.json" >"$TEST_TMP/v15-h100.json"
printf '{"schema": "topotune/spec/1", "gpu": "A100-SXM4-80GB", "count": 4, "fabric": "mesh"}\n' \
    >"$TEST_TMP/a100-mesh.json"
"$TOPOTUNE" predict -i "$TEST_TMP/a100-mesh.json" -C broadcast -b 8 -e 8 --json \
    --calibration "$TEST_TMP/nccl.json" >"$TEST_TMP/v15-mesh.json"
check "a one-node chain: a hop per rank on Volta/Ampere NVSwitch, NCCL's one hop picks" python3 - "$TEST_TMP" <<'PY'
import json, os, sys
def sizes(f):
    return {e["size"]: e for e in map(json.loads, open(os.path.join(sys.argv[1], f))) if e["event"] == "size"}
for c in ("broadcast", "reduce"):
    a = sizes("v15-a100-%s.json" % c)
    assert a[8]["proto"] == "LL" and abs(a[8]["time_us"] - (6.6 + 7 * 0.6)) < 0.05, a[8]
    m1, m2 = a[1 << 20], a[2 << 20]
    assert m1["proto"] == m2["proto"] == "SIMPLE", (m1, m2)
    assert abs(2 * m1["time_us"] - m2["time_us"] - (8.4 + 7 * 3.4)) < 0.05, (m1, m2)
for f in ("v15-h100.json", "v15-mesh.json"):
    h = sizes(f)[8]
    assert h["proto"] == "LL" and abs(h["time_us"] - (6.6 + 0.6)) < 0.05, (f, h)
PY

# The table and --json run the same sizes, topotune-bench's (whole floats; a part of every rank
# for all_gather), and a range with none says so in both, exit 1; a predicted error is marked.
pred() { "$TOPOTUNE" predict -i "$specs/hgx-h100.json" "$@"; }
expect_exit 0 "predict -b 3 -e 12" -- pred -b 3 -e 12
check "the table: 4 and 12 B, as topotune-bench runs them" test \
    "$(awk '/^ *predicted/ {printf "%s ", $2}' "$TEST_TMP/out")" = "4 12 "
expect_exit 0 "predict -b 3 -e 12 --json" -- pred -b 3 -e 12 --json
check "--json: the same sizes" python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert [e["size"] for e in ev if e["event"] == "size"] == [4, 12], ev' "$TEST_TMP/out"
# Each predicted size event carries the bands the table shows beside its busbw and its time.
expect_exit 0 "predict -b 1M -e 1M" -- pred -b 1M -e 1M
band=$(awk '/^ *predicted/ {print $(NF-1)}' "$TEST_TMP/out")
tband=$(awk '/^ *predicted/ {print $NF}' "$TEST_TMP/out")
expect_exit 0 "predict -b 1M -e 1M --json" -- pred -b 1M -e 1M --json
check "--json: the busbw and time bands, the table's ($band, $tband)" python3 -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if "\"size\"" in l][0]
lo, hi = e["busbw_band"]
assert "%.2f-%.2f" % (lo, hi) == sys.argv[2] and lo < e["busbw"] < hi, (e, sys.argv[2])
lo, hi = e["time_us_band"]
assert "%.2f-%.2f" % (lo, hi) == sys.argv[3] and lo < e["time_us"] < hi, (e, sys.argv[3])' \
    "$TEST_TMP/out" "$band" "$tband"
check "--json: valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/bench-event.schema.json" "$TEST_TMP/out" --lines
for args in "-b 1 -e 2" "-C all_gather -b 100 -e 100"; do
    # shellcheck disable=SC2086 # the words are the options
    expect_exit 1 "predict $args: no size" -- pred $args
    check "said: $args" grep -q "nothing predicted: no size in -b..-e gives every rank a float" "$TEST_TMP/out"
    # shellcheck disable=SC2086
    expect_exit 1 "predict $args --json: no size" -- pred $args --json
    check "--json $args: a predicted error, not ok" python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
err = [e for e in ev if e["event"] == "error"]
assert err and err[0]["predicted"] is True and ev[-1]["outcome"] == "error", ev' "$TEST_TMP/out"
done
check "the events valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/bench-event.schema.json" "$TEST_TMP/out" --lines
finish
