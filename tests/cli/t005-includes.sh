#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/check-includes.py: the real tree passes; an include pointing up the stack, another
# folder's internal.h, and a library whose links differ from its includes each fail.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
check_includes=$TOPOTUNE_SRC/tools/check-includes.py

expect_exit 0 "the tree's includes all point down" -- python3 "$check_includes" "$TOPOTUNE_SRC"

# A copy of the tree's sources to break one way at a time.
copy() {
    rm -rf "$TEST_TMP/tree"
    mkdir -p "$TEST_TMP/tree"
    (cd "$TOPOTUNE_SRC" && git ls-files -- '*.c' '*.h' CMakeLists.txt | grep -v '^tests/' |
        tar -cf - -T -) | tar -xf - -C "$TEST_TMP/tree"
}

copy
echo '#include "gen/gen.h"' >>"$TEST_TMP/tree/topo/matrix.c"
expect_exit 1 "topo including gen is refused" -- python3 "$check_includes" "$TEST_TMP/tree"
check "the upward include is named" grep -q 'topo/matrix.c: includes gen/gen.h: gen/ is above topo/' "$TEST_TMP/out"

copy
echo '#include "cli/cli.h"' >>"$TEST_TMP/tree/cluster/gather.c"
expect_exit 1 "cluster including cli (the old topo/cluster cycle's shape) is refused" -- \
    python3 "$check_includes" "$TEST_TMP/tree"

copy
echo '#include "bench/internal.h"' >>"$TEST_TMP/tree/gen/select.c"
expect_exit 1 "another folder's internal.h is refused" -- python3 "$check_includes" "$TEST_TMP/tree"
check "named as private" grep -q 'gen/select.c: includes bench/internal.h: private to bench/' "$TEST_TMP/out"

copy
sed -i 's/target_link_libraries(topotune_doctor PUBLIC topotune_topo/target_link_libraries(topotune_doctor PUBLIC topotune_topo topotune_sweep/' \
    "$TEST_TMP/tree/CMakeLists.txt"
expect_exit 1 "a library linking a folder its sources do not include is refused" -- \
    python3 "$check_includes" "$TEST_TMP/tree"
check "the library is named" grep -q 'topotune_doctor links' "$TEST_TMP/out"

finish
