#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every bad input: exit 2, one line on stderr naming the file, and no output file.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fx=$TOPOTUNE_FIXTURES
bad=$TEST_TMP/bad
mkdir -p "$bad"

: >"$bad/empty.xml"
head -c 2000 "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" >"$bad/truncated-hwloc.xml"
head -c 700 "$fx/nccl-topo-azure-ndv4.xml" >"$bad/truncated-nccl.xml"
echo '<html><body>not a topology</body></html>' >"$bad/html.xml"
echo 'just text' >"$bad/text.xml"
iconv -f UTF-8 -t UTF-16 "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" >"$bad/utf16.xml"
sed 's/<topology version="2.0">/<topology version="3.0">/' "$fx/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" >"$bad/hwloc-v3.xml"
sed 's/<system version="1">/<system version="2">/' "$fx/nccl-topo-azure-ndv2.xml" >"$bad/nccl-v2.xml"
sed '0,/link_width="16"/s//link_width="sixteen"/' "$fx/nccl-topo-azure-ndv4.xml" >"$bad/nccl-width.xml"
sed '0,/link_speed="16 GT\/s"/s//link_speed="fast"/' "$fx/nccl-topo-azure-ndv4.xml" >"$bad/nccl-speed.xml"
sed 's/count="12"/count="-3"/' "$fx/nccl-topo-azure-ncv4.xml" >"$bad/nccl-count.xml"
sed '0,/busid="0003:00:00.0"/s//busid="zz:not-a-bus"/' "$fx/nccl-topo-azure-ndv4.xml" >"$bad/nccl-busid.xml"
sed '0,/numaid="0"/s//numaid="zero"/' "$fx/nccl-topo-azure-ndv2.xml" >"$bad/nccl-numaid.xml"
sed '0,/affinity="[^"]*"/s//affinity="not-a-mask"/' "$fx/nccl-topo-azure-ndv2.xml" >"$bad/nccl-affinity.xml"
sed 's/speed="100000"/speed="100G"/' "$fx/nccl-topo-azure-ncv4.xml" >"$bad/nccl-net-speed.xml"

