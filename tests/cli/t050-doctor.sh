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
for name in shm memlock p2p p2p-copy acs-iommu pcie-links gpu-health interfaces rdma launch; do
    check "table has $name" grep -q "^$name " "$TEST_TMP/out"
done
if [ ! -e /dev/nvidia0 ]; then
    check "P2P unknown, with why" grep -q "^p2p *unknown *no GPU visible" "$TEST_TMP/out"
    check "P2P copy unknown, with why" grep -q "^p2p-copy *unknown *no GPU visible" "$TEST_TMP/out"
    # P2P kept off NCCL passes a copy test that would run, not one with no GPU to run on
    expect_exit 0 "doctor here, NCCL_P2P_DISABLE=1" -- env NCCL_P2P_DISABLE=1 "$TOPOTUNE" doctor
    check "P2P copy still unknown" grep -q "^p2p-copy *unknown *no GPU visible" "$TEST_TMP/out"
fi
expect_exit 0 "doctor --json" -- "$TOPOTUNE" doctor --json
check "JSON parses with name/status/evidence/fix" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["checks"]) == 10 and all(set(c) == {"name", "status", "evidence", "fix"} for c in d["checks"])
assert all(c["status"] in ("pass", "warn", "fail", "unknown") for c in d["checks"])' "$TEST_TMP/out"

