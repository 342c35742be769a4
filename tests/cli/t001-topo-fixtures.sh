#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topo --input on every real-machine fixture: counts, matrix and class id as expected.
# TOPOTUNE_UPDATE_EXPECTED=1 rewrites the expected files (review the diff before committing).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
facts="$(dirname "$0")/topo-facts.py"

for xml in "$TOPOTUNE_FIXTURES"/*.xml; do
    name=$(basename "$xml" .xml)
    expected="$TOPOTUNE_FIXTURES/expected/$name.json"
    expect_exit 0 "$name loads" -- "$TOPOTUNE" topo --input "$xml" --json "$TEST_TMP/$name.json"
    if [ "${TOPOTUNE_UPDATE_EXPECTED:-}" = 1 ]; then
        python3 "$facts" "$TEST_TMP/$name.json" "$expected" --update
    fi
    if python3 "$facts" "$TEST_TMP/$name.json" "$expected"; then pass; else fail "$name: facts differ"; fi
done

# Different machines never share a class id.
ids=$(for f in "$TEST_TMP"/*.json; do python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"]["id"])' "$f"; done)
if [ "$(echo "$ids" | sort | uniq -d)" = "" ]; then pass; else fail "class ids shared: $(echo "$ids" | sort | uniq -d)"; fi
finish
