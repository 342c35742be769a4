#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topo --nccl-xml: NCCL's topology file (NCCL_TOPO_FILE) from every hwloc export and NCCL topology
# fixture with bus ids. Each file keeps to what NCCL's own reader (src/graph/xml.cc) takes: no
# declaration, elements system > cpu > pci > pci ..., one space between attributes, values in
# double quotes, class, busid, link_speed (one of NCCL's spellings) and link_width on every pci.
# Read back (topotune's NCCL XML reader, as the fixtures are read), it gives the same GPUs and
# NICs by bus id, the same NUMA nodes and the same matrix, except that NCCL's file has no host
# bridges (PHB reads NODE) and the functions of one device are one device. NICs keep their kind
# (their PCI ids go with them), but for RoCE, which reads back as Ethernet. A spec, whose devices
# have no bus ids, is refused; an existing file is replaced whole, never through a link.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
n=0
for f in "$TOPOTUNE_FIXTURES"/hwloc-*.xml "$TOPOTUNE_FIXTURES"/nccl-topo-*.xml; do
    name=$(basename "$f" .xml)
    "$TOPOTUNE" topo --input "$f" --json "$name.src.json" 2>/dev/null || continue
    if ! "$TOPOTUNE" topo --input "$f" --nccl-xml "$name.nccl.xml" 2>"$name.err"; then
        # only a device without a bus id may refuse
        check "$name: refused only for a device without a bus id" grep -q "has no PCI bus id" "$name.err"
        continue
    fi
    n=$((n + 1))
    check "$name: read back" "$TOPOTUNE" topo --input "$name.nccl.xml" --json "$name.back.json"
    check "$name: NCCL's reader's rules, and the same devices, NUMA nodes and matrix" python3 - \
        "$name.nccl.xml" "$name.src.json" "$name.back.json" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
speeds = {"2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"}
stack, ids = [], set()
for line in text.splitlines():
    s = line.strip()
    assert "\t" not in line and s, repr(line)
    if s.startswith("<!--"):
        assert s.endswith("-->") and "--" not in s[4:-3], s
        continue
    m = re.fullmatch(r'<(/?)([a-z]+)((?: [a-z_]+="[^"<>&]{0,255}")*)(/?)>', s)
    assert m, s
    close, tag, attrs, single = m.groups()
    if close:
        assert stack.pop() == tag, s
        continue
    parent = stack[-1] if stack else None
    assert (parent, tag) in {(None, "system"), ("system", "cpu"), ("cpu", "pci"), ("pci", "pci")}, (parent, tag)
    a = dict(re.findall(r' ([a-z_]+)="([^"]*)"', attrs))
    assert len(a) <= 16, a
    if tag == "system":
        assert a == {"version": "1"}, a
    if tag == "cpu":  # NCCL makes a CPU node per element: one id twice is two nodes
        assert a["numaid"].isdigit() and a["numaid"] not in ids, a
        ids.add(a["numaid"])
    if tag == "pci":
        assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", a["busid"]), a
        assert a["class"] in ("0x060400", "0x030200", "0x020700", "0x020000"), a
        assert a["link_speed"] in speeds and a["link_width"].isdigit(), a
        assert all(re.fullmatch(r"0x[0-9a-f]{4}", a[k]) for k in ("vendor", "device") if k in a), a
    if not single:
        stack.append(tag)
assert not stack, stack
src, back = (json.load(open(p)) for p in sys.argv[2:4])
def devices(t):
    return {d["pci"]: (k, i, d["numa"]) for k in ("gpus", "nics") for i, d in enumerate(t[k])}
ds, db = devices(src), devices(back)
assert set(ds) == set(db), (sorted(ds), sorted(db))
assert all(ds[p][2] == db[p][2] or ds[p][2] is None for p in ds), [(p, ds[p], db[p]) for p in ds]
def letter(t, d, p, q):
    labels = t["matrix"]["labels"]
    col = lambda x: labels.index(("GPU" if d[x][0] == "gpus" else "NIC") + str(d[x][1]))
    v = t["matrix"]["rows"][col(p)][col(q)]
    return "NODE" if v == "PHB" else v
pcis = sorted(ds)
# a NIC's ports share a bus id: one device of NCCL's file
pcis = [p for p in pcis if p in db]
# the functions of one device (a NIC's ports, dddd:bb:dd.f) are one device to NCCL: not compared
bad = [(p, q, letter(src, ds, p, q), letter(back, db, p, q)) for p in pcis for q in pcis
       if p[:10] != q[:10] and not letter(src, ds, p, q).startswith("NV")
       and letter(src, ds, p, q) != letter(back, db, p, q)]
assert not bad, bad[:6]
# a NIC's kind survives: EFA (not Amazon's ENA) and Slingshot are Ethernet-class devices told
# apart by their PCI ids. Not RoCE: NCCL's file tells it from Ethernet by its verbs device's name
# in <nic><net>, which this file leaves to NCCL to detect.
kinds = [{n["pci"]: n["kind"] for n in t["nics"]} for t in (src, back)]
assert all(kinds[1][p] == (k if k != "roce" else "eth") for p, k in kinds[0].items()
           if p in kinds[1]), kinds