root_ns() { [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; }

# 1. A 64 MB /dev/shm, as Docker gives, for 8 GPUs.
if root_ns; then
    expect_exit 1 "small /dev/shm" -- unshare -m sh -c "mount -t tmpfs -o size=64m tmpfs /dev/shm &&
        '$TOPOTUNE' doctor --input '$specs/hgx-h100.json' --json '$TEST_TMP/shm.json'"
    check "shm fails" test "$(status_of shm "$TEST_TMP/shm.json")" = fail
    check "shm fix names --shm-size" bash -c "grep -q -- '--shm-size' '$TEST_TMP/shm.json'"
    # 1 GB, nearly full of what crashed jobs left: its size passed, its free space is what counts
    expect_exit 1 "a full /dev/shm" -- unshare -m sh -c "mount -t tmpfs -o size=1g tmpfs /dev/shm &&
        head -c 1000M /dev/zero >/dev/shm/nccl-leftover &&
        '$TOPOTUNE' doctor --input '$specs/hgx-h100.json' --json '$TEST_TMP/shm2.json'"
    check "shm fails on its free space" bash -c "grep -q 'has 1024 MB but only [0-9]* MB free' '$TEST_TMP/shm2.json'"
else
    echo "skipped: the /dev/shm check needs root and mount namespaces"
fi

# 2. A low memlock limit with RDMA NICs, in a process without CAP_IPC_LOCK (which lifts it:
# below), as a job's.
no_ipc_lock=()
if [ "$(id -u)" = 0 ]; then no_ipc_lock=(setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock); fi
expect_exit 1 "low memlock" -- "${no_ipc_lock[@]}" bash -c "ulimit -l 64 && '$TOPOTUNE' doctor --input '$specs/hgx-h100.json' --json '$TEST_TMP/ml.json'"
check "memlock fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
check "memlock fix" bash -c "grep -q 'ulimit -l unlimited' '$TEST_TMP/ml.json'"
expect_exit 1 "memlock at systemd's default, 8 MiB" -- "${no_ipc_lock[@]}" bash -c "ulimit -l 8192 && '$TOPOTUNE' doctor --input '$specs/hgx-h100.json' --json '$TEST_TMP/ml.json'"
check "it fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
# a site's finite limit of gigabytes is no failure (every node of such a site was drained): said.
# Raising a hard limit takes CAP_SYS_RESOURCE, which a container's root may lack: the limits
# are read from a /proc laid out here.
mkdir -p "$TEST_TMP/fakeroot/proc/self"
printf 'Limit                     Soft Limit           Hard Limit           Units\nMax locked memory         %s %s bytes\n' \
    $((16 << 30)) $((16 << 30)) >"$TEST_TMP/fakeroot/proc/self/limits"
TOPOTUNE_SYSFS_ROOT=$TEST_TMP/fakeroot "$TOPOTUNE" doctor --input "$specs/hgx-h100.json" \
    --json "$TEST_TMP/ml.json" >/dev/null 2>&1
check "a finite 16 GiB memlock warns" test "$(status_of memlock "$TEST_TMP/ml.json")" = warn
# CAP_IPC_LOCK lifts the limit for what a process pins (the kernel's RDMA registration): a job
# given it (Kubernetes' capabilities: add: [IPC_LOCK], the usual way for RDMA pods) failed with
# the container's 64 KiB. Here a user's process holds it as an ambient capability, for real.
if [ "$(id -u)" = 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+ipc_lock \
    --ambient-caps=+ipc_lock true 2>/dev/null; then
    # that user reaches neither a checkout in a private folder nor the tests' own: copies in a
    # folder it may read (leaks not looked for there: the suppressions file is the checkout's)
    pub=$(mktemp -d) && chmod 755 "$pub" && cp "$TOPOTUNE" "$specs/hgx-h100.json" "$pub/"
    for caps in +ipc_lock -ipc_lock; do
        setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="$caps" --ambient-caps="$caps" \
            env LSAN_OPTIONS=detect_leaks=0 bash -c "cd /; ulimit -l 64 && '$pub/topotune' doctor \
            --input '$pub/hgx-h100.json' --json -" >"$TEST_TMP/ml-$caps.json" 2>"$TEST_TMP/ml-$caps.err"
    done
    rm -rf "$pub"
    check "a user's process with CAP_IPC_LOCK passes at 64 KiB" test "$(status_of memlock "$TEST_TMP/ml-+ipc_lock.json")" = pass
    check "saying why" grep -q 'this process holds CAP_IPC_LOCK' "$TEST_TMP/ml-+ipc_lock.json"
    check "... and fails without it" test "$(status_of memlock "$TEST_TMP/ml--ipc_lock.json")" = fail
fi
# A container's root given it passes; root on a host does not: a Slurm Prolog runs as root, its
# jobs as their users, held to slurmd's limit. (/proc and /.dockerenv laid out here.)
printf 'Limit                     Soft Limit           Hard Limit           Units\nMax locked memory         65536 65536 bytes\n' \
    >"$TEST_TMP/fakeroot/proc/self/limits"
# Docker's default capabilities and IPC_LOCK (bit 14)
printf 'Name:\ttopotune\nCapInh:\t0000000000000000\nCapEff:\t00000000a80465fb\n' >"$TEST_TMP/fakeroot/proc/self/status"
# the host's user namespace (a rootless container's root holds it in its own only, where the
# kernel's pinning does not look)
printf '         0          0 4294967295\n' >"$TEST_TMP/fakeroot/proc/self/uid_map"
# lifted or not by this environment's Slurm and Kubernetes variables too: not the runner's
in_root() { # doctor in the laid-out root, the runner's Slurm and Kubernetes variables unset
    env -u KUBERNETES_SERVICE_HOST -u SLURM_JOB_ID -u SLURMD_NODENAME TOPOTUNE_SYSFS_ROOT="$TEST_TMP/fakeroot" \
        "$@" "$TOPOTUNE" doctor --input "$specs/hgx-h100.json" --json "$TEST_TMP/ml.json" >/dev/null 2>&1
}
if [ "$(id -u)" = 0 ]; then
    in_root
    check "root on a host with CAP_IPC_LOCK: the limit still fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
    touch "$TEST_TMP/fakeroot/.dockerenv"
    in_root
    check "a container's root with it passes" test "$(status_of memlock "$TEST_TMP/ml.json")" = pass
    # ... but not under Slurm (slurmd in a container: its jobs run as their users)
    in_root SLURM_JOB_ID=7
    check "a container's root under Slurm: fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
    # ... slurmd found among the parents where no variable says it (a HealthCheckProgram), PID 1
    # of the container's PID namespace too (its parents laid out: this shell's, then PID 1)
    mkdir -p "$TEST_TMP/fakeroot/proc/$$" "$TEST_TMP/fakeroot/proc/1"
    echo "$$ (bash) S 1 1 1 0" >"$TEST_TMP/fakeroot/proc/$$/stat"
    echo "1 (slurmd) S 0 1 1 0" >"$TEST_TMP/fakeroot/proc/1/stat"
    in_root
    check "a container's root under a slurmd that is PID 1: fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
    rm -r "$TEST_TMP/fakeroot/proc/$$" "$TEST_TMP/fakeroot/proc/1"
    # ... nor in a user namespace of its own (rootless Podman, Apptainer --fakeroot)
    printf '         0      65534          1\n' >"$TEST_TMP/fakeroot/proc/self/uid_map"
    in_root
    check "a rootless container's root: fails" test "$(status_of memlock "$TEST_TMP/ml.json")" = fail
    printf '         0          0 4294967295\n' >"$TEST_TMP/fakeroot/proc/self/uid_map"
    rm "$TEST_TMP/fakeroot/.dockerenv"
    # a Kubernetes pod on containerd under cgroup v2 has no /.dockerenv nor cgroup words: its
    # service account's secrets say it is one
    mkdir -p "$TEST_TMP/fakeroot/var/run/secrets/kubernetes.io"
    in_root
    check "a Kubernetes pod's root with it passes" test "$(status_of memlock "$TEST_TMP/ml.json")" = pass
    rm -r "$TEST_TMP/fakeroot/var"
fi

# 3b. The functional P2P copy test, supervised. The real program, where it was built, finds no GPU
# here (unknown); programs that really hang (ignoring SIGTERM) or report corruption give fail.
two_gpus=$TEST_TMP/two-gpus.xml
cat >"$two_gpus" <<'XML'
<system version="1"><cpu numaid="0" affinity="0000ffff" vendor="GenuineIntel">
<pci busid="0000:02:08.0" class="0x060400">
<pci busid="0000:03:00.0" class="0x030200" device="0x2684"/><pci busid="0000:04:00.0" class="0x030200" device="0x2684"/>
</pci></cpu></system>
XML
if [ -x "$TOPOTUNE_BIN/topotune-p2p-copy" ] && [ ! -e /dev/nvidia0 ]; then
    expect_exit 0 "real copy test, no GPU" -- env TOPOTUNE_P2P_PROGRAM="$TOPOTUNE_BIN/topotune-p2p-copy" \
        "$TOPOTUNE" doctor --input "$two_gpus" --json "$TEST_TMP/copy0.json"
    check "copy test unknown: no GPU" bash -c "grep -q 'no GPU visible to the copy test' '$TEST_TMP/copy0.json'"
fi
cat >"$TEST_TMP/p2p-hang.sh" <<SH
#!/bin/sh
trap '' TERM
echo \$\$ >"$TEST_TMP/p2p-hang.pid"
echo "pair 0 1 ok 20.0"
echo "pair 1 0 start"
exec sleep 600
SH
cat >"$TEST_TMP/p2p-corrupt.sh" <<'SH'
#!/bin/sh
echo "pair 0 1 start"; echo "pair 0 1 wrong 4096"; echo "pair 1 0 start"; echo "pair 1 0 ok 21.5"; exit 7
SH
chmod +x "$TEST_TMP/p2p-hang.sh" "$TEST_TMP/p2p-corrupt.sh"
start=$(date +%s)
expect_exit 1 "copy that hangs" -- env TOPOTUNE_P2P_PROGRAM="$TEST_TMP/p2p-hang.sh" \
    "$TOPOTUNE" doctor --input "$two_gpus" --copy-timeout 2 --json "$TEST_TMP/copy1.json"
check "hang killed within the deadline and grace" test $(($(date +%s) - start)) -le 10
check "hang fails naming the pair" bash -c "grep -q 'peer copy GPU1->GPU0 hung' '$TEST_TMP/copy1.json'"
check "hang fix is NCCL_P2P_DISABLE" test "$(fix_of p2p-copy "$TEST_TMP/copy1.json" | cut -c1-24)" = "set NCCL_P2P_DISABLE=1, "
check "the hanging copy test started" test -s "$TEST_TMP/p2p-hang.pid"
check "no copy process left" bash -c "! kill -0 \$(cat '$TEST_TMP/p2p-hang.pid') 2>/dev/null"
# A copy that SIGKILL does not end (asleep in the GPU driver after an Xid: a write to a frozen
# file system here) fails the node and is left behind: doctor waited for it for ever, and check
# with it, past Slurm's limit, so the node was never drained.
if frozen_dir; then
    printf '#!/bin/sh\necho "pair 0 1 start"\necho x >"%s/copy"\n' "$FROZEN" >"$TEST_TMP/p2p-stuck.sh"
    chmod +x "$TEST_TMP/p2p-stuck.sh"
    expect_exit 1 "a copy stuck in the kernel" -- timeout 60 env TOPOTUNE_P2P_PROGRAM="$TEST_TMP/p2p-stuck.sh" \
        "$TOPOTUNE" doctor --input "$two_gpus" --copy-timeout 2 --json "$TEST_TMP/copy-stuck.json"
    check "said as hung and left behind" grep -q 'GPU0->GPU1 hung: killed after 2 s (0 pair(s) verified before it), and it had not ended 1 s after SIGKILL' \
        "$TEST_TMP/copy-stuck.json"
    # ... and NVML not asked after it: its calls on that GPU would wait with the copy
    if [ -e "${TOPOTUNE_FAKE_NVML:-}/libnvidia-ml.so.1" ]; then
        expect_exit 1 "a stuck copy, NVML there" -- timeout 60 env TOPOTUNE_P2P_PROGRAM="$TEST_TMP/p2p-stuck.sh" \
            LD_LIBRARY_PATH="$TOPOTUNE_FAKE_NVML${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_NVML_BUSES="34,36" \
            "$TOPOTUNE" doctor --input "$two_gpus" --copy-timeout 2 --json "$TEST_TMP/copy-stuck.json"
        check "gpu-health not asked" grep -q 'not asked: the copy test.s process is still in the GPU driver' \
            "$TEST_TMP/copy-stuck.json"
    fi
    thaw_dir
fi
expect_exit 1 "copy that corrupts" -- env TOPOTUNE_P2P_PROGRAM="$TEST_TMP/p2p-corrupt.sh" \
    "$TOPOTUNE" doctor --input "$two_gpus" --json "$TEST_TMP/copy2.json"
check "corruption fails with the pair" bash -c "grep -q 'corrupted data (first: GPU0->GPU1: 4096 words)' '$TEST_TMP/copy2.json'"
# With NCCL kept off peer copies (NCCL_P2P_DISABLE=1 here, or the profile's), a copy that would
# hang is no hazard: not run (no deadline spent), passed, saying why.
rm -f "$TEST_TMP/p2p-hang.pid"
expect_exit 0 "NCCL_P2P_DISABLE=1: the copy test not run" -- env NCCL_P2P_DISABLE=1 TOPOTUNE_P2P_PROGRAM="$TEST_TMP/p2p-hang.sh" \
    "$TOPOTUNE" doctor --input "$two_gpus" --copy-timeout 2 --json "$TEST_TMP/copy3.json"
check "p2p-copy passes" test "$(status_of p2p-copy "$TEST_TMP/copy3.json")" = pass
check "it never started" test ! -e "$TEST_TMP/p2p-hang.pid"
# ... and so it is where NCCL's configuration file sets it: NCCL here reads it (the copies ran, and
# failed the node with "set NCCL_P2P_DISABLE=1" as the fix)
printf '# the site\nNCCL_P2P_DISABLE=1\n' >"$TEST_TMP/p2p-off.conf"
expect_exit 0 "NCCL_P2P_DISABLE=1 in NCCL's configuration file: not run either" -- env \
    NCCL_CONF_FILE="$TEST_TMP/p2p-off.conf" TOPOTUNE_P2P_PROGRAM="$TEST_TMP/p2p-hang.sh" \
    "$TOPOTUNE" doctor --input "$two_gpus" --copy-timeout 2 --json "$TEST_TMP/copy4.json"
check "p2p-copy passes" test "$(status_of p2p-copy "$TEST_TMP/copy4.json")" = pass
check "naming the file" grep -q "NCCL_P2P_DISABLE=1 ($TEST_TMP/p2p-off.conf)" "$TEST_TMP/copy4.json"
check "it never started" test ! -e "$TEST_TMP/p2p-hang.pid"
expect_exit 2 "bad --copy-timeout" -- "$TOPOTUNE" doctor --copy-timeout 0
expect_stderr_has "--copy-timeout" "bad --copy-timeout named"

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
expect_exit 1 "ACS redirect" -- env TOPOTUNE_SYSFS_ROOT="$fake" "$TOPOTUNE" doctor --input "$two_gpus" --json "$TEST_TMP/acs.json"
check "acs-iommu fails" test "$(status_of acs-iommu "$TEST_TMP/acs.json")" = fail
check "IOMMU words reported" bash -c "grep -q 'intel_iommu=on iommu=pt' '$TEST_TMP/acs.json'"
check "ACS fix names NCCL_P2P_DISABLE" bash -c "grep -q 'NCCL_P2P_DISABLE=1' '$TEST_TMP/acs.json'"

# 4b. PCIe links trained below what both ends can (a card or riser badly seated: the node slower
# than its class with nothing else to show for it), in a fake sysfs tree: a GPU at x8 of x16 and
# a NIC at 8 GT/s of 16 fail; a GPU at rest at 2.5 GT/s does not (it saves power so), nor a slot
# wired x8 (its port's maximum).
links=$TEST_TMP/links.xml
cat >"$links" <<'XML'
<system version="1"><cpu numaid="0" affinity="0000ffff" vendor="GenuineIntel">
<pci busid="0000:02:08.0" class="0x060400">
<pci busid="0000:03:00.0" class="0x030200" device="0x2330"/><pci busid="0000:04:00.0" class="0x030200" device="0x2330"/>
<pci busid="0000:05:00.0" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1" maxconn="131072"/></nic></pci>
<pci busid="0000:05:00.1" class="0x020700" vendor="0x15b3" device="0x1021"><nic><net name="mlx5_1" dev="1" speed="400000" port="1" gdr="1" maxconn="131072"/></nic></pci>
</pci></cpu></system>
XML
fake_links() { # ROOT GPU0_WIDTH NIC_SPEED PORT_WIDTH [NIC_CLASS]: the tree, the rest at its maximum
    python3 - "$@" <<'PY'
import os, sys
root, gpu0_width, nic_speed, port_width = sys.argv[1:5]
nic_class = sys.argv[5] if len(sys.argv) > 5 else "0x020700"
ids = {"0000:03:00.0": ("0x10de", "0x030200"), "0000:04:00.0": ("0x10de", "0x030200"),
       "0000:05:00.0": ("0x15b3", nic_class), "0000:05:00.1": ("0x15b3", nic_class)}
port = root + "/sys/devices/pci0000:00/0000:00:01.0/0000:02:08.0"
def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(data + "\n")
put(port + "/max_link_width", port_width)
put(port + "/max_link_speed", "32.0 GT/s PCIe")
for dev, width, speed, max_speed in (("0000:03:00.0", gpu0_width, "2.5 GT/s PCIe", "32.0 GT/s PCIe"),
                                     ("0000:04:00.0", "16", "2.5 GT/s PCIe", "32.0 GT/s PCIe"),
                                     ("0000:05:00.0", "16", nic_speed, "16.0 GT/s PCIe"),
                                     ("0000:05:00.1", "16", nic_speed, "16.0 GT/s PCIe")):
    d = port + "/" + dev
    put(d + "/vendor", ids[dev][0])
    put(d + "/class", ids[dev][1])
    put(d + "/current_link_width", width)
    put(d + "/max_link_width", "16")
    put(d + "/current_link_speed", speed)
    put(d + "/max_link_speed", max_speed)
    os.makedirs(root + "/sys/bus/pci/devices", exist_ok=True)
    os.symlink(os.path.relpath(d, root + "/sys/bus/pci/devices"), root + "/sys/bus/pci/devices/" + dev)
PY
}
fake_links "$TEST_TMP/links-bad" 8 "8.0 GT/s PCIe" 16
expect_exit 1 "links trained below their maximum" -- env TOPOTUNE_SYSFS_ROOT="$TEST_TMP/links-bad" "$TOPOTUNE" \
    doctor --input "$links" --json "$TEST_TMP/links.json"
check "pcie-links fails" test "$(status_of pcie-links "$TEST_TMP/links.json")" = fail
check "naming the GPU and the NIC, not the GPU at rest" grep -q \
    '2 PCIe link(s) trained below what both ends can: GPU0 (0000:03:00.0) at x8 of x16; mlx5_0 (0000:05:00.0) at 8 GT/s of 16"' \
    "$TEST_TMP/links.json"
fake_links "$TEST_TMP/links-x8-slot" 8 "16.0 GT/s PCIe" 8
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/links-x8-slot" "$TOPOTUNE" doctor --input "$links" --json "$TEST_TMP/links.json" >/dev/null 2>&1
check "a slot wired x8, all at their maximum: passes" test "$(status_of pcie-links "$TEST_TMP/links.json")" = pass
check "3 links read" grep -q '"3 PCIe link(s) of GPUs and RDMA NICs at the width' "$TEST_TMP/links.json"
# with --input the addresses are the file's: another device of this host at the NIC's (a disk
# controller here) is not judged as the NIC
fake_links "$TEST_TMP/links-other" 8 "8.0 GT/s PCIe" 16 0x010802
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/links-other" "$TOPOTUNE" doctor --input "$links" --json "$TEST_TMP/links.json" >/dev/null 2>&1
check "another device at the NIC's address: the GPU alone named" grep -q \
    '1 PCIe link(s) trained below what both ends can: GPU0 (0000:03:00.0) at x8 of x16"' "$TEST_TMP/links.json"
# an InfiniBand controller of the older class (0x0c06: ConnectX-2, QLogic) is a NIC too
fake_links "$TEST_TMP/links-ib-class" 16 "8.0 GT/s PCIe" 16 0x0c0600
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/links-ib-class" "$TOPOTUNE" doctor --input "$links" --json "$TEST_TMP/links.json" >/dev/null 2>&1
check "an InfiniBand-class NIC judged" grep -q \
    '1 PCIe link(s) trained below what both ends can: mlx5_0 (0000:05:00.0) at 8 GT/s of 16"' "$TEST_TMP/links.json"

# 4c. The GPUs' own health as NVML says it (tests/fakes/fake-nvml.c as the driver, its last GPU
# the sick one): a GPU whose remapped rows wait for a reset, one whose remapping failed, ECC errors
# that were not corrected, a hardware slowdown fail; the driver's thermal slowdown warns; a driver
# that says none of it is unknown, not a pass.
if [ -e "${TOPOTUNE_FAKE_NVML:-}/libnvidia-ml.so.1" ]; then
    nvml=(env LD_LIBRARY_PATH="$TOPOTUNE_FAKE_NVML${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_NVML_BUSES="34,36")
    health() { # WANT TEXT VARIABLES...: gpu-health's status is WANT, its evidence has TEXT
        local want=$1 text=$2
        shift 2
        "${nvml[@]}" "$@" "$TOPOTUNE" doctor --input "$two_gpus" --json "$TEST_TMP/health.json" >/dev/null 2>&1
        check "gpu-health $want with $*" test "$(status_of gpu-health "$TEST_TMP/health.json")" = "$want"
        check "... saying '$text'" grep -qF "$text" "$TEST_TMP/health.json"
    }
    health pass "2 of 2 GPU(s) read: row remapping of 2, none pending or failed; uncorrectable ECC errors of 2, none; clock events of 2, no slowdown\"" FAKE_NVML_EVENTS=0x1
    # a consumer GPU has no ECC nor row remapping: what was read is said
    health pass "2 of 2 GPU(s) read: clock events of 2, no slowdown\"" \
        FAKE_NVML_REMAP=unsupported FAKE_NVML_ECC=unsupported
    # a GPU NVML cannot reach: lost (Xid 79), waiting for a reset; it passed, the others read
    health fail "GPU1 (?): lost: fallen off the bus" FAKE_NVML_LOST=15
    health fail "GPU1 (?): the driver asks for a GPU reset" FAKE_NVML_LOST=16
    health pass "1 of 2 GPU(s) read: row remapping of 1, none pending or failed; uncorrectable ECC errors of 1, none; clock events of 1, no slowdown; 1 another job's\"" \
        FAKE_NVML_LOST=4
    # any other error NVML gives for a GPU itself (999 after an Xid 79): unreachable, a failure
    health fail "GPU1 (?): NVML cannot reach it (error 999)" FAKE_NVML_LOST=999
    health fail "GPU0 (?): NVML cannot reach it (error 999)" FAKE_NVML_LOST=999 FAKE_NVML_BUSES=34
    health unknown "NVML lists no GPU" FAKE_NVML_BUSES=
    health fail "GPU1 (0000:36:00.0): rows remapped, pending a GPU reset" FAKE_NVML_REMAP=pending
    health fail "GPU1 (0000:36:00.0): a row remapping failed (the GPU needs repair)" FAKE_NVML_REMAP=failed
    health fail "GPU1 (0000:36:00.0): 2 uncorrectable ECC error(s)" FAKE_NVML_ECC=2
    health fail "GPU1 (0000:36:00.0): hardware slowdown (power brake)" FAKE_NVML_EVENTS=0x88
    health warn "GPU1 (0000:36:00.0): the driver's thermal slowdown" FAKE_NVML_EVENTS=0x20
    health unknown "NVML gives no row remapping, ECC count or clock events for these 2 GPU(s)" \
        FAKE_NVML_REMAP=unsupported FAKE_NVML_ECC=unsupported FAKE_NVML_EVENTS=unsupported
fi

# 5. A veth picked by NCCL's default, and a data interface that is the right choice, in a network
# namespace (a dummy where the kernel has the module; else the data interface is a veth named data0).
if [ "$(id -u)" = 0 ] && ip netns add "tt-doctor-$$" 2>/dev/null; then
    ns=tt-doctor-$$
    ip -n "$ns" link add bond9 type veth peer name bond9p # first, up, no address: NCCL skips it
    for l in bond9 bond9p; do ip -n "$ns" link set "$l" addrgenmode none 2>/dev/null; done # no fe80::
    ip -n "$ns" link add veth0 type veth peer name veth1
    ip -n "$ns" link add data0 type dummy 2>/dev/null || ip -n "$ns" link add data0 type veth peer name data1
    for l in veth0 veth1 data0 data1 bond9 bond9p; do ip -n "$ns" link set "$l" up 2>/dev/null; done
    ip -n "$ns" addr add 10.9.0.1/24 dev veth0
    ip -n "$ns" addr add 10.9.1.1/24 dev data0
    expect_exit 0 "veth picked" -- ip netns exec "$ns" "$TOPOTUNE" doctor --json "$TEST_TMP/net.json"
    ip netns del "$ns"
    check "interfaces warn" test "$(status_of interfaces "$TEST_TMP/net.json")" = warn
    check "fix names the data interface" test "$(fix_of interfaces "$TEST_TMP/net.json")" = "export NCCL_SOCKET_IFNAME==data0"
    check "an interface without address is shown, not picked" bash -c "grep -q 'bond9 (no address).*NCCL would pick veth0' '$TEST_TMP/net.json'"

    # The shell's NCCL_SOCKET_IFNAME, as NCCL reads it: a value that takes no addressed interface
    # fails NCCL's init; an exclusion takes lo first (its ifindex is 1); more than 64 interfaces
    # up (a Kubernetes host's veths) are all read. Each was passed before, or the data interface
    # missed (the first 64 of the directory's hash order).
    ns=tt-doctor-if-$$
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    for i in $(seq 1 40); do ip -n "$ns" link add "cali$i" type veth peer name "calp$i"; done
    for l in $(ip -n "$ns" -o link | awk -F': ' '{print $2}' | cut -d@ -f1); do ip -n "$ns" link set "$l" up; done
    ip -n "$ns" link add eth0 type dummy 2>/dev/null || ip -n "$ns" link add eth0 type veth peer name eth0p
    ip -n "$ns" link add ib0 type dummy 2>/dev/null || ip -n "$ns" link add ib0 type veth peer name ib0p
    for l in eth0 eth0p ib0 ib0p; do ip -n "$ns" link set "$l" up 2>/dev/null; done
    ip -n "$ns" addr add 10.9.2.1/24 dev eth0
    ip -n "$ns" addr add 10.9.3.1/24 dev ib0
    inns() { ip netns exec "$ns" "$@"; }
    expect_exit 1 "NCCL_SOCKET_IFNAME naming no interface" -- inns env NCCL_SOCKET_IFNAME=eth9 "$TOPOTUNE" doctor --json "$TEST_TMP/if1.json"
    check "interfaces fails: NCCL's init would" test "$(status_of interfaces "$TEST_TMP/if1.json")" = fail
    # a list of no name matches every interface in NCCL (matchIfList): "^," takes none, "=,"
    # every one (doctor read both the other way round)
    expect_exit 1 "NCCL_SOCKET_IFNAME=^," -- inns env NCCL_SOCKET_IFNAME=^, "$TOPOTUNE" doctor --json "$TEST_TMP/if0.json"
    check "takes none: NCCL's init fails" test "$(status_of interfaces "$TEST_TMP/if0.json")" = fail
    expect_exit 0 "NCCL_SOCKET_IFNAME=^docker" -- inns env NCCL_SOCKET_IFNAME=^docker "$TOPOTUNE" doctor --json "$TEST_TMP/if2.json"
    check "warns: it takes lo" bash -c "grep -q 'NCCL would pick lo by NCCL_SOCKET_IFNAME=^docker' '$TEST_TMP/if2.json'"
    check "its fix names ib0" test "$(fix_of interfaces "$TEST_TMP/if2.json")" = "export NCCL_SOCKET_IFNAME==ib0"
    expect_exit 0 "80 veths up, unset" -- inns env -u NCCL_SOCKET_IFNAME "$TOPOTUNE" doctor --json "$TEST_TMP/if3.json"
    check "NCCL's default: ib0, found among them" bash -c "grep -q 'NCCL would pick ib0 by default' '$TEST_TMP/if3.json' &&
        grep -q 'and [0-9]* more' '$TEST_TMP/if3.json'"
    # env --node: a profile's name no interface here has resolves to the data network, ib first
    cls=$(inns "$TOPOTUNE" topo --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
    mkdir -p "$TEST_TMP/p-ib"
    printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "variables": [{"name": "NCCL_SOCKET_IFNAME", "value": "=ibp12s0", "role": "system"}]}\n' \
        "$cls" >"$TEST_TMP/p-ib/profile.json"
    # the shell's value against the node: "ib0:1" takes ib0 (NCCL's list entries carry a port
    # sockets ignore); "^docker" takes lo, which the row now says (it said "no interface")
    env NCCL_SOCKET_IFNAME=ib0:1 ip netns exec "$ns" "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ib" --json "$TEST_TMP/nv1.json" >/dev/null 2>&1
    check "ib0:1 takes ib0" test "$(status_of node-values "$TEST_TMP/nv1.json")" = pass
    env NCCL_SOCKET_IFNAME=^docker ip netns exec "$ns" "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ib" --json "$TEST_TMP/nv2.json" >/dev/null 2>&1
    check "^docker takes lo, said" bash -c "grep -q 'NCCL_SOCKET_IFNAME=^docker takes lo here' '$TEST_TMP/nv2.json'"
    check "env --node: =ib0 (NCCL's order), not =eth0" bash -c "ip netns exec '$ns' '$TOPOTUNE' env --node --profile '$TEST_TMP/p-ib' | grep -qx \"export NCCL_SOCKET_IFNAME='=ib0'\""
    ip netns del "$ns"

    # IPoIB with a link-local IPv6 address alone: NCCL's search skips IPv6 loopback only, so ib0
    # is its bootstrap interface; doctor read it as having no address, named eth0, and failed
    # NCCL_SOCKET_IFNAME==ib0 as an init that fails
    ns=tt-doctor-ll-$$
    ip netns add "$ns"
    ip -n "$ns" link add eth0 type dummy 2>/dev/null || ip -n "$ns" link add eth0 type veth peer name eth0p
    ip -n "$ns" link add ib0 type dummy 2>/dev/null || ip -n "$ns" link add ib0 type veth peer name peer0
    for l in lo eth0 eth0p ib0 peer0; do ip -n "$ns" link set "$l" up 2>/dev/null; done
    ip -n "$ns" addr add 10.9.4.1/24 dev eth0
    ip -n "$ns" addr add fe80::9/64 dev ib0 nodad 2>/dev/null
    if ip -n "$ns" -6 addr show dev ib0 | grep -q 'fe80::'; then
        expect_exit 0 "ib0 with a link-local address alone" -- ip netns exec "$ns" env -u NCCL_SOCKET_IFNAME \
            "$TOPOTUNE" doctor --json "$TEST_TMP/ll1.json"
        check "NCCL would pick ib0" grep -q 'NCCL would pick ib0 by default' "$TEST_TMP/ll1.json"
        expect_exit 0 "NCCL_SOCKET_IFNAME==ib0" -- ip netns exec "$ns" env NCCL_SOCKET_IFNAME==ib0 \
            "$TOPOTUNE" doctor --json "$TEST_TMP/ll2.json"
        check "does not fail" test "$(status_of interfaces "$TEST_TMP/ll2.json")" != fail
    else
        echo "skipped: no IPv6 in the namespace"
    fi
    ip netns del "$ns"
else
    echo "skipped: the interface check needs root and network namespaces"
fi

# 5b. InfiniBand and RoCE ports in a fake sysfs tree: an IB port and a RoCE port whose RoCE v2 IPv4
# GID is index 3 (0 and 1 are link-local, 2 is RoCE v1).
rdma=$TEST_TMP/rdma
make_rdma() { # ROOT IB_STATE ROCE_STATE WITH_IPV4
    python3 - "$@" <<'PY'
import os, sys
root, ib_state, roce_state, ipv4 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
def put(path, data):
    os.makedirs(os.path.dirname(root + path), exist_ok=True)
    open(root + path, "w").write(data + "\n")
port = "/sys/class/infiniband/mlx5_0/ports/1"
put(port + "/state", ib_state); put(port + "/link_layer", "InfiniBand")
put(port + "/gids/0", "fe80:0000:0000:0000:0e42:a1ff:fe00:0001"); put(port + "/gid_attrs/types/0", "IB/RoCE v1")
port = "/sys/class/infiniband/mlx5_1/ports/1"
put(port + "/state", roce_state); put(port + "/link_layer", "Ethernet")
gids = [("fe80:0000:0000:0000:0e42:a1ff:fe00:0002", "IB/RoCE v1"), ("fe80:0000:0000:0000:0e42:a1ff:fe00:0002", "RoCE v2")]
if ipv4:
    gids += [("0000:0000:0000:0000:0000:ffff:0a01:0005", "IB/RoCE v1"), ("0000:0000:0000:0000:0000:ffff:0a01:0005", "RoCE v2")]
for i, (gid, kind) in enumerate(gids):
    put(f"{port}/gids/{i}", gid); put(f"{port}/gid_attrs/types/{i}", kind)
put(f"{port}/gids/{len(gids)}", "0000:0000:0000:0000:0000:0000:0000:0000")
put("/sys/class/net/eth0/operstate", "up"); put("/sys/class/net/eth0/ifindex", "2")
PY
}
make_rdma "$rdma/ok" "4: ACTIVE" "4: ACTIVE" 1
expect_exit 0 "IB and RoCE active" -- env -u NCCL_IB_GID_INDEX TOPOTUNE_SYSFS_ROOT="$rdma/ok" "$TOPOTUNE" doctor --json "$TEST_TMP/r1.json"
check "rdma passes" test "$(status_of rdma "$TEST_TMP/r1.json")" = pass
check "RoCE v2 GID index 3 found" bash -c "grep -q 'mlx5_1/1 RoCE ACTIVE RoCE v2 GID index 3 (10.1.0.5)' '$TEST_TMP/r1.json'"
expect_exit 1 "wrong NCCL_IB_GID_INDEX" -- env NCCL_IB_GID_INDEX=0 TOPOTUNE_SYSFS_ROOT="$rdma/ok" "$TOPOTUNE" doctor --json "$TEST_TMP/r2.json"
check "wrong GID index fails" test "$(fix_of rdma "$TEST_TMP/r2.json")" = "export NCCL_IB_GID_INDEX=3"
expect_exit 0 "NCCL_IB_GID_INDEX=-1 (NCCL picks)" -- env NCCL_IB_GID_INDEX=-1 TOPOTUNE_SYSFS_ROOT="$rdma/ok" "$TOPOTUNE" doctor --json "$TEST_TMP/r2b.json"
check "automatic GID index passes" test "$(status_of rdma "$TEST_TMP/r2b.json")" = pass
make_rdma "$rdma/down" "1: DOWN" "1: DOWN" 1
expect_exit 1 "every port down" -- env TOPOTUNE_SYSFS_ROOT="$rdma/down" "$TOPOTUNE" doctor --json "$TEST_TMP/r3.json"
check "ports down fail" bash -c "grep -q 'falls back to TCP sockets' '$TEST_TMP/r3.json'"
make_rdma "$rdma/half" "1: DOWN" "4: ACTIVE" 1
expect_exit 0 "one port down" -- env -u NCCL_IB_GID_INDEX TOPOTUNE_SYSFS_ROOT="$rdma/half" "$TOPOTUNE" doctor --json "$TEST_TMP/r4.json"
check "one port down warns" test "$(status_of rdma "$TEST_TMP/r4.json")" = warn
# NCCL_IB_HCA as NCCL reads it: a device that is not here, or an exclusion of every active
# port, leaves NCCL no IB device (it falls back to sockets: both passed as if unset); a port left
# out on purpose is not judged (its GID index failed a value right for the port NCCL uses).
for v in mlx5_9 ^mlx5; do
    env -u NCCL_IB_GID_INDEX NCCL_IB_HCA="$v" TOPOTUNE_SYSFS_ROOT="$rdma/ok" "$TOPOTUNE" doctor --json "$TEST_TMP/rh.json" >/dev/null 2>&1
    check "NCCL_IB_HCA=$v: rdma fails, sockets said" bash -c "test \"\$(python3 -c 'import json, sys; print([c for c in json.load(open(sys.argv[1]))[\"checks\"] if c[\"name\"] == \"rdma\"][0][\"status\"])' '$TEST_TMP/rh.json')\" = fail && grep -q 'falls back to TCP sockets' '$TEST_TMP/rh.json'"
done
expect_exit 0 "the RoCE port left out: its GID index not judged" -- env NCCL_IB_HCA==mlx5_0 NCCL_IB_GID_INDEX=0 \
    TOPOTUNE_SYSFS_ROOT="$rdma/ok" "$TOPOTUNE" doctor --json "$TEST_TMP/rh2.json"
check "rdma passes on mlx5_0 alone" test "$(status_of rdma "$TEST_TMP/rh2.json")" = pass
make_rdma "$rdma/noip" "4: ACTIVE" "4: ACTIVE" 0
expect_exit 0 "RoCE without IPv4" -- env -u NCCL_IB_GID_INDEX TOPOTUNE_SYSFS_ROOT="$rdma/noip" "$TOPOTUNE" doctor --json "$TEST_TMP/r5.json"
check "RoCE without IPv4 GID warns" test "$(status_of rdma "$TEST_TMP/r5.json")" = warn
check "fix says give it an address" bash -c "grep -q 'IPv4 address so that a RoCE v2 GID' '$TEST_TMP/r5.json'"

# 6. Launch environments.
expect_exit 1 "RANK past WORLD_SIZE" -- env RANK=3 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=h MASTER_PORT=1 "$TOPOTUNE" doctor --json "$TEST_TMP/l1.json"
check "launch fails" test "$(status_of launch "$TEST_TMP/l1.json")" = fail
expect_exit 1 "two launchers" -- env RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 OMPI_COMM_WORLD_RANK=1 MASTER_ADDR=h MASTER_PORT=1 "$TOPOTUNE" doctor --json "$TEST_TMP/l2.json"
check "two launchers named" bash -c "grep -q 'two launchers' '$TEST_TMP/l2.json'"
expect_exit 0 "consistent launch" -- env RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=h MASTER_PORT=1 "$TOPOTUNE" doctor --json "$TEST_TMP/l3.json"
check "launch passes" test "$(status_of launch "$TEST_TMP/l3.json")" = pass
# Launch layouts as srun, mpirun and torchrun make them (each failed or passed the wrong way):
# one torchrun per node under srun (topotune's sbatch.sh) passes; srun starting a torchrun per
# GPU, each with 8 workers, fails; mpirun's ranks inside an allocation (they inherit the
# daemons' Slurm step) pass; a rank that is no number, RANK without WORLD_SIZE, and a LOCAL_RANK
# past the GPUs CUDA_VISIBLE_DEVICES leaves fail.
M=(MASTER_ADDR=h MASTER_PORT=1)
launch_is() { # WANT WHAT VAR=VALUE...: doctor's launch status under those variables only
    local want=$1 what=$2
    shift 2
    env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u CUDA_VISIBLE_DEVICES -u TORCHELASTIC_RUN_ID -u GROUP_RANK -u ROLE_RANK "$@" \
        "$TOPOTUNE" doctor --json "$TEST_TMP/lx.json" >/dev/null 2>&1
    check "$what: launch $want" test "$(status_of launch "$TEST_TMP/lx.json")" = "$want"
}
T=(TORCHELASTIC_RUN_ID=job1) # torchrun's mark on its workers
launch_is pass "srun, one torchrun per node" SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_NNODES=2 \
    SLURM_LOCALID=0 RANK=9 LOCAL_RANK=1 WORLD_SIZE=16 LOCAL_WORLD_SIZE=8 "${T[@]}" "${M[@]}"
launch_is fail "srun, a torchrun of 8 workers per GPU" SLURM_STEP_ID=0 SLURM_PROCID=3 SLURM_NTASKS=16 \
    SLURM_NNODES=2 SLURM_LOCALID=3 RANK=3 LOCAL_RANK=3 WORLD_SIZE=16 LOCAL_WORLD_SIZE=8 "${T[@]}" "${M[@]}"
launch_is pass "srun starting every rank, a wrapper's LOCAL_WORLD_SIZE" SLURM_STEP_ID=0 SLURM_PROCID=11 \
    SLURM_NTASKS=16 SLURM_NNODES=2 SLURM_LOCALID=3 RANK=11 LOCAL_RANK=3 WORLD_SIZE=16 LOCAL_WORLD_SIZE=8 "${M[@]}"
launch_is pass "mpirun's ranks in an allocation" SLURM_STEP_ID=0 SLURM_PROCID=1 SLURM_NTASKS=2 \
    OMPI_COMM_WORLD_RANK=9 OMPI_COMM_WORLD_SIZE=16 OMPI_COMM_WORLD_LOCAL_RANK=1 RANK=9 WORLD_SIZE=16 LOCAL_RANK=1 "${M[@]}"
launch_is fail "RANK=abc" RANK=abc WORLD_SIZE=2 LOCAL_RANK=0 "${M[@]}"
launch_is fail "RANK without WORLD_SIZE" RANK=3 "${M[@]}"
launch_is fail "LOCAL_RANK 3, one GPU visible" RANK=3 WORLD_SIZE=4 LOCAL_RANK=3 CUDA_VISIBLE_DEVICES=0 "${M[@]}"
# more ranks on a node than GPUs: two share one, which NCCL refuses; rank 0 alone was checked.
# With CUDA_VISIBLE_DEVICES each rank may see its own GPU (srun --gpus-per-task=1): not judged.
launch_is pass "LOCAL_WORLD_SIZE 8, each rank its own GPU" RANK=0 WORLD_SIZE=8 LOCAL_RANK=0 \
    LOCAL_WORLD_SIZE=8 CUDA_VISIBLE_DEVICES=0 "${M[@]}"
env -u CUDA_VISIBLE_DEVICES RANK=0 WORLD_SIZE=16 LOCAL_RANK=0 LOCAL_WORLD_SIZE=16 "${M[@]}" \
    "$TOPOTUNE" doctor --input "$specs/hgx-h100.json" --json "$TEST_TMP/lw.json" >/dev/null 2>&1
check "LOCAL_WORLD_SIZE 16 on 8 GPUs: launch fail" test "$(status_of launch "$TEST_TMP/lw.json")" = fail

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
# A value of any bytes: a check quoting one that was not UTF-8 (or cut inside a character) was
# refused by the JSON and dropped, its failure with it: exit 0 for a node that fails.
mkdir -p "$TEST_TMP/p-if"
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "variables": [{"name": "NCCL_SOCKET_IFNAME", "value": "=eth0", "role": "system"}]}\n' \
    "$class" >"$TEST_TMP/p-if/profile.json"
for value in $'nosuch9\xff' "nosuch$(python3 -c 'print("\u00e9" * 1500)')"; do
    expect_exit 1 "a value of odd bytes (${#value} chars)" -- env NCCL_SOCKET_IFNAME="$value" \
        "$TOPOTUNE" doctor --profile "$TEST_TMP/p-if" --json "$TEST_TMP/odd.json"
    check "its node-values row is there, failing" test "$(status_of node-values "$TEST_TMP/odd.json")" = fail
done
# A device name resolved for this node (env --node) is node-values' to judge, not "unset": the
# profile row told to source nccl.env, which would put back the node it was measured on; and a
# variable no file may set (LD_PRELOAD) is in no nccl.env to source.
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "variables": [{"name": "NCCL_SOCKET_IFNAME", "value": "=ens5", "role": "system"}, {"name": "LD_PRELOAD", "value": "/nonexistent/x.so", "role": "system"}]}\n' \
    "$class" >"$TEST_TMP/p-if/profile.json"
env NCCL_SOCKET_IFNAME=lo "$TOPOTUNE" doctor --profile "$TEST_TMP/p-if" --json "$TEST_TMP/pn.json" >/dev/null 2>&1
check "a resolved NCCL_SOCKET_IFNAME, a refused LD_PRELOAD: the profile row passes" \
    test "$(status_of profile "$TEST_TMP/pn.json")" = pass
# ... and unset too: it told to source nccl.env, whose value node-values then failed
env -u NCCL_SOCKET_IFNAME "$TOPOTUNE" doctor --profile "$TEST_TMP/p-if" --json "$TEST_TMP/pu.json" >/dev/null 2>&1
check "an unset NCCL_SOCKET_IFNAME: the profile row passes, no advice to source it" \
    test "$(status_of profile "$TEST_TMP/pu.json")" = pass
# A node where no NCCL answers its version (a libnccl without ncclGetVersion) was said to match
# the profile's NCCL: unknown, warned.
if command -v cc >/dev/null; then
    mkdir -p "$TEST_TMP/stub"
    echo 'int ncclStub(void) { return 0; }' | cc -shared -fPIC -x c -o "$TEST_TMP/stub/libnccl.so.2" -
    printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "software": {"nccl": "2.21.5"}, "variables": []}\n' \
        "$class" >"$TEST_TMP/p-if/profile.json"
    env LD_LIBRARY_PATH="$TEST_TMP/stub" "$TOPOTUNE" doctor --profile "$TEST_TMP/p-if" --json "$TEST_TMP/pv.json" >/dev/null 2>&1
    row=$(python3 -c 'import json, sys
print(*[c["status"] + " " + c["evidence"] for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "profile"])' "$TEST_TMP/pv.json")
    check "NCCL unknown here: warned, not a match" test "$row" = \
        "warn class matches; this node's NCCL version is unknown, the profile's is 2.21.5"
fi
expect_exit 0 "profile not sourced" -- "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ok" --json "$TEST_TMP/p3.json"
check "unset variable warned" test "$(status_of profile "$TEST_TMP/p3.json")" = warn
expect_exit 0 "profile sourced" -- env NCCL_P2P_DISABLE=1 "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ok" --json "$TEST_TMP/p4.json"
check "profile passes" test "$(status_of profile "$TEST_TMP/p4.json")" = pass
# Broken PCIe P2P (the stock-driver RTX 4090 box) fails until NCCL is kept off it: by this
# environment, or by the profile the job runs with (its variables are the job's, not doctor's).
rtx=$TOPOTUNE_SRC/profiles/specs/rtx4090-8x-pcie.json
expect_exit 1 "broken P2P, nothing set" -- "$TOPOTUNE" doctor --input "$rtx" --json "$TEST_TMP/r0.json"
check "p2p fails" test "$(status_of p2p "$TEST_TMP/r0.json")" = fail
expect_exit 0 "broken P2P, NCCL_P2P_DISABLE=1 set" -- env NCCL_P2P_DISABLE=1 "$TOPOTUNE" doctor --input "$rtx" --json "$TEST_TMP/r1.json"
check "p2p passes" test "$(status_of p2p "$TEST_TMP/r1.json")" = pass
check "saying why" grep -q 'NCCL_P2P_DISABLE=1 (this environment)' "$TEST_TMP/r1.json"
# as NCCL reads them (ncclGetLevel: strtol's 1, or the level LOC): each failed before
for v in NCCL_P2P_DISABLE=01 NCCL_P2P_DISABLE=0x1 NCCL_P2P_LEVEL=LOC NCCL_P2P_LEVEL=0 NCCL_P2P_LEVEL=NVL; do
    env "$v" "$TOPOTUNE" doctor --input "$rtx" --json "$TEST_TMP/rv.json" >/dev/null 2>&1
    check "broken P2P, $v: p2p passes" test "$(status_of p2p "$TEST_TMP/rv.json")" = pass
done
env NCCL_P2P_DISABLE=2 "$TOPOTUNE" doctor --input "$rtx" --json "$TEST_TMP/rv.json" >/dev/null 2>&1
check "NCCL_P2P_DISABLE=2 is not 1: p2p fails" test "$(status_of p2p "$TEST_TMP/rv.json")" = fail
rclass=$("$TOPOTUNE" topo --input "$rtx" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
mkdir -p "$TEST_TMP/p-rtx"
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "variables": [{"name": "NCCL_P2P_DISABLE", "value": "1", "role": "system"}]}\n' \
    "$rclass" >"$TEST_TMP/p-rtx/profile.json"
"$TOPOTUNE" doctor --input "$rtx" --profile "$TEST_TMP/p-rtx" --json "$TEST_TMP/r2.json"
check "the profile's NCCL_P2P_DISABLE=1 counts" test "$(status_of p2p "$TEST_TMP/r2.json")" = pass
# A variable without a text value, named as one set here (PATH): refused, not a crash; the
# profile's folder also given as its profile.json.
mkdir -p "$TEST_TMP/p-bad"
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "variables": [{"name": "PATH"}]}\n' \
    "$class" >"$TEST_TMP/p-bad/profile.json"
expect_exit 2 "a variable without a value" -- "$TOPOTUNE" doctor --profile "$TEST_TMP/p-bad"
expect_stderr_has 'variables[0] has no text "value"' "it names the field"
expect_exit 0 "the profile.json itself" -- env NCCL_P2P_DISABLE=1 "$TOPOTUNE" doctor --profile "$TEST_TMP/p-ok/profile.json"
finish
