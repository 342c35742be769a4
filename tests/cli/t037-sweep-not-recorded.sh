#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A run whose events could not be written (the disk filled during the run) is not a verdict on
# its configuration: the sweep stops without recording it, and --resume runs it again.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
    echo "skipped: a full disk needs root and mount namespaces"
    exit 77
fi
fake=$TEST_TMP/fake-bench
fake_bench "$fake" space
export TOPOTUNE_BENCH_PROGRAM=$fake FAKE_PIDS=$TEST_TMP/pids
cat >"$TEST_TMP/space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["fill"]}, "repeat": 1, "timeout_s": 5}
JSON
dir=$TEST_TMP/sweep
mkdir -p "$dir"
# One mount namespace for both sweeps: the first fills the tmpfs during its second run, the
# filler is removed, the second resumes.
expect_exit 0 "full disk, then --resume" -- unshare -m bash -c "
    mount -t tmpfs -o size=256k tmpfs '$dir' || exit 8
    '$TOPOTUNE' -q sweep --space '$TEST_TMP/space.json' --out '$dir' 2>'$TEST_TMP/first.err'
    echo \$? >'$TEST_TMP/first.rc'
    cp '$dir/results.jsonl' '$TEST_TMP/first.jsonl'
    rm -f '$dir/filler'
    '$TOPOTUNE' -q sweep --space '$TEST_TMP/space.json' --out '$dir' --resume || exit 9
    cp '$dir/results.jsonl' '$TEST_TMP/second.jsonl'"
check "the first sweep stops with exit 1" test "$(cat "$TEST_TMP/first.rc")" = 1
check "it says why and what --resume does" grep -q "is not recorded, and 'topotune sweep --resume' runs it again" \
    "$TEST_TMP/first.err"
check "the unrecorded run is not on file" python3 -c '
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["env"] for r in runs] == [{}], runs' "$TEST_TMP/first.jsonl"
check "--resume ran it again, ok" python3 -c '
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert [(r["env"], r["outcome"]) for r in runs] == [({}, "ok"), ({"NCCL_FAKE_MODE": "fill"}, "ok")], runs' \
    "$TEST_TMP/second.jsonl"
finish
