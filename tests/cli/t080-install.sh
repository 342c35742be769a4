#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The install as a new user gets it: `cmake --install` into a temporary prefix, then from `/`
# with TOPOTUNE_DATA unset the installed topotune finds its own data (predict with the default
# space through compare, an installed spec) and its own topotune-bench (a small mpi sweep); the
# man pages render. Then `cpack -G DEB`: the package declares its Debian dependencies, and the
# same commands work from the package extracted with dpkg-deb -x.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
unset TOPOTUNE_DATA TOPOTUNE_BENCH_PROGRAM TOPOTUNE_NODE_PROGRAM
build=$TOPOTUNE_BIN # binaries land at the top of the build directory
space=$TOPOTUNE_FIXTURES/space-mpi-tiny.json

# works PREFIX WHAT: the installed programs under PREFIX, run from /, with no source tree around.
works() {
    local p=$1 what=$2 share=$1/share/topotune
    check "$what: programs installed" test -x "$p/bin/topotune" -a -x "$p/bin/topotune-bench" -a -x "$p/bin/topotune-node"
    check "$what: data installed" test -f "$share/spaces/nccl-default.json" -a -f "$share/specs/hgx-h100.json" \
        -a -f "$share/hardware/gpus.json" -a -f "$share/schemas/space.schema.json"
    expect_exit 0 "$what: --version" -- bash -c "cd / && '$p/bin/topotune' --version"
    check "$what: the project's version" grep -qx "topotune $(project_version)" "$TEST_TMP/out"
    expect_exit 0 "$what: topotune-bench --version" -- "$p/bin/topotune-bench" --version
    check "$what: the same version" grep -qx "topotune-bench $(project_version)" "$TEST_TMP/out"
    expect_exit 0 "$what: predict an installed spec" -- bash -c "cd / && '$p/bin/topotune' predict --input '$share/specs/hgx-h100.json' -e 1M"
    check "$what: predicted rows" grep -q '^   predicted' "$TEST_TMP/out"
    # compare of a spec needs the shipped default space: found next to the program
    expect_exit 0 "$what: compare two installed specs" -- bash -c "cd / && '$p/bin/topotune' compare '$share/specs/hgx-h100.json' '$share/specs/dgx-a100.json'"
    check "$what: compare names both" bash -c "grep -q hgx-h100 '$TEST_TMP/out' && grep -q dgx-a100 '$TEST_TMP/out'"
    expect_exit 0 "$what: a small mpi sweep" -- bash -c "cd / && '$p/bin/topotune' sweep --backend mpi --np 2 --space '$space' --out '$TEST_TMP/sweep-$what'"
    check "$what: the sweep ran the installed topotune-bench" python3 - "$TEST_TMP/sweep-$what/results.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if rows and all(r["outcome"] == "ok" for r in rows) else 1)
PY
    check "$what: the NCCL tuner plugin installed" bash -c "ls '$p'/lib*/libnccl-tuner-topotune.so '$p'/lib/*/libnccl-tuner-topotune.so 2>/dev/null | grep -q ."
    check "$what: man pages installed" test -f "$p/share/man/man1/topotune.1" -a -f "$p/share/man/man1/topotune-bench.1"
    # every program installed has its page, and each renders without a warning
    # shellcheck disable=SC2016 # the script is bash -c's, its $1 the prefix
    check "$what: a man page for every program in bin" bash -c 'for b in "$1"/bin/*; do
        m=$1/share/man/man1/$(basename "$b").1
        test -f "$m" || { echo "no page: $m"; exit 1; }
        test -z "$(groff -man -Tutf8 -ww -z "$m" 2>&1)" || exit 1; done' _ "$p"
    check "$what: the licence, and Debian's copyright file" cmp "$p/share/doc/topotune/LICENSE" "$p/share/doc/topotune/copyright"
}

project_version() {
    sed -n 's/^project(topotune VERSION \([0-9.]*\).*/\1/p' "$TOPOTUNE_SRC/CMakeLists.txt"
}

# 1. cmake --install
expect_exit 0 "cmake --install" -- cmake --install "$build" --prefix "$TEST_TMP/prefix"
works "$TEST_TMP/prefix" install
expect_exit 0 "man topotune renders" -- groff -man -Tutf8 -z "$TEST_TMP/prefix/share/man/man1/topotune.1"

# 2. the Debian package
if ! command -v cpack >/dev/null || ! command -v dpkg-deb >/dev/null; then
    echo "SKIP: cpack or dpkg-deb missing: the .deb half not tested"
else
    expect_exit 0 "cpack -G DEB" -- cpack -G DEB --config "$build/CPackConfig.cmake" -B "$TEST_TMP/pkg"
    deb=$(find "$TEST_TMP/pkg" -maxdepth 1 -name 'topotune_*.deb' | head -1)
    check "a .deb was written" test -n "$deb"
    expect_exit 0 "dpkg-deb -f Depends" -- dpkg-deb -f "$deb" Depends
    check "it declares hwloc, Jansson, libxml2 and Open MPI" bash -c \
        "grep -q libhwloc '$TEST_TMP/out' && grep -q libjansson '$TEST_TMP/out' && grep -q libxml2 '$TEST_TMP/out' && grep -q openmpi-bin '$TEST_TMP/out'"
    # hwloc's PCI plugin (only recommended by libhwloc15: --no-install-recommends dropped it, and
    # a live node showed no GPU), and the glibc whose symbols the programs use
    check "and hwloc's plugins, glibc 2.34" bash -c \
        "grep -q 'libhwloc-plugins' '$TEST_TMP/out' && grep -q 'libc6 (>= 2.34)' '$TEST_TMP/out'"
    mkdir -p "$TEST_TMP/root"
    expect_exit 0 "dpkg-deb -x" -- dpkg-deb -x "$deb" "$TEST_TMP/root"
    works "$TEST_TMP/root/usr" deb
fi

finish
