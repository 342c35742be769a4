#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Identical hardware with other PCI bus numbers (device order reversed) keeps its class id.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
class_of() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"]["id"])' "$1"
}
for xml in "$TOPOTUNE_FIXTURES"/*.xml; do
    name=$(basename "$xml" .xml)
    python3 "$(dirname "$0")/renumber-buses.py" "$xml" "$TEST_TMP/$name-renumbered.xml"
    if cmp -s "$xml" "$TEST_TMP/$name-renumbered.xml"; then fail "$name: renumbering changed nothing"; fi
    expect_exit 0 "$name" -- "$TOPOTUNE" topo --input "$xml" --json "$TEST_TMP/a.json"
    expect_exit 0 "$name renumbered" -- "$TOPOTUNE" topo --input "$TEST_TMP/$name-renumbered.xml" --json "$TEST_TMP/b.json"
    a=$(class_of "$TEST_TMP/a.json")
    b=$(class_of "$TEST_TMP/b.json")
    if [ "$a" = "$b" ]; then pass; else fail "$name: class $a became $b after renumbering"; fi
done
finish
