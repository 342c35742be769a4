#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A topology file is untrusted input (issue 14): what it declares, how big it is, what kind of file
# it is and what its strings hold never hang, crash or flood the tool, nor reach the terminal raw.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fx=$TOPOTUNE_FIXTURES
minsky=$fx/hwloc-ibm-power8-minsky-4xP100-nvlink.xml
esc=$(printf '\033')
cd "$TEST_TMP" || exit 1

# Item 9: a DOCTYPE without a system id crashed hwloc's import; it is neutralised, the node loads.
expect_exit 0 "minsky as exported" -- "$TOPOTUNE" topo --input "$minsky" --json plain.json
for doctype in '<!DOCTYPE topology>' '<!DOCTYPE topology PUBLIC "-//x//y" "hwloc2.dtd">' ''; do
    sed "s|<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">|$doctype|" "$minsky" >doctype.xml
    expect_exit 0 "hwloc export with '$doctype'" -- "$TOPOTUNE" topo --input doctype.xml --json doctype.json
    check "'$doctype': same class" cmp -s <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"])' plain.json) \
        <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"])' doctype.json)
done
# An internal subset, even empty, is refused before any parser reads it.
sed 's|<!DOCTYPE topology SYSTEM "hwloc2.dtd">|<!DOCTYPE topology []>|' "$minsky" >subset.xml
expect_exit 2 "<!DOCTYPE topology []>" -- "$TOPOTUNE" topo --input subset.xml
expect_stderr_has "internal DTD subset" "internal subset named"
# ... and so are the commands that read a topology through TOPOTUNE_TOPOLOGY.
TOPOTUNE_TOPOLOGY=$PWD/subset.xml expect_exit 2 "doctor with TOPOTUNE_TOPOLOGY=<!DOCTYPE topology []>" -- "$TOPOTUNE" doctor
expect_stderr_has "internal DTD subset" "doctor: internal subset named"

# hwloc's import trusts the file: a crash there (hwloc 2.9, a NUMA node without complete_nodeset,
# found by fuzz-hwloc-xml) is reported as a damaged file, in the commands that read it too.
sed '0,/\(type="NUMANode"[^>]*\) complete_nodeset="[^"]*"/s//\1/' "$minsky" >numa.xml
expect_exit 2 "NUMA node without complete_nodeset" -- "$TOPOTUNE" topo --input numa.xml --json numa.json
expect_stderr_has "hwloc crashed importing it" "the crash reported as a damaged file"
expect_no_file numa.json "NUMA node without complete_nodeset"
expect_exit 2 "predict on the same" -- "$TOPOTUNE" predict --input numa.xml
check "no core file" test ! -e core
# hwloc sets bit os_index of a bitmap for each PU and NUMA node and takes a missing one for the
# largest unsigned: half a GiB and seconds each (found by fuzz-hwloc-xml). Such a file is refused
# before hwloc reads it, with the object's line; so is an os_index beyond any machine.
sed '0,/\(type="NUMANode"[^>]*\) os_index="[^"]*"/s//\1/' "$minsky" >numa-noindex.xml
expect_exit 2 "NUMA node without os_index" -- "$TOPOTUNE" topo --input numa-noindex.xml --json noindex.json
expect_stderr_has '<object type="NUMANode"> has no os_index' "the object named"
expect_no_file noindex.json "NUMA node without os_index"
sed '0,/\(type="PU"[^>]*\) os_index="[^"]*"/s//\1 os_index="4294967295"/' "$minsky" >pu-index.xml
expect_exit 2 "PU with os_index 2^32 - 1" -- "$TOPOTUNE" predict --input pu-index.xml
expect_stderr_has 'os_index="4294967295", not an index below 1048576' "the index named"
# hwloc reads the type in any case and with aliases: the same refusal for each spelling.
for t in numanode NUMA node; do
    sed "0,/type=\"NUMANode\"\([^>]*\) os_index=\"[^\"]*\"/s//type=\"$t\"\1/" "$minsky" >alias.xml
    expect_exit 2 "type=\"$t\" without os_index" -- "$TOPOTUNE" topo --input alias.xml
    expect_stderr_has "<object type=\"$t\"> has no os_index" "type=\"$t\": named"
