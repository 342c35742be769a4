#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune run, the main job: this machine mapped, swept (mpi when no GPU is visible), profiled.
# Without a GPU it runs the shipped mpi space; with one, a small nccl space, so that the test
# means the same on both within ctest's limit (the full nccl space is the GPU check's business).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
space=()
if [ -e /dev/nvidia0 ]; then
    space=(--space "$TOPOTUNE_FIXTURES/space-nccl-tiny.json")
fi
expect_exit 0 "topotune run" -- "$TOPOTUNE" run --profiles "$TEST_TMP/profiles" --out "$TEST_TMP/sweep" "${space[@]}"
class=$("$TOPOTUNE" topo --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
check "a profile for this machine's class" test -s "$TEST_TMP/profiles/$class/latest/profile.json"
if [ ! -e /dev/nvidia0 ]; then
    expect_stderr_has "no GPU visible" "says it falls back to mpi"
fi
check "says where and what" grep -q "profile written under" "$TEST_TMP/out"
finish
