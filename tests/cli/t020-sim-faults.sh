#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The sim backend as a child process: the field's failure modes acted out (hang killed by -T,
# wrong results, init and first-collective failures), reproducible noise, predicted labels.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"
sim=("$TOPOTUNE_BENCH" --backend sim -b 8 -e 64M -f 4 -T 3)

# Healthy: same exit codes and events as the real backends, everything marked predicted.
expect_exit 0 "H100 sim" -- "${sim[@]}" --topology "$specs/hgx-h100.json" --json "$TEST_TMP/ok.json"
check "predicted everywhere" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[0]["event"] == "start" and ev[0]["backend"] == "sim" and ev[0]["ranks"] == 8
assert all(e["predicted"] is True for e in ev if e["event"] in ("start", "size", "end")), ev
sizes = [e for e in ev if e["event"] == "size"]
assert len(sizes) == 12 and all(e["wrong"] == 0 and e["algo"] and e["proto"] for e in sizes)
for e in sizes:
    assert abs(e["busbw"] - e["algbw"] * 2 * 7 / 8) < 1e-9 * max(1, e["busbw"])
assert ev[-1]["outcome"] == "ok"' "$TEST_TMP/ok.json"
check "table says PREDICTED" grep -q "^# PREDICTED" "$TEST_TMP/out"

# P2P over PCIe where it is broken (RTX 4090): init hangs until -T, then exit 4 naming init.
start=$(date +%s)
expect_exit 4 "broken P2P hangs" -- "${sim[@]}" --topology "$specs/rtx4090-8x-pcie.json" --json "$TEST_TMP/hang.json"
check "the hang was cut at -T (took $(($(date +%s) - start))s)" test $(($(date +%s) - start)) -lt 15
expect_stderr_has "stage init" "the stage is named"
# Fault order as NCCL's init meets them: a socket interface that matches nothing fails the
# bootstrap, before any transport is set up, so it wins over the hang P2P would cause later.
start=$(date +%s)
expect_exit 3 "no interface: the bootstrap fails first" -- env NCCL_SOCKET_IFNAME=nosuch0 "${sim[@]}" \
    --topology "$specs/rtx4090-8x-pcie.json"
check "at once, not after -T (took $(($(date +%s) - start))s)" test $(($(date +%s) - start)) -lt 3
expect_stderr_has "matches no network interface" "the bootstrap failure is named"
expect_exit 1 "predict says the same" -- "$TOPOTUNE" predict -i "$specs/rtx4090-8x-pcie.json" \
    --env NCCL_SOCKET_IFNAME=nosuch0
check "predict: error at init, the interface named" grep -q "^# predicted outcome: error at init: NCCL_SOCKET_IFNAME=nosuch0" "$TEST_TMP/out"
# The fix the model names: NCCL_P2P_DISABLE=1 runs.
expect_exit 0 "P2P disabled runs" -- env NCCL_P2P_DISABLE=1 "${sim[@]}" --topology "$specs/rtx4090-8x-pcie.json"

# LL128 forced without NVLink: wrong results, exit 7.
expect_exit 7 "forced LL128 on PCIe" -- env NCCL_P2P_DISABLE=1 NCCL_PROTO=LL128 "${sim[@]}" \
    --topology "$specs/rtx4090-8x-pcie.json" --json "$TEST_TMP/wrong.json"
check "wrong counted" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-1]["outcome"] == "wrong" and ev[-1]["wrong"] > 0' "$TEST_TMP/wrong.json"
# LL128 on NVLink is fine.
expect_exit 0 "LL128 on NVSwitch" -- env NCCL_PROTO=LL128 "${sim[@]}" --topology "$specs/hgx-h100.json"

# Names that select nothing fail at init, exit 3.
expect_exit 3 "NCCL_SOCKET_IFNAME=nothing" -- env NCCL_SOCKET_IFNAME=nosuchif "${sim[@]}" --topology "$specs/hgx-h100.json"
expect_stderr_has "NCCL_SOCKET_IFNAME" "the variable is named"
expect_exit 3 "NCCL_IB_HCA=nothing" -- env NCCL_IB_HCA==mlx5_99 "${sim[@]}" --topology "$specs/hgx-h100.json"
expect_stderr_has "NCCL_IB_HCA" "the variable is named"
expect_exit 0 "NCCL_IB_HCA that matches" -- env NCCL_IB_HCA=mlx5_0,mlx5_1 "${sim[@]}" --topology "$specs/hgx-h100.json"
expect_exit 0 "NCCL_SOCKET_IFNAME that matches" -- env NCCL_SOCKET_IFNAME=ib "${sim[@]}" --topology "$specs/hgx-h100.json"

# An algorithm set that leaves nothing usable fails at the first collective.
expect_exit 3 "NCCL_ALGO=NVLSTree on one node" -- env NCCL_ALGO=NVLSTree "${sim[@]}" --topology "$specs/hgx-h100.json"
expect_stderr_has "first collective" "the first collective fails"

# Same seed, same output byte for byte; other seeds differ within the noise.
a=$TEST_TMP/seed-7a.json b=$TEST_TMP/seed-7b.json c=$TEST_TMP/seed-8.json
"${sim[@]}" --topology "$specs/dgx-a100.json" --seed 7 --json - >"$a"
"${sim[@]}" --topology "$specs/dgx-a100.json" --seed 7 --json - >"$b"
"${sim[@]}" --topology "$specs/dgx-a100.json" --seed 8 --json - >"$c"
check "same seed, same bytes" cmp -s "$a" "$b"
check "other seed differs" bash -c "! cmp -s '$a' '$c'"
check "within the noise (sigma 0.02: every time within 15%)" python3 -c '
import json, sys
t = [[e["time_us"] for e in map(json.loads, open(f)) if e["event"] == "size"] for f in sys.argv[1:]]
assert len(t[0]) == len(t[1]) > 0
assert all(abs(x / y - 1) < 0.15 for x, y in zip(*t)), t' "$a" "$c"
expect_exit 0 "no noise" -- "${sim[@]}" --topology "$specs/dgx-a100.json" --noise 0 --seed 1 --json "$TEST_TMP/n1.json"
expect_exit 0 "no noise, other seed" -- "${sim[@]}" --topology "$specs/dgx-a100.json" --noise 0 --seed 2 --json "$TEST_TMP/n2.json"
check "noise 0 ignores the seed" cmp -s "$TEST_TMP/n1.json" "$TEST_TMP/n2.json"

# Real fixtures work as sim topologies too.
expect_exit 0 "DGX-2 fixture" -- "${sim[@]}" --topology "$TOPOTUNE_FIXTURES/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml"
finish