done
sed '0,/type="PU"\([^>]*\) os_index="[^"]*"/s//type="pu"\1/' "$minsky" >alias.xml
expect_exit 2 'type="pu" without os_index' -- "$TOPOTUNE" topo --input alias.xml
# The line is the file's, also past 65535 (libxml2 counts lines in 16 bits unless told; past
# that it reads the line from the element's first child, which may be the next one).
python3 - "$minsky" big-lines.xml <<'PY'
import re, sys
xml = open(sys.argv[1]).read()
xml = re.sub(r'(<object type="NUMANode"[^>]*?) os_index="[^"]*"', r"\1", xml, count=1)
i = xml.index("<object", xml.index("<topology"))
open(sys.argv[2], "w").write(xml[:i] + "\n" * 70000 + xml[i:])
PY
line=$(grep -n '<object type="NUMANode"' big-lines.xml | head -1 | cut -d: -f1)
expect_exit 2 "a damaged object past line 65535" -- "$TOPOTUNE" topo --input big-lines.xml
check "its line ($line) given" python3 -c 'import re, sys
got = int(re.search(r"line (\d+): <object", open(sys.argv[1]).read()).group(1))
assert 0 <= got - int(sys.argv[2]) <= 1, (got, sys.argv[2])' "$TEST_TMP/err" "$line"

# Item 10: entity expansion. A billion laughs in an NCCL file is refused at once, nothing written.
python3 - laughs.xml <<'PY'
import sys
ents = ['<!ENTITY l0 "lollollollollollollollollollol">']
ents += ['<!ENTITY l%d "%s">' % (i, ("&l%d;" % (i - 1)) * 10) for i in range(1, 10)]
open(sys.argv[1], "w").write('<?xml version="1.0"?>\n<!DOCTYPE system [\n' + "\n".join(ents) +
    '\n]>\n<system version="1" name="&l9;"><cpu numaid="0" vendor="&l9;"/></system>\n')
