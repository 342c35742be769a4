#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune run, the main job: this machine mapped, swept (mpi when no GPU is visible), profiled.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
start=$(date +%s)
expect_exit 0 "topotune run" -- "$TOPOTUNE" run --profiles "$TEST_TMP/profiles" --out "$TEST_TMP/sweep"
took=$(($(date +%s) - start))
check "under 10 minutes (${took}s)" test "$took" -lt 600
class=$("$TOPOTUNE" topo --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
check "a profile for this machine's class" test -s "$TEST_TMP/profiles/$class/latest/profile.json"
if [ ! -e /dev/nvidia0 ]; then
    expect_stderr_has "no GPU visible" "says it falls back to mpi"
fi
check "says where and what" grep -q "profile written under" "$TEST_TMP/out"
finish
