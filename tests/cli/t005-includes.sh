#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/check-includes.py: the real tree passes; an include pointing up the stack, another
# folder's internal.h, and a library whose links differ from its includes each fail. The arrows
# are those of docs/design.md's layout table: one taken out of the table is then reported, and a
# table that cannot be read (a column renamed, an arrow pointing up) fails with exit 2.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
check_includes=$TOPOTUNE_SRC/tools/check-includes.py

expect_exit 0 "the tree's includes all point down" -- python3 "$check_includes" "$TOPOTUNE_SRC"

# A copy of the tree's sources and design.md to break one way at a time.
copy() {
    rm -rf "$TEST_TMP/tree"
    mkdir -p "$TEST_TMP/tree"
    (cd "$TOPOTUNE_SRC" && git ls-files -- '*.c' '*.h' CMakeLists.txt docs/design.md |
        grep -v '^tests/' | tar -cf - -T -) | tar -xf - -C "$TEST_TMP/tree"
}
design=$TEST_TMP/tree/docs/design.md

copy
expect_exit 0 "the copy passes as the tree does" -- python3 "$check_includes" "$TEST_TMP/tree"

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

copy
# shellcheck disable=SC2016 # Markdown's backquotes, not the shell's
sed -i '/^| `sweep\/` |/s/`cluster\/`, //' "$design"
check "the sweep row of the copy's table lost its arrow to cluster/" \
    grep -q '^| .sweep/. |.* | .bench/. (public), .launch/.' "$design"
expect_exit 1 "an include whose arrow design.md's table no longer has is refused" -- \
    python3 "$check_includes" "$TEST_TMP/tree"
check "the include and the missing arrow are named" grep -q \
    'sweep/sweep-hosts.c: includes cluster/cluster.h: no arrow sweep/ -> cluster/ in docs/' \
    "$TEST_TMP/out"

copy
sed -i 's/^| folder | holds | may include |$/| folder | holds | may use |/' "$design"
expect_exit 2 "a table without its 'may include' column is an error" -- \
    python3 "$check_includes" "$TEST_TMP/tree"
check "which says what it could not read" grep -q \
    "^check-includes: docs/design.md: line [0-9]*: the table has no column 'may include'" \
    "$TEST_TMP/out"

copy
# shellcheck disable=SC2016 # the same
sed -i '/^| `topo\/` |/s/| `util\/` |$/| `util\/`, `gen\/` |/' "$design"
expect_exit 2 "a table arrow pointing up is an error" -- python3 "$check_includes" "$TEST_TMP/tree"
check "which is named" grep -q 'topo/. may include .gen/., a later row: an arrow pointing up' \
    "$TEST_TMP/out"

rm "$design"
expect_exit 2 "no design.md is an error, not a pass" -- python3 "$check_includes" "$TEST_TMP/tree"

finish
