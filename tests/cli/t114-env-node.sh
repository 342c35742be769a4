#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune env --node: a profile's per-node values (NCCL_IB_HCA, NCCL_IB_GID_INDEX,
# NCCL_SOCKET_IFNAME) resolved from this node's devices (fake sysfs trees): the export lines eval
# back to the same values, a command gets them in its environment, only the names the profile sets
# unless --all; doctor --profile fails a shell value this node cannot honour (node-values); the
# launch scripts of a profile that sets one resolve it on each node; bad use is refused.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
tree() { # ROOT IFNAME IB_DEVICE: an up interface, an active IB port, a down one, a RoCE port (GID 3)
    python3 - "$@" <<'PY'
import os, sys
root, ifname, ib = sys.argv[1:]
def put(path, data):
    os.makedirs(os.path.dirname(root + path), exist_ok=True)
    open(root + path, "w").write(data + "\n")
put(f"/sys/class/net/{ifname}/operstate", "up"); put(f"/sys/class/net/{ifname}/ifindex", "3")
put("/sys/class/net/docker0/operstate", "up"); put("/sys/class/net/docker0/ifindex", "2")
port = f"/sys/class/infiniband/{ib}/ports/1"
put(port + "/state", "4: ACTIVE"); put(port + "/link_layer", "InfiniBand")
port = "/sys/class/infiniband/mlx5_9/ports/1"
put(port + "/state", "1: DOWN"); put(port + "/link_layer", "InfiniBand")
port = "/sys/class/infiniband/roce_0/ports/1"
put(port + "/state", "4: ACTIVE"); put(port + "/link_layer", "Ethernet")
for i, (gid, kind) in enumerate([("fe80:0000:0000:0000:0e42:a1ff:fe00:0002", "IB/RoCE v1"),
                                 ("fe80:0000:0000:0000:0e42:a1ff:fe00:0002", "RoCE v2"),
                                 ("0000:0000:0000:0000:0000:ffff:0a01:0005", "IB/RoCE v1"),
                                 ("0000:0000:0000:0000:0000:ffff:0a01:0005", "RoCE v2")]):
    put(f"{port}/gids/{i}", gid); put(f"{port}/gid_attrs/types/{i}", kind)
PY
}
tree a eth0 mlx5_0
tree b ens5 mlx5_3
mkdir -p p
cat >p/profile.json <<'JSON'
{"schema": "topotune/profile/1", "class": "c1", "predicted": false, "version": 2,
 "variables": [{"name": "NCCL_IB_HCA", "value": "=mlx5_0:1", "role": "system", "evidence": {}},
               {"name": "NCCL_SOCKET_IFNAME", "value": "=eth0", "role": "system", "evidence": {}},
               {"name": "NCCL_ALGO", "value": "Ring", "role": "tuning", "evidence": {}}]}
JSON
set_value() { # set_value PROFILE INDEX PYTHON-EXPRESSION: that variable's value, computed
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
p["variables"][int(sys.argv[2])]["value"] = eval(sys.argv[3])
json.dump(p, open(sys.argv[1], "w"))' "$@"
}
node() { env -u NCCL_IB_HCA -u NCCL_SOCKET_IFNAME -u NCCL_IB_GID_INDEX TOPOTUNE_SYSFS_ROOT="$TEST_TMP/$1" "${@:2}"; }

# 1. Each node's own values; the profile's names only (not the GID index, not NCCL_ALGO).
expect_exit 0 "node a" -- node a "$TOPOTUNE" env --node --profile p
check "node a has the profile's devices and interface: kept" test "$(cat "$TEST_TMP/out")" = \
    "export NCCL_IB_HCA='=mlx5_0:1'
export NCCL_SOCKET_IFNAME='=eth0'"
expect_exit 0 "node b, the profile named by TOPOTUNE_PROFILE" -- node b env TOPOTUNE_PROFILE=p "$TOPOTUNE" env --node
check "node b lacks mlx5_0: its active ports (IB, RoCE with its v2 GID), and ens5 (docker0 never)" test "$(cat "$TEST_TMP/out")" = \
    "export NCCL_IB_HCA='=mlx5_3:1,roce_0:1'
