#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey --backend sim` on inputs nobody scripted: a shipped spec whose defaults the
# model predicts to hang is refused with that outcome.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
cluster() { # cluster FILE SPEC COUNT [FAULTS JSON]
    printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "%s", "count": %s}], "faults": %s}\n' \
        "$2" "$3" "${4:-[]}" >"$1"
}

# The shipped RTX 4090 spec: P2P over PCIe hangs at NCCL's defaults; said so, not "no GPU".
cluster rtx.json rtx4090-8x-pcie.json 4
expect_exit 2 "RTX 4090 nodes refused" -- "$TOPOTUNE" survey --backend sim --cluster rtx.json --out rtx
expect_stderr_has "every launch on 'rtx4090-8x-pcie.json' hangs at init with NCCL's defaults" \
    "the predicted outcome said"
check "not 'no GPU'" test "$(grep -c "no GPU" "$TEST_TMP/err")" = 0
expect_no_file rtx "nothing written"

finish
