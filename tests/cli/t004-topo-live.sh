#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live path on this machine: a summary, valid JSON, and no GPU is an empty list, not an error.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
expect_exit 0 "topo (live)" -- "$TOPOTUNE" topo
check "summary has a Class line" grep -q '^Class:' "$TEST_TMP/out"
expect_exit 0 "topo --json (live)" -- "$TOPOTUNE" topo --json
check "live JSON parses" python3 -m json.tool "$TEST_TMP/out" >/dev/null
check "live JSON content" python3 - "$TEST_TMP/out" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
assert t["schema"] == "topotune/topology/1"
assert t["source"]["kind"] == "live"
assert isinstance(t["gpus"], list)
assert t["cpu"]["pus"] >= 1
assert t["software"]["hwloc"]
assert t["class"]["id"]
if not t["gpus"]:  # no GPU visible: no P2P facts either
    assert t["p2p"]["rows"] is None and t["p2p"]["source"] == "none"
PY
# --json FILE writes the file atomically and prints nothing on stdout.
expect_exit 0 "topo --json FILE" -- "$TOPOTUNE" topo --json "$TEST_TMP/live.json"
check "--json FILE writes the file, not stdout" test -s "$TEST_TMP/live.json" -a ! -s "$TEST_TMP/out"
# -q silences warnings; -v adds debug detail; both keep stdout for data.
expect_exit 0 "topo -q" -- "$TOPOTUNE" -q topo --input "$TOPOTUNE_FIXTURES/nccl-topo-azure-ncv4.xml"
expect_stderr_lines 0 "-q silences the self-link warning"
expect_exit 0 "topo -v" -- "$TOPOTUNE" topo -v
expect_stderr_has "debug:" "-v shows detail"
# A full disk is an error, and leaves no file behind (needs root for a tiny tmpfs).
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    expect_exit 1 "full disk" -- unshare -m sh -c "mount -t tmpfs -o size=4k tmpfs '$TEST_TMP/full-mnt' 2>/dev/null || { mkdir -p '$TEST_TMP/full-mnt' && mount -t tmpfs -o size=4k tmpfs '$TEST_TMP/full-mnt'; } && head -c 4096 /dev/zero > '$TEST_TMP/full-mnt/filler'; '$TOPOTUNE' topo --input '$TOPOTUNE_FIXTURES/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml' --json '$TEST_TMP/full-mnt/t.json'; rc=\$?; ls '$TEST_TMP/full-mnt' | grep -q 't.json' && exit 9; exit \$rc"
    expect_stderr_has "cannot write" "full disk is reported"
else
    echo "skipped: full-disk check needs root and mount namespaces"
fi
finish