PY
start=$SECONDS
expect_exit 2 "billion laughs" -- timeout 20 "$TOPOTUNE" topo --input laughs.xml --json laughs.json
check "billion laughs refused within 5 s" test $((SECONDS - start)) -le 5
expect_stderr_has "internal DTD subset" "billion laughs: the DTD named"
expect_no_file laughs.json "billion laughs"
# Quadratic blowup, which libxml2's loop detection lets through: 110 KB made a 79 MB JSON.
python3 - quadratic.xml <<'PY'
import sys
nics = "".join('<pci busid="0000:%02x:%02x.0" class="0x020000"><nic><net name="&a;&a;"/></nic></pci>'
               % (i // 32, i % 32) for i in range(1000))
open(sys.argv[1], "w").write('<!DOCTYPE system [<!ENTITY a "' + "x" * 30000 + '">]>\n'
    '<system version="1"><cpu numaid="0">' + nics + "</cpu></system>\n")
PY
expect_exit 2 "quadratic blowup" -- timeout 20 "$TOPOTUNE" topo --input quadratic.xml --json quadratic.json
expect_stderr_has "internal DTD subset" "quadratic blowup: the DTD named"
expect_no_file quadratic.json "quadratic blowup"

# Item 13: regular files only; each other kind is named, and a FIFO without a writer does not block.
mkfifo fifo.xml
expect_exit 2 "FIFO without a writer" -- timeout 10 "$TOPOTUNE" topo --input fifo.xml
expect_stderr_has "not a regular file" "FIFO named as such"
mkdir dir.xml
expect_exit 2 "directory" -- "$TOPOTUNE" topo --input dir.xml
expect_stderr_has "a directory" "directory named as such"
cp "$minsky" unreadable.xml
chmod 000 unreadable.xml
if [ "$(id -u)" != 0 ]; then
    expect_exit 2 "unreadable file" -- "$TOPOTUNE" topo --input unreadable.xml
    expect_stderr_has "permission denied" "unreadable file named as such"
elif command -v setpriv >/dev/null && chmod 755 . && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$TOPOTUNE"; then
    expect_exit 2 "unreadable file (as nobody)" -- setpriv --reuid=65534 --regid=65534 --clear-groups "$TOPOTUNE" topo --input unreadable.xml
    expect_stderr_has "permission denied" "unreadable file named as such"
else
    echo "skipped: unreadable file (root, and nobody cannot run $TOPOTUNE)"
fi
python3 -c 'import sys; open(sys.argv[1], "w").write("<system version=\"1\" name=\"" + "a" * 60_000_000 + "\"><cpu numaid=\"0\"/></system>")' big-attr.xml
expect_exit 2 "60 MB attribute" -- "$TOPOTUNE" topo --input big-attr.xml
expect_stderr_has "attribute value longer than" "60 MB attribute named as such"
{ cat "$fx/nccl-topo-azure-ndv2.xml"; printf '\0garbage'; } >nul.xml
expect_exit 2 "garbage after a NUL byte" -- "$TOPOTUNE" topo --input nul.xml
expect_stderr_has "NUL byte at offset 1043" "NUL byte named with its offset"

# Item 12: topology JSON ranges: nothing wraps around into a smaller number or the class id.
"$TOPOTUNE" topo --input "$minsky" --json topo.json
python3 - topo.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["nodes"] = 2**32 + 5
json.dump(doc, open("nodes.json", "w"))
doc = json.load(open(sys.argv[1]))
doc["matrix"]["rows"][0][1] = doc["matrix"]["rows"][1][0] = "NV99999999999"
json.dump(doc, open("nv.json", "w"))
PY
expect_exit 2 "nodes 2^32+5" -- "$TOPOTUNE" topo --input nodes.json
expect_stderr_has 'field "nodes"' "nodes named"
expect_exit 2 "NV99999999999" -- "$TOPOTUNE" topo --input nv.json
expect_stderr_has 'matrix.rows[0][1]' "the cell named"
expect_exit 2 "predict on nodes 2^32+5" -- "$TOPOTUNE" predict --input nodes.json
# What topo --json writes reads back as the same node, for every fixture.
for xml in "$fx"/*.xml; do
    name=$(basename "$xml" .xml)
    "$TOPOTUNE" topo --input "$xml" --json "$name.json" 2>/dev/null
    expect_exit 0 "$name: its topology JSON reads back" -- "$TOPOTUNE" topo --input "$name.json" --json "$name.again.json"
    check "$name: same class read back" cmp -s <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"])' "$name.json") \
        <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"])' "$name.again.json")
done

# Item 12: terminal escapes from a file reach neither the terminal nor the JSON. XML cannot carry
# ESC, but it can carry the C1 controls CSI (U+009B), OSC (U+009D) and ST (U+009C).
c1='\xc2[\x80-\x9f]'
sed -e "s|<info name=\"HostName\" value=\"[^\"]*\"/>|<info name=\"HostName\" value=\"evil\&#x9d;0;pwned\&#x9c;\&#x9b;2J\"/>|" \
    -e "s|<info name=\"GPUModel\" value=\"Tesla P100-SXM2-16GB\"/>|<info name=\"GPUModel\" value=\"P100\&#x9b;31m\"/>|" \
    "$minsky" >escapes.xml
check "the crafted export has C1 controls" grep -q '&#x9b;' escapes.xml
expect_exit 0 "export with C1 controls in its strings" -- "$TOPOTUNE" topo --input escapes.xml
check "no C1 control in the summary" test "$(LC_ALL=C grep -c -P "$c1" out)" = 0
check "the host is still shown" grep -q '^Host:      evil.*pwned' out
expect_exit 0 "export with C1 controls, as JSON" -- "$TOPOTUNE" topo --input escapes.xml --json -
check "no C1 control in the JSON" python3 -c 'import json, re, sys; sys.exit(bool(re.search("[\x00-\x1f\x7f-\x9f]", json.dumps(json.load(open(sys.argv[1])), ensure_ascii=False))))' out
sed '0,/numaid="0"/s//numaid="0\&#x9b;2J"/' "$fx/nccl-topo-azure-ndv2.xml" >escape-attr.xml
expect_exit 2 "bad NCCL attribute with a C1 control" -- "$TOPOTUNE" topo --input escape-attr.xml
check "no C1 control in the error" test "$(LC_ALL=C grep -c -P "$c1" err)" = 0
expect_stderr_has 'numaid="0?2J"' "the value shown cleaned"
python3 - topo.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["host"] = "h\x1b]0;owned\x07"
doc["gpus"][0]["model"] = "\x1b[2J" + "x" * 5000
json.dump(doc, open("escapes.json", "w"))
PY
expect_exit 0 "topology JSON with escapes" -- "$TOPOTUNE" topo --input escapes.json
check "no escape from a topology JSON" test "$(grep -c "$esc" out)" = 0
check "a 5000-byte model is cut short" test "$(grep '^GPUs:' out | wc -c)" -lt 400

# AMD GPUs (a Tioga node's 8 MI200s, rsmi OS devices): not counted as NVIDIA GPUs, but said, and
# the node is no CPU-only class; predict says why it has nothing to price.
amd=$fx/hwloc-llnl-tioga-ex235a-8xMI200-amd.xml
expect_exit 0 "a node of AMD GPUs" -- "$TOPOTUNE" topo --input "$amd"
check "its 8 GPUs said, left out" grep -qx 'GPUs:      0 (and 8 GPU(s) of another vendor, left out: NCCL drives NVIDIA GPUs only)' out
check "its class is no cpu-only one" grep -q '^Class:     non-nvidia-gpu-8x-4xcxi-' out
expect_exit 2 "predict on it" -- "$TOPOTUNE" predict --input "$amd"
expect_stderr_has "has no NVIDIA GPU (its GPUs are of another vendor" "says why"
# hwloc 1.x's export of several machines (a System root holding them), which hwloc 2 cannot
# import: said so, not "hwloc rejected the XML export (check that it comes from lstopo --of
# xml)", which it does. A System root holding one machine's objects is one machine: read.
python3 - "$fx/hwloc1-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.xml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
start = s.index('<object type="Machine"')
end = s.rindex("</topology>")
machine = s[start:end]
open("two-machines.xml", "w").write(s[:start] + '<object type="System" os_index="0">\n' + machine
                                      + machine + "</object>\n" + s[end:])
open("system-root.xml", "w").write(s.replace('<object type="Machine"', '<object type="System"', 1))
PY
expect_exit 2 "an hwloc 1.x export of two machines" -- "$TOPOTUNE" topo --input two-machines.xml
expect_stderr_has "an hwloc 1.x export of several machines" "said so"
expect_stderr_has "export each node alone" "how to fix"
expect_exit 0 "a System root of one machine" -- "$TOPOTUNE" topo --input system-root.xml
check "the machine read" grep -q '^GPUs:      4 x' out

# AMD's GPUs in an export without a GPU stack of AMD's (hwloc 1.11 on LLNL's Corona: MI50s of
# VGA class, their OS devices card*, renderD*): GPUs too (they were none, a CPU-only class). A
# board's VGA controller (ASPEED's, card* only) and integrated graphics (an Intel CPU's, an AMD
# APU's: VGA with a render node too) stay none.
sed -e 's/pci_type="0380 \[1002:7408\]/pci_type="0300 [1002:66a1]/' \
    -e 's/name="rsmi\([0-9]\)" subtype="RSMI"/name="renderD12\1"/' "$amd" >amd-vga.xml
check "no RSMI device left" sh -c "! grep -q 'name=\"rsmi' amd-vga.xml"
expect_exit 0 "AMD GPUs of VGA class, DRM render nodes" -- "$TOPOTUNE" topo --input amd-vga.xml
check "its 8 GPUs said" grep -qx 'GPUs:      0 (and 8 GPU(s) of another vendor, left out: NCCL drives NVIDIA GPUs only)' out
sed -e 's/pci_type="0300 \[1002:66a1\]/pci_type="0300 [1a03:2000]/' -e 's/name="renderD12/name="card/' amd-vga.xml >aspeed.xml
expect_exit 0 "ASPEED display controllers" -- "$TOPOTUNE" topo --input aspeed.xml
check "no GPU" grep -qx 'GPUs:      0' out
for igpu in 8086:9a49 1002:1638; do
    sed -e "s/pci_type=\"0300 \\[1002:66a1\\]/pci_type=\"0300 [$igpu]/" amd-vga.xml >igpu.xml
    check "$igpu in the file" grep -q "0300 \\[$igpu\\]" igpu.xml
    expect_exit 0 "integrated graphics $igpu, a render node" -- "$TOPOTUNE" topo --input igpu.xml
    check "$igpu: no GPU" grep -qx 'GPUs:      0' out
done

# An export made without NVML names SXM GPUs but not their NVLinks (AWS's p4d and p6e exports):
# with the NVSwitches on PCI (the DGX-2 export without its NVLinkBandwidth matrix), or for trays
# of NVSwitch racks (GB200: the switches are not on the host's PCI), each GPU gets its model's
# links, and the prediction is the one the matrix gives; SXM GPUs without switches (Lassen's
# V100s) keep the PCIe paths.
python3 - "$fx" <<'PY'
import re, sys
s = open(sys.argv[1] + "/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml").read()
t = re.sub(r'<distances2hetero[^>]*name="NVLinkBandwidth">.*?</distances2hetero>\n?', "", s, flags=re.S)
assert t != s
open("dgx2-nolinks.xml", "w").write(t)
g = open(sys.argv[1] + "/hwloc-aws-g4dn-metal-8xT4.xml").read().replace('value="Tesla T4"', 'value="NVIDIA GB200"')
open("gb200-like.xml", "w").write(g)
PY
expect_exit 0 "SXM GPUs and NVSwitches, no NVLink matrix" -- "$TOPOTUNE" topo --input dgx2-nolinks.xml
check "6 links a GPU, inferred and said" grep -q '^NVLink:    yes, 6 links a GPU to NVSwitches: inferred from the GPU model' out
check "its class has them" grep -q '^Class:     v100-sxm3-32gb-h-16x-nvs6-' out
p_matrix=$("$TOPOTUNE" predict --input "$fx/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml" -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
p_inferred=$("$TOPOTUNE" predict --input dgx2-nolinks.xml -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
check "the same prediction as with the matrix ($p_matrix GB/s)" test "$p_matrix" = "$p_inferred"
# An export's GPU link rate is the one it ran at then (a GPU at rest trains down): the SL390s'
# GPUs at 4 GB/s are priced as NCCL's gen 3 x16, as they are when the export says 15.75 GB/s.
sed 's/pci_type="0302 \[10de:06d2\]\([^>]*\)pci_link_speed="[0-9.]*"/pci_type="0302 [10de:06d2]\1pci_link_speed="15.753846"/' \
    "$fx/hwloc-hp-sl390s-g7-3xM20x0-mlx4-ib.xml" >sl390s-gen3.xml
check "the edit took" test "$(grep -c 'pci_link_speed="15.753846"' sl390s-gen3.xml)" -ge 3
p_idle=$("$TOPOTUNE" predict --input "$fx/hwloc-hp-sl390s-g7-3xM20x0-mlx4-ib.xml" -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
p_gen3=$("$TOPOTUNE" predict --input sl390s-gen3.xml -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
check "an idle rate priced as gen 3 x16 ($p_idle and $p_gen3 GB/s)" test -n "$p_idle" -a "$p_idle" = "$p_gen3"
# The same for a GPU built for gen 4: two L40S at rest (2 GB/s) in the Pascal node's place are
# priced as the gen 4 x16 link NCCL reads on the live node, not as gen 3.
pascal="$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml"
for rate in 2.000000 31.507692; do
    sed -e "s/\[10de:15f8\]\([^>]*\)pci_link_speed=\"[0-9.]*\"/[10de:26b9]\1pci_link_speed=\"$rate\"/" \
        -e 's/Tesla P100-PCIE-16GB/NVIDIA L40S/' "$pascal" >"l40s-$rate.xml"
done
check "the edits took" test "$(grep -c '26b9.*pci_link_speed="2.000000"' l40s-2.000000.xml)" -eq 2
p_idle=$("$TOPOTUNE" predict --input l40s-2.000000.xml -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
p_gen4=$("$TOPOTUNE" predict --input l40s-31.507692.xml -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
p_p100=$("$TOPOTUNE" predict --input "$pascal" -b 1G -e 1G | awk '/^ +predicted/ {print $6}')
check "L40S at rest priced as gen 4 x16 ($p_idle, $p_gen4 GB/s), above the P100s' gen 3 ($p_p100)" \
    python3 -c 'import sys; a, b, c = map(float, sys.argv[1:]); assert a == b and a > 1.9 * c' \
    "$p_idle" "$p_gen4" "$p_p100"
# Live, with an NVML that has no NVLink calls (tests/fakes/fake-nvml.c): the links hwloc gives, or
# those the GPU model implies, stay; NVML's names and driver are taken.
if [ -e "${TOPOTUNE_FAKE_NVML:-}/libnvidia-ml.so.1" ]; then
    for f in "$fx/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml" dgx2-nolinks.xml; do
        expect_exit 0 "live $(basename "$f"), NVML without NVLink calls" -- env HWLOC_XMLFILE="$f" \
            HWLOC_THISSYSTEM=1 LD_LIBRARY_PATH="$TOPOTUNE_FAKE_NVML${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            FAKE_NVML_BUSES=34,36,39,3b,57,59,5c,5e,b7,b9,bc,be,e0,e2,e5,e7 \
            FAKE_NVML_NAME="Tesla V100-SXM3-32GB-H" "$TOPOTUNE" topo --json live.json
        check "its 6 links a GPU kept" python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
assert t["software"]["driver"] == "999.99.99", t["software"]
assert "-16x-nvs6-" in t["class"]["id"] and all(g["nvlinks"] == 6 for g in t["gpus"]), (t["class"]["id"], t["gpus"][0])' live.json
    done
fi
expect_exit 0 "GB200 trays, no switch on PCI" -- "$TOPOTUNE" topo --input gb200-like.xml --json gb200-like.json
check "18 links a GPU, NVSwitches present, by the schema" python3 - gb200-like.json "$TOPOTUNE_SRC/docs/schemas/topology.schema.json" <<'PY'
import json, subprocess, sys
t = json.load(open(sys.argv[1]))
assert t["nvlink_inferred"] is True and t["nvswitches"] is None, t
assert all(g["nvlinks"] == 18 for g in t["gpus"]), t["gpus"]
subprocess.run([sys.executable, sys.argv[2].replace("docs/schemas/topology.schema.json", "tests/cli/validate-schema.py"), sys.argv[2], sys.argv[1]], check=True)
PY
expect_exit 0 "SXM GPUs without switches" -- "$TOPOTUNE" topo --input "$fx/hwloc-llnl-lassen-ac922-4xV100-nvlink-4xmlx5.xml"
check "keep the PCIe paths" grep -q '^NVLink:    not described by this source' out

# A GPU whose PCI device id reads 0 and whose export names no model is of no model: not the
# first catalog entry known by name only.
python3 - "$fx/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" <<'PY'
import re, sys
s = open(sys.argv[1]).read().replace("[10de:15f8]", "[10de:0000]")
s = re.sub(r'\s*<info name="GPUModel" value="[^"]*"/>', "", s)
open("dev0.xml", "w").write(s)
PY
expect_exit 0 "a GPU of device id 0, no model name" -- "$TOPOTUNE" topo --input dev0.xml
check "no catalog model made up" sh -c "! grep -q 'H100 NVL' out"
expect_exit 2 "and no band for it" -- "$TOPOTUNE" expect --input dev0.xml -b 1M -e 1M

# Item 17: mixed GPU models and NVLink on some GPUs only.
expect_exit 0 "mixed GPUs" -- "$TOPOTUNE" topo --input "$fx/hwloc-supermicro-x9drg-2s-K40m-mlx5.xml"
check "every model counted, the AMD card said and left out" grep -qx 'GPUs:      3: 2 x Tesla M2075, 1 x Tesla K40m (and 1 GPU(s) of another vendor, left out: NCCL drives NVIDIA GPUs only)' out
# Its M2075s as V100 PCIe 32GBs (10de:1db6) with no name, and its SAS controller as an Intel
# FPGA card (8086:0b2b, a processing accelerator, 0x1200): the V100 by its device id, the FPGA
# no GPU at all (JSC's DEEP-EST nodes carry both).
sed -e 's/pci_type="0302 \[10de:1094\] \[00de:0088\] a1" pci_link_speed="0.000000">/pci_type="0302 [10de:1db6] [10de:124a] a1" pci_link_speed="15.753846">/' \
    -e 's/pci_type="0107 \[8086:1d6b\]/pci_type="1200 [8086:0b2b]/' \
    -e '/value="Tesla M2075 Dual-Slot Computing Processor Module"/d' \
    "$fx/hwloc-supermicro-x9drg-2s-K40m-mlx5.xml" >fpga.xml
expect_exit 0 "a V100 PCIe 32GB and an Intel FPGA" -- "$TOPOTUNE" topo --input fpga.xml
check "the V100s named, the FPGA no GPU" grep -qx 'GPUs:      3: 2 x Tesla V100-PCIE-32GB, 1 x Tesla K40m (and 1 GPU(s) of another vendor, left out: NCCL drives NVIDIA GPUs only)' out
python3 - topo.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["gpus"][0]["nvlinks"] = 0
for i in range(4):
    if i:
        doc["matrix"]["rows"][0][i] = doc["matrix"]["rows"][i][0] = "SYS"
json.dump(doc, open("some-nvlink.json", "w"))
PY
expect_exit 0 "NVLink on GPUs 1-3 only" -- "$TOPOTUNE" topo --input some-nvlink.json
check "NVLink on 3 of 4 GPUs" grep -qx 'NVLink:    yes, 3 of 4 GPUs' out

# Item 18: a real hwloc 3.0 export: the message says how to convert it.
expect_exit 2 "hwloc 3.0 export" -- "$TOPOTUNE" topo --input "$fx/refused/hwloc-v3-nvidia-dgx2h-16xV100-nvswitch.xml"
expect_stderr_has "lstopo from hwloc 3" "hwloc 3 named"
expect_stderr_has "--of v2xml" "the conversion named"

# A GPU model name of 250 characters made a class id of 264, past the schema's 200 and the sweep
# readers' 128: a sweep on it ran to its end, then refused its own directory. The id keeps the
# name's first 48 characters; its hash still tells two such names apart.
long=$(printf 'A%.0s' $(seq 120))
for tail in B C; do
    sed "s/value=\"Tesla V100-SXM3-32GB-H\"/value=\"Tesla V100-SXM3-32GB-H $long$tail$long\"/" \
        "$fx/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml" >"long-$tail.xml"
    expect_exit 0 "a 250-character GPU model ($tail)" -- "$TOPOTUNE" topo --input "long-$tail.xml" \
        --json "long-$tail.json"
done
check "its class id fits 128 characters, and the two differ" python3 -c 'import json, sys
a, b = (json.load(open(f))["class"]["id"] for f in sys.argv[1:])
assert len(a) <= 128 and len(b) <= 128 and a != b and "v100-sxm3-32gb-h-aaa" in a, (a, b)' \
    long-B.json long-C.json
check "the document fits its schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/topology.schema.json" long-B.json
expect_exit 0 "a sweep on it" -- "$TOPOTUNE" -q sweep --backend sim --topology long-B.json \
    --space "$fx/space-nccl-tiny.json" --out long-sweep
expect_exit 0 "gen on that sweep" -- "$TOPOTUNE" -q gen --runs long-sweep --profiles long-profiles
finish
