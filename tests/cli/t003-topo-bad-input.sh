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

for input in "$bad"/*.xml "$bad/missing.xml"; do
    name=$(basename "$input")
    out=$TEST_TMP/out-$name.json
    expect_exit 2 "$name" -- "$TOPOTUNE" topo --input "$input" --json "$out"
    expect_stderr_lines 1 "$name"
    expect_stderr_has "$input" "$name names the file"
    expect_no_file "$out" "$name"
    if ls "$TEST_TMP"/out-*.tmp.* >/dev/null 2>&1; then fail "$name: temporary file left"; fi
done

# The odd but real AWS p5 rate string is read, not rejected.
expect_exit 0 "p5 link_speed '32 GT/s PCIe/s'" -- "$TOPOTUNE" topo --input "$fx/nccl-topo-aws-p5-48xlarge.xml" --json "$TEST_TMP/p5.json"

# Usage errors name the flag and exit 2.
expect_exit 2 "unknown flag" -- "$TOPOTUNE" topo --bogus
expect_stderr_has "--bogus" "unknown flag is named"
expect_exit 2 "missing value" -- "$TOPOTUNE" topo --input
expect_stderr_has "--input" "flag without value is named"
expect_exit 2 "unknown command" -- "$TOPOTUNE" nosuchcommand
expect_exit 0 "topo --help" -- "$TOPOTUNE" topo --help
check "topo --help lists --input" grep -q -- "--input" "$TEST_TMP/out"
finish