print(len(pcis), "devices")
PY
done
check "at least 8 fixtures written and read back ($n)" test "$n" -ge 8
# Each device's PCIe link as its source gives it (NCCL trusts the file's rate over sysfs): an
# NCCL topology file's gen and width kept, device by device; hwloc's rate in GB/s (pci_link_speed)
# as the gen and width that give it: Tioga's Slingshot NICs at 31.5 GB/s are gen 4 x16.
check "the NCCL files' links kept, device by device" python3 - "$TOPOTUNE_FIXTURES" <<'PY'
import glob, os, re, sys
def links(path):
    out = {}
    for m in re.finditer(r'<pci busid="([0-9a-f:.]+)"[^>]*?link_speed="([^"]*)" link_width="([^"]*)"',
                         open(path).read()):
        gts = re.match(r"[0-9.]+", m.group(2))
        out[m.group(1)] = (float(gts.group()) if gts else None, m.group(3))
    return out
n = 0
for f in glob.glob(os.path.join(sys.argv[1], "nccl-topo-*.xml")):
    name = os.path.basename(f)[:-4]
    if not os.path.exists(name + ".nccl.xml"):
        continue
    src, out = links(f), links(name + ".nccl.xml")
    same = [(b, src[b], out[b]) for b in out if not b.startswith("ffff") and b in src
            and src[b][0] and src[b][1].isdigit() and int(src[b][1]) > 0]
    bad = [x for x in same if x[1] != x[2]]
    assert not bad, (name, bad[:4])
    n += len(same)
assert n >= 20, n
print(n, "devices")
PY
check "hwloc's GB/s as gen and width" grep -q \
    'vendor="0x17db" device="0x0501" link_speed="16.0 GT/s PCIe" link_width="16"' \
    hwloc-llnl-tioga-ex235a-8xMI200-amd.nccl.xml
# A locality of no single NUMA node (the R910's groups of nodes {0, 2} and {1, 3}) gets an id no
# NUMA node of the machine has: 4 and 5 (they were 0 and 1, nodes without a device).
check "the R910's groups past its 4 NUMA nodes" test "$(grep -o 'numaid="[0-9]*"' hwloc-dell-r910-4s-groups-pci.nccl.xml | tr '\n' ' ')" = 'numaid="4" numaid="5" '
# A GPU's rate in an export is the one it ran at then (a GPU at rest trains down): the SL390s'
# GPUs at 4 GB/s keep NCCL's gen 3 x16, never a gen 1 link handed to NCCL.
check "no GPU below gen 3 x16 from an export's rate" sh -c "test \$(grep -c 'class=\"0x030200\" link_speed=\"8.0 GT/s PCIe\" link_width=\"16\"' hwloc-hp-sl390s-g7-3xM20x0-mlx4-ib.nccl.xml) -eq 3"
# GPUs built for gen 4 (two L40S in the Pascal node's place) at rest: gen 4 x16, as NCCL reads
# the link's maximum on the live node.
sed -e 's/\[10de:15f8\]\([^>]*\)pci_link_speed="[0-9.]*"/[10de:26b9]\1pci_link_speed="2.000000"/' \
    -e 's/Tesla P100-PCIE-16GB/NVIDIA L40S/' "$TOPOTUNE_FIXTURES/hwloc-llnl-pascal-2xP100pcie-mlx5.xml" >l40s.xml
expect_exit 0 "two L40S at rest" -- "$TOPOTUNE" topo --input l40s.xml --nccl-xml l40s.nccl.xml
check "their gen 4 x16" sh -c "test \$(grep -c 'class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"' l40s.nccl.xml) -eq 2"
expect_exit 0 "to stdout" -- "$TOPOTUNE" topo --input "$TOPOTUNE_FIXTURES/nccl-topo-azure-ndv4.xml" --nccl-xml -
check "stdout holds the file" grep -q '^<system version="1">$' "$TEST_TMP/out"
expect_exit 2 "a spec: no bus ids" -- "$TOPOTUNE" topo --input "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --nccl-xml spec.xml
expect_stderr_has "no PCI bus id" "it says why"
check "and writes nothing" test ! -e spec.xml
# a topology JSON keeps bus ids but no PCI tree: the file held no device (exit 0)
"$TOPOTUNE" topo --input "$TOPOTUNE_FIXTURES/hwloc-aws-g4dn-metal-8xT4.xml" --json g4dn.json 2>/dev/null
expect_exit 2 "a topology JSON: no PCI tree" -- "$TOPOTUNE" topo --input g4dn.json --nccl-xml g4dn-json.xml
expect_stderr_has "no PCI tree" "it says why"
check "and writes nothing" test ! -e g4dn-json.xml
echo keep >target
ln -s "$TEST_TMP/target" link.xml
expect_exit 1 "over a planted link: refused (a link in /dev, as root, would be replaced)" -- \
    "$TOPOTUNE" topo --input "$TOPOTUNE_FIXTURES/nccl-topo-azure-ndv4.xml" --nccl-xml link.xml
expect_stderr_has "it is a symbolic link" "it says why"
kept() { test -L link.xml && test "$(cat target)" = keep; }
check "the link and its target untouched" kept
expect_exit 2 "--nccl-xml with --json" -- "$TOPOTUNE" topo --nccl-xml x.xml --json
finish
