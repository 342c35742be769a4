#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune doctor on real conditions made here: a small /dev/shm (mount namespace), a low memlock
# limit, ACS redirect and IOMMU in a fake sysfs tree, a veth in a network namespace, inconsistent
# launch environments, a profile from another class and from another NCCL version.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"
status_of() { # CHECK FILE: the status of one check in doctor's JSON
    python3 -c 'import json, sys; print([c["status"] for c in json.load(open(sys.argv[2]))["checks"] if c["name"] == sys.argv[1]][0])' "$1" "$2"
}
fix_of() {
    python3 -c 'import json, sys; print([c["fix"] for c in json.load(open(sys.argv[2]))["checks"] if c["name"] == sys.argv[1]][0])' "$1" "$2"
}

# This machine: a full table, GPU checks unknown with the reason, exit 0; JSON with the same checks.
expect_exit 0 "doctor here" -- "$TOPOTUNE" doctor
for name in shm memlock p2p acs-iommu interfaces launch; do
    check "table has $name" grep -q "^$name " "$TEST_TMP/out"
done
if [ ! -e /dev/nvidia0 ]; then
    check "P2P unknown, with why" grep -q "^p2p *unknown *no GPU visible" "$TEST_TMP/out"
fi
expect_exit 0 "doctor --json" -- "$TOPOTUNE" doctor --json
check "JSON parses with name/status/evidence/fix" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["checks"]) == 6 and all(set(c) == {"name", "status", "evidence", "fix"} for c in d["checks"])
assert all(c["status"] in ("pass", "warn", "fail", "unknown") for c in d["checks"])' "$TEST_TMP/out"

