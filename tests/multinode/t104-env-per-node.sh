#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One job script, two hosts whose device names differ (tests/multinode/hosts.sh: h1's RDMA
# device mlx5_0 and interface eth0, h2's mlx5_3 and ens5, each from its own sysfs tree): a
# profile that sets NCCL_IB_HCA (measured where the device is mlx5_0) is launched with its
# launch/mpirun.sh across both, and each rank gets its own host's NCCL_IB_HCA from topotune env
# --node; with TOPOTUNE_PER_NODE=off both get the profile's.
# shellcheck source=../cli/lib.sh
. "$(dirname "$0")/../cli/lib.sh"
# shellcheck source=hosts.sh
. "$(dirname "$0")/hosts.sh"
mn_guard 300 "$@"
cd "$TEST_TMP" || exit 1

# The profile: a sim sweep of NCCL_IB_HCA=mlx5_0 against the defaults, its results edited so that
# the setting wins (as a measurement on a node where it helps would), then gen.
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "64M", "factor": 8},
 "vars": {"NCCL_IB_HCA": ["=mlx5_0:1"]}, "repeat": 2, "iters": 2, "warmup": 1, "timeout_s": 10}' >space.json
"$TOPOTUNE" sweep --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100-2nodes.json" --space space.json \
    --no-cures --out plain >/dev/null 2>&1
mkdir -p won
python3 - plain won <<'PY'
import json, sys
src, dst = sys.argv[1:]
open(dst + "/sweep.json", "w").write(open(src + "/sweep.json").read())
with open(dst + "/results.jsonl", "w") as out:
    for line in open(src + "/results.jsonl"):
        r = json.loads(line)
        if r["env"].get("NCCL_IB_HCA"):
            for s in r["sizes"]:
                s["busbw"] *= 3
        out.write(json.dumps(r) + "\n")
PY
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs won --profiles p
profile=$(echo p/*/latest)
check "the profile sets NCCL_IB_HCA" grep -q "^export NCCL_IB_HCA='=mlx5_0:1'" "$profile/nccl.env"
check "mpirun.sh resolves it on each rank's node" grep -qF "per_rank=(\"\$topotune_bin\" env --node" "$profile/launch/mpirun.sh"

# The hosts: h2's interface is ens5; each host's devices in its own sysfs tree.
export MN_IFNAME_h2=ens5
mn_up 2 || { fail "the hosts did not come up"; finish; exit 1; }
for h in 1:eth0:mlx5_0 2:ens5:mlx5_3; do
    IFS=: read -r i ifname dev <<<"$h"
    python3 - "$TEST_TMP/sys-h$i" "$ifname" "$dev" <<'PY'
import os, sys
root, ifname, dev = sys.argv[1:]
def put(path, data):
    os.makedirs(os.path.dirname(root + path), exist_ok=True)
    open(root + path, "w").write(data + "\n")
put(f"/sys/class/net/{ifname}/operstate", "up"); put(f"/sys/class/net/{ifname}/ifindex", "3")
put(f"/sys/class/infiniband/{dev}/ports/1/state", "4: ACTIVE")
put(f"/sys/class/infiniband/{dev}/ports/1/link_layer", "InfiniBand")
PY
    echo "TOPOTUNE_SYSFS_ROOT=$TEST_TMP/sys-h$i" >>"$TOPOTUNE_MN_DIR/h$i.env"
done
printf 'h1 slots=1\nh2 slots=1\n' >hosts
# shellcheck disable=SC2016 # the rank's shell expands it
launch() { # the job script on both hosts, one rank each; each rank says its host and value
    mn_head env "$@" HOSTFILE="$TEST_TMP/hosts" NP=2 TOPOTUNE_PPN=1 TOPOTUNE="$TOPOTUNE" \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_exclude=lo,docker0 \
        OMPI_MCA_btl_tcp_if_exclude=127.0.0.1/8,lo,docker0 \
        "$profile/launch/mpirun.sh" sh -c 'echo "rank $(hostname) $NCCL_IB_HCA"' # expanded by each rank's sh
}
expect_exit 0 "mpirun.sh across h1 and h2" -- launch
check "each host's own NCCL_IB_HCA" test "$(grep '^rank ' "$TEST_TMP/out" | sort)" = \
    "rank h1 =mlx5_0:1
rank h2 =mlx5_3:1"
expect_exit 0 "TOPOTUNE_PER_NODE=off" -- launch TOPOTUNE_PER_NODE=off
check "both keep the profile's" test "$(grep '^rank ' "$TEST_TMP/out" | sort)" = \
    "rank h1 =mlx5_0:1
rank h2 =mlx5_0:1"
mn_down
check "nothing left of the hosts" test -z "$(mn_leftovers)"
finish
