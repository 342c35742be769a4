#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds one flavour of topotune.
# usage: tools/build.sh [plain|asan|fuzz]   (build directories: build, build-asan, build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-plain}
case "$flavour" in
plain) dir=build; args=(); targets=() ;;
asan) dir=build-asan; args=(-DTOPOTUNE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug); targets=() ;;
fuzz) dir=build-fuzz; args=(-DTOPOTUNE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
    targets=(--target fuzz-topology fuzz-hwloc-xml fuzz-space fuzz-sweepdir fuzz-tuner-table fuzz-nccl-log) ;;
*) echo "usage: tools/build.sh [plain|asan|fuzz]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" -DTOPOTUNE_WERROR=ON "${args[@]}" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
sed -n '/configuration summary/,/fuzz targets/p' "$dir.configure.log" | sed 's/^-- //'
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
