#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topo --input on every real-machine fixture: counts, matrix and class id as expected.
# TOPOTUNE_UPDATE_EXPECTED=1 rewrites the expected files (review the diff before committing).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
facts="$(dirname "$0")/topo-facts.py"

for xml in "$TOPOTUNE_FIXTURES"/*.xml; do
    name=$(basename "$xml" .xml)
    expected="$TOPOTUNE_FIXTURES/expected/$name.json"
    expect_exit 0 "$name loads" -- "$TOPOTUNE" topo --input "$xml" --json "$TEST_TMP/$name.json"
    if [ "${TOPOTUNE_UPDATE_EXPECTED:-}" = 1 ]; then
        python3 "$facts" "$TEST_TMP/$name.json" "$expected" --update
    fi
    if python3 "$facts" "$TEST_TMP/$name.json" "$expected"; then pass; else fail "$name: facts differ"; fi
done

# One node in hwloc 1.x's format and 2.x's: its V100s' memory, NUMA nodes without a core in the
# 1.x export, is neither the NUMA count nor the GPUs' affinity (6 nodes, affinity unknown).
check "the hwloc 1.x Lassen as the 2.x one: 2 NUMA nodes, the GPUs on 0, 0, 8, 8" python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["cpu"]["numa_nodes"] == b["cpu"]["numa_nodes"] == 2, (a["cpu"], b["cpu"])
assert [g["numa"] for g in a["gpus"]] == [g["numa"] for g in b["gpus"]] == [0, 0, 8, 8], a["gpus"]' \
    "$TEST_TMP/hwloc1-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.json" "$TEST_TMP/hwloc-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.json"

# A 1.x export's NUMA nodes without a core are GPU memory on a machine with NVIDIA GPUs, or
# POWER9's from 252, only: the Lassen with its GPUs of another vendor and its memory without a
# core numbered 2 to 5 has 6 NUMA nodes of its own (an Itanium's or KNL's memory without a core
# was left out of the count); without its I/O (lstopo --no-io), its V100 memory is still none.
lassen1=$TOPOTUNE_FIXTURES/hwloc1-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.xml
sed -e 's/\[10de:/[1234:/g' -e 's/type="NUMANode" os_index="25\([2-5]\)"/type="NUMANode" os_index="\1"/' \
    "$lassen1" >"$TEST_TMP/lassen1-nogpu.xml"
expect_exit 0 "the hwloc 1.x Lassen without NVIDIA GPUs" -- "$TOPOTUNE" topo --input "$TEST_TMP/lassen1-nogpu.xml"
check "6 NUMA nodes" grep -q ', 6 NUMA node(s),' "$TEST_TMP/out"
python3 - "$lassen1" "$TEST_TMP/lassen1-noio.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
for parent in tree.iter():
    for child in list(parent):
        if child.tag == "object" and child.get("type") in ("Bridge", "PCIDev", "OSDev"):
            parent.remove(child)
tree.write(sys.argv[2])
PY
check "no I/O left" sh -c "! grep -q PCIDev '$TEST_TMP/lassen1-noio.xml'"
expect_exit 0 "the hwloc 1.x Lassen without I/O" -- "$TOPOTUNE" topo --input "$TEST_TMP/lassen1-noio.xml"
check "2 NUMA nodes" grep -q ', 2 NUMA node(s),' "$TEST_TMP/out"
rm -f "$TEST_TMP"/lassen1-no*.xml

# hwloc 2 keeps the padding of an AMD CPU's brand string, hwloc 1.11 cuts it: one node's two
# exports are one class (they were two, only the spaces apart).
tioga=$TOPOTUNE_FIXTURES/hwloc-llnl-tioga-ex235a-8xMI200-amd.xml
check "the fixture's CPU model is padded" grep -q 'CPUModel" value="AMD EPYC 7A53 64-Core Processor  ' "$tioga"
sed 's/\(CPUModel" value="[^"]*[^ "]\) *"/\1"/' "$tioga" >"$TEST_TMP/tioga-trimmed.xml"
expect_exit 0 "the export with its CPU model trimmed" -- "$TOPOTUNE" topo --input "$TEST_TMP/tioga-trimmed.xml" \
    --json "$TEST_TMP/tioga-trimmed.json"
check "one class, one model" python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["class"]["id"] == b["class"]["id"] and a["cpu"]["model"] == b["cpu"]["model"], (a["cpu"], b["cpu"])
assert b["cpu"]["model"] == "AMD EPYC 7A53 64-Core Processor", b["cpu"]' \
    "$TEST_TMP/tioga-trimmed.json" "$TEST_TMP/hwloc-llnl-tioga-ex235a-8xMI200-amd.json"
# ... and as a topology JSON that keeps the padding (an older topotune's, a node's report), or a
# spec naming the model so: the same class.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["cpu"]["model"] = "  AMD EPYC 7A53  64-Core Processor          "
json.dump(d, open(sys.argv[2], "w"))' "$TEST_TMP/tioga-trimmed.json" "$TEST_TMP/tioga-trimmed.padded"
expect_exit 0 "its topology JSON with the padding" -- "$TOPOTUNE" topo --input "$TEST_TMP/tioga-trimmed.padded" \
    --json "$TEST_TMP/tioga-trimmed.back"
check "the same class" python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["class"]["id"] == b["class"]["id"], (a["cpu"], b["cpu"])' "$TEST_TMP/tioga-trimmed.back" "$TEST_TMP/tioga-trimmed.json"
rm -f "$TEST_TMP"/tioga-trimmed.* # the same machine: not counted apart below

# An export made inside a job allowed package 0's cores and memory only (its allowed_cpuset and
# allowed_nodeset a part): the whole machine still, the GPUs under package 1 on NUMA node 1 (they
# had none, the node 1 NUMA node and another class).
g4=$TOPOTUNE_FIXTURES/hwloc-aws-g4dn-metal-8xT4.xml
sed 's/allowed_cpuset="0xffffffff,0xffffffff,0xffffffff" \(nodeset="0x00000003" complete_nodeset="0x00000003"\) allowed_nodeset="0x00000003"/allowed_cpuset="0x000000ff,0xffff0000,0x00ffffff" \1 allowed_nodeset="0x00000001"/' \
    "$g4" >"$TEST_TMP/g4-allowed.xml"
check "the allowed sets cut" grep -q 'allowed_nodeset="0x00000001"' "$TEST_TMP/g4-allowed.xml"
expect_exit 0 "the g4dn export of a job on package 0" -- "$TOPOTUNE" topo --input "$TEST_TMP/g4-allowed.xml" \
    --json "$TEST_TMP/g4-allowed.out"
check "the whole machine, the whole node's class" python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["cpu"] == b["cpu"] and a["class"]["id"] == b["class"]["id"], (a["cpu"], a["class"]["id"])
assert [g["numa"] for g in a["gpus"]] == [g["numa"] for g in b["gpus"]] == [0, 0, 0, 0, 1, 1, 1, 1], a["gpus"]' \
    "$TEST_TMP/g4-allowed.out" "$TEST_TMP/hwloc-aws-g4dn-metal-8xT4.json"
rm -f "$TEST_TMP"/g4-allowed.*

# An export of a job's cgroup (hwloc 2.x, restricted to package 1's cores) keeps the other
# socket's memory as a NUMA node without a core: still a CPU NUMA node, and the node's class.
if command -v hwloc-calc >/dev/null && command -v lstopo-no-graphics >/dev/null; then
    g4=$TOPOTUNE_FIXTURES/hwloc-aws-g4dn-metal-8xT4.xml
    lstopo-no-graphics --input "$g4" --restrict "$(hwloc-calc --input "$g4" package:1)" -f \
        "$TEST_TMP/g4-restricted.xml" 2>/dev/null
    expect_exit 0 "the g4dn export restricted to package 1" -- "$TOPOTUNE" topo --input "$TEST_TMP/g4-restricted.xml" \
        --json "$TEST_TMP/g4-restricted.out"
    check "2 NUMA nodes, the whole node's class" python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["cpu"]["numa_nodes"] == 2 and a["class"]["id"] == b["class"]["id"], (a["cpu"], a["class"]["id"])' \
        "$TEST_TMP/g4-restricted.out" "$TEST_TMP/hwloc-aws-g4dn-metal-8xT4.json"
    rm -f "$TEST_TMP"/g4-restricted.*
fi

# The class is the hardware's, whatever gave the facts: the same node exported by hwloc 1.x and
# 2.x, and an export without hwloc's CUDA plugin (no GPU memory size; the class changed).
check "the hwloc 1.x and 2.x Lassen exports: one class" python3 -c 'import json, sys
a, b = (json.load(open(f))["class"]["id"] for f in sys.argv[1:])
assert a == b, (a, b)' "$TEST_TMP/hwloc1-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.json" \
    "$TEST_TMP/hwloc-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.json"
python3 - "$TOPOTUNE_FIXTURES/hwloc-aws-g4dn-metal-8xT4.xml" "$TEST_TMP/g4dn-nocuda.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
t = ET.parse(sys.argv[1])
for parent in t.iter():
    for child in list(parent):
        if child.get("type") == "OSDev" and (child.get("name") or "").startswith("cuda"):
            parent.remove(child)
t.write(sys.argv[2])
PY
expect_exit 0 "the g4dn export without its cuda OS devices" -- "$TOPOTUNE" topo --input "$TEST_TMP/g4dn-nocuda.xml" \
    --json "$TEST_TMP/g4dn-nocuda.out"
check "the class of the whole export" python3 -c 'import json, sys
a, b = (json.load(open(f))["class"]["id"] for f in sys.argv[1:])
assert a == b, (a, b)' "$TEST_TMP/g4dn-nocuda.out" "$TEST_TMP/hwloc-aws-g4dn-metal-8xT4.json"
rm -f "$TEST_TMP/g4dn-nocuda.out" "$TEST_TMP/g4dn-nocuda.xml"

# A driver that prints a name the model table does not know (older drivers: a bare "A40"): the
# PCI device names the model, so its SM and NVLink rate are known and NVLinks are counted.
sed 's/Tesla P100-SXM2-16GB/A40/g; s/\[10de:15f9\]/[10de:2235]/g' \
    "$TOPOTUNE_FIXTURES/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" >"$TEST_TMP/bare-a40.xml"
expect_exit 0 "a bare 'A40' with its PCI device" -- "$TOPOTUNE" topo --input "$TEST_TMP/bare-a40.xml" \
    --json "$TEST_TMP/bare-a40.out"
check "named by its PCI device: NVIDIA A40, sm 86, NVLinks counted" python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
assert (g["model"], g["sm"]) == ("NVIDIA A40", 86) and g["nvlinks"], g' "$TEST_TMP/bare-a40.out"
expect_stderr_lines 0 "no warning"
rm -f "$TEST_TMP/bare-a40.out"
# NCCL topology files as NCCL reads them (graph/topo.cc), each a variant of Azure's NCv4 file:
# an NVLink to a GPU the file does not hold (a dump of some of a node's GPUs) is ignored (it was
# counted as an NVSwitch); AMD's GPUs (RCCL's dumps) are another vendor's, counted and left out
# (they were NVIDIA GPUs of an unknown model); an Ethernet adapter whose port NCCL names by its
# verbs device is RoCE (it was plain Ethernet).
ncv4=$TOPOTUNE_FIXTURES/nccl-topo-azure-ncv4.xml
nccl_variant() { # NAME SED-EXPRESSION...: the NCv4 file edited, read as JSON into $TEST_TMP/NAME.out
    local name=$1
    shift
    sed "$@" "$ncv4" >"$TEST_TMP/$name.xml"
    "$TOPOTUNE" topo --input "$TEST_TMP/$name.xml" --json "$TEST_TMP/$name.out" 2>/dev/null
}
nccl_variant absent-peer -e '0,/target="0001:00:00.0"/s//target="0009:00:00.0"/'
check "an NVLink to a GPU not in the file: no NVSwitch" python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
assert t["nvswitches"] == 0 and len(t["gpus"]) == 4, (t["nvswitches"], len(t["gpus"]))' "$TEST_TMP/absent-peer.out"
nccl_variant amd -e 's/vendor="0x10de"/vendor="0x1002"/'
check "AMD GPUs: none of NVIDIA's, 4 of another vendor" python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
assert (len(t["gpus"]), t["other_gpus"]) == (0, 4), (len(t["gpus"]), t["other_gpus"])' "$TEST_TMP/amd.out"
nccl_variant roce -e 's|^    <nic>|    <pci busid="0001:01:00.0" class="0x020000" vendor="0x15b3" device="0x1021" link_speed="16 GT/s" link_width="16"><nic>|' \
    -e 's|^    </nic>|    </nic></pci>|' -e 's/name="eth0"/name="mlx5_0"/'
check "a ConnectX port named mlx5_0 under an Ethernet class: RoCE" python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
assert [n["kind"] for n in t["nics"]] == ["roce"], t["nics"]' "$TEST_TMP/roce.out"
# the name rdma-core's udev rule gives it by its bus
sed 's/name="mlx5_0"/name="rocep1s0f0"/' "$TEST_TMP/roce.xml" >"$TEST_TMP/rocep.xml"
"$TOPOTUNE" topo --input "$TEST_TMP/rocep.xml" --json "$TEST_TMP/rocep.out" 2>/dev/null
check "named rocep1s0f0: RoCE" python3 -c 'import json, sys
assert [n["kind"] for n in json.load(open(sys.argv[1]))["nics"]] == ["roce"]' "$TEST_TMP/rocep.out"
rm -f "$TEST_TMP"/rocep.*
rm -f "$TEST_TMP"/absent-peer.* "$TEST_TMP"/amd.* "$TEST_TMP"/roce.*
# A node of two kinds of RDMA NIC: a count of each in the class's slug (p4d's first EFA made an
# InfiniBand HCA: it read "4xib", the last kind seen naming them all)
sed '0,/class="0x020000" vendor="0x1d0f" device="0xefa0"/s//class="0x020700" vendor="0x15b3" device="0x101b"/' \
    "$TOPOTUNE_FIXTURES/nccl-topo-aws-p4d-24xlarge.xml" >"$TEST_TMP/mixed.xml"
expect_exit 0 "p4d with one InfiniBand HCA" -- "$TOPOTUNE" topo --input "$TEST_TMP/mixed.xml"
check "the slug counts each kind" grep -qE '^Class: +a100-sxm4-40gb-8x.*-1xib[0-9]*-3xefa[0-9]*-[0-9a-f]{8}$' "$TEST_TMP/out"
rm -f "$TEST_TMP/mixed.xml"
# NCCL fuses an NVLink domain's hosts into one dump, each <cpu> naming its host_hash (GB200
# NVL72): two hosts of NCv4's GPUs are read as the first (refused: "both at PCI bus id").
python3 - "$ncv4" "$TEST_TMP/fused.xml" <<'PY'
import sys
text = open(sys.argv[1]).read()
head, body = text.split("\n", 1)
body = body.rsplit("</system>", 1)[0]
one, two = (body.replace("<cpu numaid", '<cpu host_hash="%s" numaid' % h) for h in ("0x1a2b", "0x3c4d"))
open(sys.argv[2], "w").write(head + "\n" + one + two + "</system>\n")
PY
expect_exit 0 "a dump of two hosts" -- "$TOPOTUNE" topo --input "$TEST_TMP/fused.xml" --json "$TEST_TMP/fused.out"
check "the first host's 4 GPUs" python3 -c 'import json, sys
assert len(json.load(open(sys.argv[1]))["gpus"]) == 4' "$TEST_TMP/fused.out"
expect_stderr_has "holds 2 hosts (an NVLink domain's fused dump): this node is its first, host_hash 0x1a2b" "said"
rm -f "$TEST_TMP"/fused.*

# hwloc reports an NVLink 3 link at 25000 MB/s whatever its rate (NVML's version: the A40's
# bridge links carry 14 GB/s): 3 links, 75000 MB/s, were read as 5.
sed 's/Tesla P100-SXM2-16GB/NVIDIA A40/g; s/\[10de:15f9\]/[10de:2235]/g; s/\b40000\b/75000/g' \
    "$TOPOTUNE_FIXTURES/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" >"$TEST_TMP/a40-nv3.xml"
expect_exit 0 "two A40s, 75000 MB/s between them" -- "$TOPOTUNE" topo --input "$TEST_TMP/a40-nv3.xml" --matrix
check "NV3" grep -q "^GPU0.*NV3" "$TEST_TMP/out"
rm -f "$TEST_TMP/a40-nv3.xml"
# HGX B200 and B300 reach their NVSwitches through a ConnectX bridge, never as PCI devices of
# their own: 8 B200s named in an export (the g4dn's T4s renamed) are 18 NVLinks each to switches
# present but uncounted ("NVSwitch: 0" and no NVLink was said).
sed 's/Tesla T4/NVIDIA B200/g; s/\[10de:1eb8\]/[10de:2901]/g' "$TOPOTUNE_FIXTURES/hwloc-aws-g4dn-metal-8xT4.xml" \
    >"$TEST_TMP/b200.xml"
expect_exit 0 "8 B200s, no NVSwitch on PCI" -- "$TOPOTUNE" topo --input "$TEST_TMP/b200.xml" --json "$TEST_TMP/b200.out"
check "NV18 inferred, the switches present, their count unknown" python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
assert [g["nvlinks"] for g in t["gpus"]] == [18] * 8 and t["nvswitches"] is None, (t["nvswitches"], t["gpus"][0])' \
    "$TEST_TMP/b200.out"
rm -f "$TEST_TMP/b200.out" "$TEST_TMP/b200.xml"
# Current cards an export may name (once unknown: no SM, so no protocol rules and no NVLink rate):
# each name to its SM and NVLinks; L40 not read as L40S, nor a laptop's RTX A3000 as an A30.
for card in "NVIDIA RTX 6000 Ada Generation:89:0" "NVIDIA L40:89:0" "NVIDIA L40S:89:0" "NVIDIA L20:89:0" \
    "NVIDIA A30:80:" "NVIDIA A16:86:0" "NVIDIA RTX A5000:86:" "NVIDIA GeForce RTX 2080 Ti:75:" \
    "NVIDIA RTX A3000 Laptop GPU::"; do
    IFS=: read -r name sm links <<<"$card"
    sed "s/Tesla P100-PCIE-16GB/$name/g; s/10de:15f8/10de:0000/g" \
        "$TOPOTUNE_FIXTURES/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" >"$TEST_TMP/card.xml"
    expect_exit 0 "$name" -- "$TOPOTUNE" topo --input "$TEST_TMP/card.xml" --json "$TEST_TMP/card.out"
    check "$name: sm ${sm:-unknown}, NVLinks ${links:-a bridge or none}" python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["gpus"][0]
want = lambda v: int(v) if v else None
assert (g["model"], g["sm"], g["nvlinks"]) == (sys.argv[2], want(sys.argv[3]), want(sys.argv[4])), g' \
        "$TEST_TMP/card.out" "$name" "$sm" "$links"
done
rm -f "$TEST_TMP/card.xml" "$TEST_TMP/card.out"

# Different machines never share a class id (the Lassen's second export is the same machine).
ids=$(for f in "$TEST_TMP"/*.json; do
    case $f in */hwloc1-*) continue ;; esac
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"]["id"])' "$f"
done)
if [ "$(echo "$ids" | sort | uniq -d)" = "" ]; then pass; else fail "class ids shared: $(echo "$ids" | sort | uniq -d)"; fi
finish