export NCCL_SOCKET_IFNAME='=ens5'"
check "the lines eval back" bash -c "eval \"\$(cat '$TEST_TMP/out')\" && [ \"\$NCCL_IB_HCA\" = '=mlx5_3:1,roce_0:1' ]"
expect_exit 0 "--all --json" -- node b "$TOPOTUNE" env --node --all --json
check "--all: the GID index too" python3 -c '
import json, sys
assert json.load(open(sys.argv[1])) == {"NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "=mlx5_3:1,roce_0:1", "NCCL_SOCKET_IFNAME": "=ens5"}' "$TEST_TMP/out"

# 2. A command run with them (what each rank of mpirun.sh does).
# shellcheck disable=SC2016 # expanded by the command's shell
expect_exit 0 "-- COMMAND" -- node b "$TOPOTUNE" env --node --profile p -- sh -c 'echo "$NCCL_IB_HCA $NCCL_SOCKET_IFNAME" "$@"' sh -n 5
check "the command got them, and its own flags" test "$(cat "$TEST_TMP/out")" = "=mlx5_3:1,roce_0:1 =ens5 -n 5"
expect_exit 127 "a command that is not there" -- node b "$TOPOTUNE" env --node --profile p -- nosuch-program
# --all with TOPOTUNE_PROFILE: the profile's own values where this node has them, as --profile
expect_exit 0 "--all, the profile named by TOPOTUNE_PROFILE" -- node a env TOPOTUNE_PROFILE=p "$TOPOTUNE" env --node --all
check "node a keeps the profile's devices and interface" sh -c "grep -qx \"export NCCL_IB_HCA='=mlx5_0:1'\" '$TEST_TMP/out' &&
    grep -qx \"export NCCL_SOCKET_IFNAME='=eth0'\" '$TEST_TMP/out'"
# an interface named in bytes that are not UTF-8 (the kernel allows them): the value was dropped
# without a word, and eval kept the profile's =eth0, which names nothing here
python3 -c 'import os; os.makedirs(b"u/sys/class/net/e\xff0"); open(b"u/sys/class/net/e\xff0/operstate", "w").write("up\n")'
expect_exit 0 "a data interface not named in UTF-8" -- node u "$TOPOTUNE" env --node --profile p
check "NCCL_SOCKET_IFNAME unset, not left as the profile's" grep -qx "unset NCCL_SOCKET_IFNAME" "$TEST_TMP/out"
expect_exit 2 "no profile, no TOPOTUNE_PROFILE, no --all" -- env -u TOPOTUNE_PROFILE "$TOPOTUNE" env --node
expect_exit 2 "without --node" -- "$TOPOTUNE" env --profile p
expect_exit 2 "a profile that is not there" -- "$TOPOTUNE" env --node --profile nosuch

# 3. doctor: this shell's value against this node's.
doctor_status() { python3 -c 'import json, sys; print([c["status"] for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "node-values"][0])' "$1"; }
node a "$TOPOTUNE" doctor --profile p --json d1.json >/dev/null 2>&1
check "node a, nothing set: node-values passes" test "$(doctor_status d1.json)" = pass
node b "$TOPOTUNE" doctor --profile p --json d1b.json >/dev/null 2>&1
check "node b, nothing set: the profile names what it lacks: warns" test "$(doctor_status d1b.json)" = warn
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" NCCL_IB_HCA='=mlx5_0:1' "$TOPOTUNE" doctor --profile p --json d2.json >/dev/null 2>&1
check "node a's NCCL_IB_HCA on node b fails" test "$(doctor_status d2.json)" = fail
says_why() { grep -q "NCCL_IB_HCA==mlx5_0:1 names what no active port here takes (mlx5_0:1); this node's are =mlx5_3:1,roce_0:1" "$1" &&
    grep -qF "topotune env --node --profile DIR" "$1"; }
check "and says why, with the fix" says_why d2.json
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" NCCL_IB_HCA='mlx5_3,roce_0:1' NCCL_SOCKET_IFNAME=ens "$TOPOTUNE" doctor --profile p --json d3.json >/dev/null 2>&1
check "the same devices written otherwise (a prefix, no port), an interface prefix that takes ens5: no failure" \
    test "$(doctor_status d3.json)" != fail
for hca in mlx5 '=mlx5_3:1' '^mlx5_0' 'roce_0:1,mlx5_3'; do
    TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" NCCL_IB_HCA="$hca" "$TOPOTUNE" doctor --profile p --json d4.json >/dev/null 2>&1
    check "NCCL_IB_HCA=$hca on node b (a prefix, a subset, an exclusion, another order): no failure" \
        test "$(doctor_status d4.json)" != fail
done
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" NCCL_IB_HCA='=mlx5_3:2' "$TOPOTUNE" doctor --profile p --json d5.json >/dev/null 2>&1
check "a port node b's device does not have fails" test "$(doctor_status d5.json)" = fail
# NCCL_IB_GID_INDEX as NCCL reads it (strtoll, base 0; a negative index: NCCL picks the GID): -1,
# 03 and 0x3 all agree with node b's index 3, where a comparison of strings failed them
mkdir -p pg
sed 's/"NCCL_ALGO", "value": "Ring", "role": "tuning"/"NCCL_IB_GID_INDEX", "value": "3", "role": "system"/' \
    p/profile.json >pg/profile.json
rdma_status() { python3 -c 'import json, sys; print([c["status"] for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "rdma"][0])' "$1"; }
for gid in -1 03 0x3; do
    TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" NCCL_IB_GID_INDEX=$gid "$TOPOTUNE" doctor --profile pg --json d6.json >/dev/null 2>&1
    check "NCCL_IB_GID_INDEX=$gid on node b (index 3): node-values does not fail" test "$(doctor_status d6.json)" != fail
    check "NCCL_IB_GID_INDEX=$gid on node b (index 3): nor does rdma" test "$(rdma_status d6.json)" != fail
done
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" NCCL_IB_GID_INDEX=010 "$TOPOTUNE" doctor --profile pg --json d7.json >/dev/null 2>&1
check "010 is 8 to NCCL, not node b's 3: fails" test "$(doctor_status d7.json)" = fail

# 4. The profile's own forms: an exclusion list is kept as it is; a subset this node has is kept;
# a name this node has nothing for is unset (the profile's value names another node's device).
sed 's/"=mlx5_0:1"/"^mlx5_9"/' p/profile.json >p/x && mv p/x p/profile.json
expect_exit 0 "an exclusion list" -- node b "$TOPOTUNE" env --node --profile p
check "kept as it is" grep -qx "export NCCL_IB_HCA='^mlx5_9'" "$TEST_TMP/out"
sed 's/"\^mlx5_9"/"mlx5_3"/' p/profile.json >p/x && mv p/x p/profile.json
expect_exit 0 "a subset by prefix" -- node b "$TOPOTUNE" env --node --profile p
check "kept: NCCL takes mlx5_3 here, not roce_0" grep -qx "export NCCL_IB_HCA='mlx5_3'" "$TEST_TMP/out"
mkdir -p bare/sys/class/net/eth0
echo up >bare/sys/class/net/eth0/operstate
expect_exit 0 "a node with no RDMA port" -- node bare "$TOPOTUNE" env --node --profile p
check "NCCL_IB_HCA unset, not left as the profile's" grep -qx "unset NCCL_IB_HCA" "$TEST_TMP/out"
# shellcheck disable=SC2016 # the command's shell expands it
expect_exit 0 "and a command run without it" -- env NCCL_IB_HCA=mlx5_0 TOPOTUNE_SYSFS_ROOT="$TEST_TMP/bare" \
    "$TOPOTUNE" env --node --profile p -- sh -c 'echo "[${NCCL_IB_HCA-unset}]"'
check "unset in the command" grep -qx "\[unset\]" "$TEST_TMP/out"

# An EFA device's port (link layer "Unknown" in sysfs) is no port of NCCL's IB transport, which
# skips it: --all put it in NCCL_IB_HCA and doctor counted it an active IB port.
tree e ens5 mlx5_3
mkdir -p e/sys/class/infiniband/efa_0/ports/1
echo "4: ACTIVE" >e/sys/class/infiniband/efa_0/ports/1/state
echo "Unknown" >e/sys/class/infiniband/efa_0/ports/1/link_layer
expect_exit 0 "--all, an EFA port beside IB and RoCE" -- node e env -u TOPOTUNE_PROFILE "$TOPOTUNE" env --node --all
check "NCCL_IB_HCA without efa_0" grep -qx "export NCCL_IB_HCA='=mlx5_3:1,roce_0:1'" "$TEST_TMP/out"
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/e" "$TOPOTUNE" doctor --json de.json >/dev/null 2>&1
check "doctor's rdma row does not count it" python3 -c 'import json, sys
r = [c for c in json.load(open(sys.argv[1]))["checks"] if c["name"] == "rdma"][0]
assert "efa_0" not in r["evidence"] and "2 of 3 port(s) active" in r["evidence"], r' de.json

# 5. Open MPI's and UCX's lists name one node's devices too (an image or a pod spec pinned them,
# and a node whose devices are named otherwise lost its transport): kept where this node has
# them, a subnet everywhere; else this node's own, said.
mkdir -p po
cat >po/profile.json <<'JSON'
{"schema": "topotune/profile/1", "class": "c1", "predicted": false, "version": 2,
 "variables": [{"name": "UCX_NET_DEVICES", "value": "mlx5_0:1", "role": "system", "evidence": {}},
               {"name": "OMPI_MCA_btl_tcp_if_include", "value": "eth0", "role": "system", "evidence": {}},
               {"name": "OMPI_MCA_oob_tcp_if_include", "value": "10.0.0.0/8", "role": "system", "evidence": {}},
               {"name": "OMPI_MCA_btl_tcp_if_exclude", "value": "docker0,lo", "role": "system", "evidence": {}}]}
JSON
expect_exit 0 "Open MPI's and UCX's lists, node a" -- node a "$TOPOTUNE" env --node --profile po
check "node a keeps them (the exclusion list is no per-node value)" test "$(cat "$TEST_TMP/out")" = \
    "export OMPI_MCA_btl_tcp_if_include='eth0'
export OMPI_MCA_oob_tcp_if_include='10.0.0.0/8'
export UCX_NET_DEVICES='mlx5_0:1'"
expect_exit 0 "node b" -- node b "$TOPOTUNE" env --node --profile po
check "node b: its own ports and interface, the subnet kept" test "$(cat "$TEST_TMP/out")" = \
    "export OMPI_MCA_btl_tcp_if_include='ens5'
export OMPI_MCA_oob_tcp_if_include='10.0.0.0/8'
export UCX_NET_DEVICES='mlx5_3:1,roce_0:1'"
expect_stderr_has "UCX_NET_DEVICES: the profile's mlx5_0:1 names what this node lacks (mlx5_0:1)" "said"
TOPOTUNE_SYSFS_ROOT="$TEST_TMP/b" UCX_NET_DEVICES=mlx5_0:1 "$TOPOTUNE" doctor --profile po --json d8.json >/dev/null 2>&1
check "node a's UCX_NET_DEVICES on node b fails node-values" test "$(doctor_status d8.json)" = fail
check "and says why" grep -q "UCX_NET_DEVICES=mlx5_0:1 names what this node lacks (mlx5_0:1); this node's is mlx5_3:1,roce_0:1" d8.json

# 6. A hostile profile's NCCL_IB_HCA of 300,000 entries (2 MB) is read in one pass: each entry's
# port was sought to the value's end, and env --node (every rank of mpirun.sh) ran for minutes.
# The bound is far above the one pass's time, even under ASan on a loaded machine.
set_value p/profile.json 0 '"=" + ",".join("nic%d" % i for i in range(300000))'
expect_exit 0 "300,000 entries" -- node b timeout 60 "$TOPOTUNE" env --node --profile p
check "none is this node's: its own ports" grep -qx "export NCCL_IB_HCA='=mlx5_3:1,roce_0:1'" "$TEST_TMP/out"
check "the note a few hundred bytes" test "$(wc -c <"$TEST_TMP/err")" -lt 2000
# ... and an Open MPI list of as many, all but the last here: the interfaces read once
set_value po/profile.json 1 '",".join(["ens5"] * 300000 + ["nic%d" % i for i in range(1000)])'
expect_exit 0 "300,000 interfaces" -- node b timeout 60 "$TOPOTUNE" env --node --profile po
check "this node's own" grep -qx "export OMPI_MCA_btl_tcp_if_include='ens5'" "$TEST_TMP/out"
check "its note a few hundred bytes" test "$(wc -c <"$TEST_TMP/err")" -lt 2000
# a long name of two-byte characters, cut for the note inside none of them (the note, no longer
# UTF-8, was dropped without a word)
set_value po/profile.json 1 '"a" + "\u00e9" * 80'
expect_exit 0 "a long name of two-byte characters" -- node b "$TOPOTUNE" env --node --profile po
check "its note said" grep -q "OMPI_MCA_btl_tcp_if_include: the profile's a.* names what this node lacks" "$TEST_TMP/err"
finish