python3 -c '
import sys
nics = "".join("<pci busid=\"0000:%02x:%02x.0\" class=\"0x020000\"/>" % (i // 32, i % 32) for i in range(2000))
open(sys.argv[1], "w").write("<system version=\"1\"><cpu numaid=\"0\">" + nics + "</cpu></system>")' "$bad/too-many-devices.xml"

# Issue 14: DTDs, entity expansion, ranges and sizes (tests/cli/t006-topo-untrusted.sh checks the messages).
sed 's|<!DOCTYPE topology SYSTEM "hwloc2.dtd">|<!DOCTYPE topology []>|' "$fx/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" >"$bad/hwloc-dtd-empty-subset.xml"
sed 's|<!DOCTYPE topology SYSTEM "hwloc2.dtd">|<!DOCTYPE topology SYSTEM "hwloc2.dtd" [<!ENTITY h "x">]>|' "$fx/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" >"$bad/hwloc-dtd-entity.xml"
python3 -c '
import sys
ents = ["<!ENTITY l0 \"lollollollollollollollollollol\">"]
ents += ["<!ENTITY l%d \"%s\">" % (i, ("&l%d;" % (i - 1)) * 10) for i in range(1, 10)]
open(sys.argv[1], "w").write("<?xml version=\"1.0\"?>\n<!DOCTYPE system [\n" + "\n".join(ents) +
    "\n]>\n<system version=\"1\" name=\"&l9;\"><cpu numaid=\"0\" vendor=\"&l9;\"/></system>\n")
' "$bad/nccl-billion-laughs.xml"
python3 -c '
import sys
open(sys.argv[1], "w").write("<system version=\"1\" name=\"" + "a" * 60_000_000 + "\"><cpu numaid=\"0\"/></system>")
' "$bad/nccl-60mb-attribute.xml"
{ cat "$fx/nccl-topo-azure-ndv2.xml"; printf '\0<system version="1"><cpu numaid="zero"/></system>'; } >"$bad/nccl-nul-garbage.xml"
mkdir "$bad/directory.xml"
# every GPU at one bus id: NCCL would find one of them (--nccl-xml wrote 16 <pci> of one address)
sed -E 's/pci_busid="[^"]*" (pci_type="0302)/pci_busid="0000:34:00.0" \1/' \
    "$fx/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml" >"$bad/hwloc-gpus-one-busid.xml"
check "the bus id edit took" test "$(grep -c 'pci_busid="0000:34:00.0" pci_type="0302' \
    "$bad/hwloc-gpus-one-busid.xml")" -eq 16
# two GPUs at one bus id written in two cases (hex digits: NCCL reads them alike)
echo '<system version="1"><cpu numaid="0"><pci busid="0000:0a:00.0" class="0x030200" vendor="0x10de" device="0x20b0"/><pci busid="0000:0A:00.0" class="0x030200" vendor="0x10de" device="0x20b0"/></cpu></system>' \
    >"$bad/nccl-gpus-one-busid-two-cases.xml"
# a PCIe rate that is no number strtod reads (nan once passed as a rate, inf too)
for rate in nan inf; do
    sed "0,/link_speed=\"[^\"]*\"/s//link_speed=\"$rate GT\/s\"/" "$fx/nccl-topo-azure-ndv2.xml" \
        >"$bad/nccl-link-speed-$rate.xml"
    check "the $rate edit took" grep -q "link_speed=\"$rate GT/s\"" "$bad/nccl-link-speed-$rate.xml"
done
# hwloc 2.9 crashes importing a NUMA node without complete_nodeset (found by fuzz-hwloc-xml).
sed '0,/\(type="NUMANode"[^>]*\) complete_nodeset="[^"]*"/s//\1/' "$fx/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" >"$bad/hwloc-numa-without-complete-nodeset.xml"
# Names that end up in variables and scripts (@interfaces, NCCL_IB_HCA) stay names.
# shellcheck disable=SC2016 # the $(...) is the attack, written as is
echo '<system version="1"><cpu numaid="0"><pci busid="0000:05:00.0" class="0x020000"><nic><net name="eth0$(reboot)"/></nic></pci></cpu></system>' >"$bad/nccl-net-name.xml"
sed 's/name="hsi0"/name="hsi0;reboot"/' "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" >"$bad/hwloc-netdev-name.xml"
"$TOPOTUNE" topo --input "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" --json "$TEST_TMP/pascal.json"
python3 - "$TEST_TMP/pascal.json" "$bad" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["nics"][0]["netdev"] = "hsi0\nexport LD_PRELOAD=/tmp/x.so"
json.dump(doc, open(f"{sys.argv[2]}/json-netdev-newline.json", "w"))
doc = json.load(open(sys.argv[1]))
doc["gpus"][0]["cpuset"] = "0-3; rm -rf /"
json.dump(doc, open(f"{sys.argv[2]}/json-cpuset.json", "w"))
PY
"$TOPOTUNE" topo --input "$fx/hwloc-ibm-power8-minsky-4xP100-nvlink.xml" --json "$TEST_TMP/minsky.json"
python3 - "$TEST_TMP/minsky.json" "$bad" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
def write(name, edit):
    doc = json.loads(json.dumps(base))
    edit(doc)
    with open(f"{sys.argv[2]}/{name}.json", "w") as f:
        json.dump(doc, f)
write("json-nodes-2e32", lambda d: d.update(nodes=2**32 + 5))
write("json-nv-overflow", lambda d: d["matrix"]["rows"][0].__setitem__(1, "NV99999999999"))
write("json-nv-garbage", lambda d: d["matrix"]["rows"][0].__setitem__(1, "NV2; rm -rf /"))
write("json-numa-2e32", lambda d: d["gpus"][0].update(numa=2**32))
write("json-pcie-gen", lambda d: d["gpus"][0]["pcie"].update(gen=99))
write("json-nvlinks", lambda d: d["gpus"][0].update(nvlinks=2**31))
write("json-cpu-sockets", lambda d: d["cpu"].update(sockets=-7))
write("json-nic-kind", lambda d: d["nics"].append(dict(name="x", kind="infiniband")) or d["matrix"]["rows"].clear())
write("json-gpu-not-object", lambda d: d["gpus"].append("GPU4"))
with open(f"{sys.argv[2]}/json-nul-garbage.json", "w") as f:
    f.write(json.dumps(base) + "\0{\"garbage\": 1}")
PY

for input in "$bad"/*.xml "$bad"/*.json "$bad/missing.xml"; do
    name=$(basename "$input")
    out=$TEST_TMP/out-$name.json
    expect_exit 2 "$name" -- "$TOPOTUNE" topo --input "$input" --json "$out"
    expect_stderr_lines 1 "$name"
    expect_stderr_has "$input" "$name names the file"
    expect_no_file "$out" "$name"
    if ls "$TEST_TMP"/out-*.tmp.* >/dev/null 2>&1; then fail "$name: temporary file left"; fi
done

# A byte order mark, as editors save UTF-8, starts a valid export or spec: read past, as xmllint
# does (it was "not XML"). UTF-16 (above) is named, with the conversion.
expect_exit 2 "UTF-16" -- "$TOPOTUNE" topo --input "$bad/utf16.xml"
expect_stderr_has "UTF-16 text (a Windows editor's): convert it to UTF-8" "said, with the fix"
for f in "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"; do
    ext=${f##*.}
    { printf '\357\273\277'; cat "$f"; } >"$TEST_TMP/bom.$ext"
    expect_exit 0 "a byte order mark before $(basename "$f")" -- "$TOPOTUNE" topo --input "$TEST_TMP/bom.$ext"
    with=$(grep '^Class:' "$TEST_TMP/out")
    expect_exit 0 "$(basename "$f") without it" -- "$TOPOTUNE" topo --input "$f"
    check "the same class with the mark" test "$with" = "$(grep '^Class:' "$TEST_TMP/out")"
done

# An NVLinkBandwidth matrix whose objects are no GPU this export maps (GPUs known by NVML OS
# devices without a PCI parent, as an export with PCI filtered out or edited has them) says
# nothing of the GPUs: NVLink unknown, not "none" (which priced 4 NVLinked A100s as PCIe).
python3 - "$TEST_TMP/osdev-nvlink.xml" "$TEST_TMP/osdev-nics.xml" <<'PY'
import sys
sets = 'cpuset="0x3" complete_cpuset="0x3" nodeset="0x1" complete_nodeset="0x1"'
devs = "".join('<object type="OSDev" gp_index="%d" name="nvml%d" osdev_type="1"><info name="Backend" '
               'value="NVML"/><info name="GPUModel" value="NVIDIA A100-SXM4-40GB"/></object>\n'
               % (110 + i, i) for i in range(4))
bw = " ".join("0" if i == j else "100000" for i in range(4) for j in range(4))
open(sys.argv[1], "w").write(f'''<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
<object type="Machine" os_index="0" {sets} gp_index="1">
<object type="Package" os_index="0" {sets} gp_index="2"><info name="CPUVendor" value="GenuineIntel"/>
<object type="NUMANode" os_index="0" {sets} gp_index="3" local_memory="1000000000"/>
<object type="Core" os_index="0" {sets} gp_index="4"><object type="PU" os_index="0" {sets} gp_index="5"/></object>
{devs}</object>
</object>
<distances2hetero nbobjs="4" kind="25" name="NVLinkBandwidth">
<indexes length="40">OSDev:110 OSDev:111 OSDev:112 OSDev:113 </indexes>
<u64values length="{len(bw) + 1}">{bw} </u64values>
</distances2hetero>
</topology>
''')
# the same node's RDMA devices without their PCI devices
nics = "".join('<object type="OSDev" gp_index="%d" name="mlx5_%d" osdev_type="3"/>\n' % (120 + i, i)
               for i in range(2))
text = open(sys.argv[1]).read().replace("</object>\n</object>\n<distances2hetero", nics + "</object>\n</object>\n<distances2hetero")
assert nics in text
open(sys.argv[2], "w").write(text)
PY
expect_exit 0 "an NVLink matrix of no mapped GPU" -- "$TOPOTUNE" topo --input "$TEST_TMP/osdev-nvlink.xml"
expect_stderr_has "NVLinkBandwidth matrix names none of its" "said"
check "NVLink not described, not none" grep -q "^NVLink: *not described" "$TEST_TMP/out"
# RDMA devices given without their PCI device were dropped without a word: the node priced
# without its NICs.
expect_exit 0 "RDMA devices without a PCI device" -- "$TOPOTUNE" topo --input "$TEST_TMP/osdev-nics.xml"
expect_stderr_has "2 RDMA device(s) without a PCI device in the export are left out" "said"

# The odd but real AWS p5 rate string is read, not rejected.
expect_exit 0 "p5 link_speed '32 GT/s PCIe/s'" -- "$TOPOTUNE" topo --input "$fx/nccl-topo-aws-p5-48xlarge.xml" --json "$TEST_TMP/p5.json"

# A forged link rate in an hwloc export (past any PCIe link, or not a number) is no rate: the
# P100s are priced as without one, never as a gen 5 link.
p_plain=$("$TOPOTUNE" predict --input "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
for v in 1e30 inf nan; do
    sed "s/pci_link_speed=\"15.753846\"/pci_link_speed=\"$v\"/g" "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" >"$TEST_TMP/rate-$v.xml"
    p_forged=$("$TOPOTUNE" predict --input "$TEST_TMP/rate-$v.xml" -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
    check "pci_link_speed=$v ignored ($p_forged and $p_plain GB/s)" test -n "$p_plain" -a "$p_forged" = "$p_plain"
done

# Usage errors name the flag and exit 2.
expect_exit 2 "unknown flag" -- "$TOPOTUNE" topo --bogus
expect_stderr_has "--bogus" "unknown flag is named"
expect_exit 2 "missing value" -- "$TOPOTUNE" topo --input
expect_stderr_has "--input" "flag without value is named"
expect_exit 2 "unknown command" -- "$TOPOTUNE" nosuchcommand
# The bad attribute's line, also past line 65535 (libxml2's 16-bit count unless told; past it the
# line is read from the element's first child, which may be the next one).
python3 - "$fx/nccl-topo-azure-ndv4.xml" "$bad/nccl-big-lines.xml" <<'PY'
import sys
xml = open(sys.argv[1]).read().replace('busid="0003:00:00.0"', 'busid="zz"', 1)
i = xml.index(">", xml.index("<system")) + 1
open(sys.argv[2], "w").write(xml[:i] + "\n" * 70000 + xml[i:])
PY
line=$(grep -n 'busid="zz"' "$bad/nccl-big-lines.xml" | cut -d: -f1)
expect_exit 2 "an NCCL file's bad bus id past line 65535" -- "$TOPOTUNE" topo --input "$bad/nccl-big-lines.xml"
check "its line ($line) given" python3 -c 'import re, sys
got = int(re.search(r"line (\d+): <pci", open(sys.argv[1]).read()).group(1))
assert 0 <= got - int(sys.argv[2]) <= 1, (got, sys.argv[2])' "$TEST_TMP/err" "$line"
rm -f "$bad/nccl-big-lines.xml"

expect_exit 0 "topo --help" -- "$TOPOTUNE" topo --help
check "topo --help lists --input" grep -q -- "--input" "$TEST_TMP/out"
# README's examples name profiles/specs/X.json, the source tree's: elsewhere (an installed
# topotune) that file is not there, and the message names the shipped spec of that name
(cd "$TEST_TMP" && "$TOPOTUNE" predict --input profiles/specs/hgx-h100.json >/dev/null 2>"$TEST_TMP/err")
check "a missing spec: the shipped one of that name said" grep -q "no such file (the shipped spec of that name is '.*specs/hgx-h100.json')" "$TEST_TMP/err"
finish