root_ns() { [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; }

# 1. A 64 MB /dev/shm, as Docker gives, for 8 GPUs.
if root_ns; then
    expect_exit 1 "small /dev/shm" -- unshare -m sh -c "mount -t tmpfs -o size=64m tmpfs /dev/shm &&
        '$TOPOTUNE' doctor --input '$specs/hgx-h100.json' --json '$TEST_TMP/shm.json'"
    check "shm fails" test "$(status_of shm "$TEST_TMP/shm.json")" = fail
    check "shm fix names --shm-size" bash -c "grep -q -- '--shm-size' '$TEST_TMP/shm.json'"
else
    echo "skipped: the /dev/shm check needs root and mount namespaces"
fi

# 2. A low memlock limit with RDMA NICs.
expect_exit 1 "low memlock" -- bash -c "ulimit -l 64 && '$TOPOTUNE' doctor --input '$specs/hgx-h100.json' --json '$TEST_TMP/ml.json'"
check "memlock fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
check "memlock fix" bash -c "grep -q 'ulimit -l unlimited' '$TEST_TMP/ml.json'"

# 3./4. ACS redirect on the bridge above two GPUs, IOMMU on, in a fake sysfs tree.
fake=$TEST_TMP/sysfs
python3 - "$fake" <<'PY'
import os, sys
root = sys.argv[1]
def put(path, data, mode="w"):
    os.makedirs(os.path.dirname(root + path), exist_ok=True)
    open(root + path, mode).write(data)
def config(path, acs):
    cfg = bytearray(4096)
    cfg[0x100:0x104] = bytes([0x0d, 0x00, 0x01, 0x00])  # ACS capability, version 1, last
    cfg[0x106] = acs
    put(path, bytes(cfg), "wb")
bridge = "/sys/devices/pci0000:00/0000:00:01.0/0000:02:08.0"
for gpu in ("0000:03:00.0", "0000:04:00.0"):
    put(f"{bridge}/{gpu}/class", "0x030200\n")
    os.makedirs(root + "/sys/bus/pci/devices", exist_ok=True)
    os.symlink(os.path.relpath(root + f"{bridge}/{gpu}", root + "/sys/bus/pci/devices"), root + f"/sys/bus/pci/devices/{gpu}")
config(bridge + "/config", 0x1d)  # source validation + P2P request and completion redirect
put("/proc/cmdline", "root=/dev/sda1 intel_iommu=on iommu=pt\n")
PY
cat >"$TEST_TMP/two-gpus.xml" <<'XML'
<system version="1"><cpu numaid="0" affinity="0000ffff" vendor="GenuineIntel">
<pci busid="0000:02:08.0" class="0x060400">
<pci busid="0000:03:00.0" class="0x030200" device="0x2684"/><pci busid="0000:04:00.0" class="0x030200" device="0x2684"/>
</pci></cpu></system>
XML
expect_exit 1 "ACS redirect" -- env TOPOTUNE_SYSFS_ROOT="$fake" "$TOPOTUNE" doctor --input "$TEST_TMP/two-gpus.xml" --json "$TEST_TMP/acs.json"
check "acs-iommu fails" test "$(status_of acs-iommu "$TEST_TMP/acs.json")" = fail
check "IOMMU words reported" bash -c "grep -q 'intel_iommu=on iommu=pt' '$TEST_TMP/acs.json'"
check "ACS fix names NCCL_P2P_DISABLE" bash -c "grep -q 'NCCL_P2P_DISABLE=1' '$TEST_TMP/acs.json'"

# 5. A veth picked by NCCL's default, and a data interface that is the right choice, in a network
# namespace (a dummy where the kernel has the module; else the data interface is a veth named data0).
if [ "$(id -u)" = 0 ] && ip netns add "tt-doctor-$$" 2>/dev/null; then
    ns=tt-doctor-$$
    ip -n "$ns" link add veth0 type veth peer name veth1
    ip -n "$ns" link add data0 type dummy 2>/dev/null || ip -n "$ns" link add data0 type veth peer name data1
    for l in veth0 veth1 data0 data1; do ip -n "$ns" link set "$l" up 2>/dev/null; done
    expect_exit 0 "veth picked" -- ip netns exec "$ns" "$TOPOTUNE" doctor --json "$TEST_TMP/net.json"
    ip netns del "$ns"
    check "interfaces warn" test "$(status_of interfaces "$TEST_TMP/net.json")" = warn
    check "fix names the data interface" bash -c "[[ '$(fix_of interfaces "$TEST_TMP/net.json")' == 'export NCCL_SOCKET_IFNAME==data'[01] ]]"
else
    echo "skipped: the interface check needs root and network namespaces"
fi

# 6. Launch environments.
expect_exit 1 "RANK past WORLD_SIZE" -- env RANK=3 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=h MASTER_PORT=1 "$TOPOTUNE" doctor --json "$TEST_TMP/l1.json"
check "launch fails" test "$(status_of launch "$TEST_TMP/l1.json")" = fail
expect_exit 1 "two launchers" -- env RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 OMPI_COMM_WORLD_RANK=1 MASTER_ADDR=h MASTER_PORT=1 "$TOPOTUNE" doctor --json "$TEST_TMP/l2.json"
check "two launchers named" bash -c "grep -q 'two launchers' '$TEST_TMP/l2.json'"
expect_exit 0 "consistent launch" -- env RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=h MASTER_PORT=1 "$TOPOTUNE" doctor --json "$TEST_TMP/l3.json"
check "launch passes" test "$(status_of launch "$TEST_TMP/l3.json")" = pass

# 7. Profiles from another class and from another NCCL version.
class=$("$TOPOTUNE" topo --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
nccl=$("$TOPOTUNE" topo --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["software"]["nccl"] or "")')
mkdir -p "$TEST_TMP/p-class" "$TEST_TMP/p-nccl" "$TEST_TMP/p-ok"
printf '{"class": "another-class-00000000", "software": {}, "variables": []}\n' >"$TEST_TMP/p-class/profile.json"
printf '{"class": "%s", "software": {"nccl": "2.18.1"}, "variables": []}\n' "$class" >"$TEST_TMP/p-nccl/profile.json"
printf '{"class": "%s", "software": {"nccl": "%s"}, "variables": [{"name": "NCCL_P2P_DISABLE", "value": "1"}]}\n' \
    "$class" "$nccl" >"$TEST_TMP/p-ok/profile.json"
expect_exit 1 "profile of another class" -- "$TOPOTUNE" doctor --profile "$TEST_TMP/p-class" --json "$TEST_TMP/p1.json"
check "class mismatch fails" test "$(status_of profile "$TEST_TMP/p1.json")" = fail
if [ -n "$nccl" ]; then
    expect_exit 1 "profile of another NCCL" -- "$TOPOTUNE" doctor --profile "$TEST_TMP/p-nccl" --json "$TEST_TMP/p2.json"
    check "NCCL mismatch fails" bash -c "grep -q 'measured with NCCL 2.18.1' '$TEST_TMP/p2.json'"
fi
expect_exit 0 "profile not sourced" -- "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ok" --json "$TEST_TMP/p3.json"
check "unset variable warned" test "$(status_of profile "$TEST_TMP/p3.json")" = warn
expect_exit 0 "profile sourced" -- env NCCL_P2P_DISABLE=1 "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ok" --json "$TEST_TMP/p4.json"
check "profile passes" test "$(status_of profile "$TEST_TMP/p4.json")" = pass
finish
