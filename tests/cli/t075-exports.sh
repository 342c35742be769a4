#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The programs export no function of their own: a library or plugin loaded into them (Open MPI's
# components, NCCL's net and tuner plugins, hwloc's) that calls glibc's error(3) must reach
# glibc's, not a function of ours of the same name (the log functions were once named error,
# warning, info and debug, and `error` was exported: a caller of error(3) would have run it with
# another signature). Data the libraries' copy relocations place in the program (stderr, environ,
# MPI's predefined handles) is not a function and stays; nor does the hook a sanitized build's MPI
# programs give ASan (tests/asan-mpi-options.c), which the sanitizer's runtime looks up by name.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v nm >/dev/null || { echo "skipped: nm not installed (binutils)"; exit 77; }
for program in topotune topotune-bench topotune-node topotune-p2p-copy; do
    [ -f "$TOPOTUNE_BIN/$program" ] || continue
    funcs=$(nm -D --defined-only "$TOPOTUNE_BIN/$program" | awk '$2 ~ /^[TtWwi]$/ && $3 != "__asan_default_options" {print $3}' | tr '\n' ' ')
    check "$program exports no function (got: ${funcs:-none})" test -z "$funcs"
done
finish
