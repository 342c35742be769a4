#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The nccl backend orders every fill, check and copy on the run's own (non-blocking) stream: a
# cudaMemcpy or cudaMemset on the legacy default stream is not ordered before the all_reduce and
# turned good configurations into "wrong" at random. Without a GPU this is checked in the source;
# tests/gpu/check-on-gpu.sh proves it on a device (every dtype and op, -c 1).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
src=$TOPOTUNE_SRC/bench/backend-nccl.c
check "no copy or memset on the legacy default stream" bash -c "! grep -nE '\\bcuda(Memcpy|Memset)\\(' '$src'"
check "the check's copies are on the run's stream" bash -c \
    "[ \$(grep -cE 'cuda(MemcpyAsync|MemsetAsync)\\(.*' '$src') -ge 3 ] && grep -q 'gpu->stream));' '$src'"
# NCCL functions newer than some NCCL a container may load (ncclMemAlloc/Free 2.19, ncclAlltoAll
# 2.28) are weak references, called only where present: a strong one stops the program at load
# under LD_BIND_NOW or -z now before its version check runs.
if command -v nm >/dev/null; then
    check "newer NCCL functions are weak references" bash -c \
        "! nm -D '$TOPOTUNE_BENCH' | grep -E ' U (ncclMemAlloc|ncclMemFree|ncclAlltoAll)\$'"
fi
finish
