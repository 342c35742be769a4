#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One sweep per directory: a second sweep on a busy --out is refused naming the holder's pid
# (exit 3), and --resume refuses any planning parameter that changed, naming it and both values.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fake=$TEST_TMP/fake-bench
fake_bench "$fake" space
export TOPOTUNE_BENCH_PROGRAM=$fake FAKE_PIDS=$TEST_TMP/pids
cat >"$TEST_TMP/space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["slow"]}, "repeat": 1, "timeout_s": 10}
JSON

# A sweep in progress (its second run takes 2 s): a --resume on its directory is refused.
"$TOPOTUNE" -q sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/busy" 2>"$TEST_TMP/first.err" &
first=$!
for _ in $(seq 50); do [ -s "$TEST_TMP/busy/sweep.json" ] && break; sleep 0.1; done
expect_exit 3 "a second sweep on a busy directory" -- \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/busy" --resume
expect_stderr_has "in use by another sweep (pid $first)" "the holder is named"
wait "$first"
check "the first sweep ends well (exit $?)" test "$?" -eq 0
check "every run once" test "$(wc -l <"$TEST_TMP/busy/results.jsonl")" -eq 2
expect_exit 0 "the directory is free again" -- \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/busy" --resume
check "still every run once" test "$(wc -l <"$TEST_TMP/busy/results.jsonl")" -eq 2

# --resume with another planning parameter: refused before anything runs, naming it.
cat >"$TEST_TMP/quick.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["ok"]}, "repeat": 1, "timeout_s": 10}
JSON
expect_exit 0 "a sweep to resume" -- "$TOPOTUNE" -q sweep --space "$TEST_TMP/quick.json" \
    --out "$TEST_TMP/plan" --repeat 1
check "sweep.json records the plan" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
want = {"strategy": "grid", "launcher": "direct", "hosts": None, "np": 1, "repeat": 1,
        "timeout_s": 10, "seed": 1, "sizes": {"min": 8, "max": 8, "factor": 2}, "iters": 20}
assert all(m[k] == v for k, v in want.items()), {k: m.get(k) for k in want}' \
    "$TEST_TMP/plan/sweep.json"
resume() { "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" --out "$TEST_TMP/plan" --resume "$@"; }
expect_exit 2 "--repeat changed" -- resume --repeat 2
expect_stderr_has "it was swept with repeat 1, this sweep asks for 2" "--repeat named"
expect_exit 2 "--strategy changed" -- resume --strategy halving --repeat 1
expect_stderr_has "strategy grid, this sweep asks for halving" "--strategy named"
expect_exit 2 "--timeout changed" -- resume --timeout 3
expect_stderr_has "timeout_s 10" "--timeout named"
expect_exit 2 "--seed changed" -- resume --seed 7
expect_stderr_has "seed 1, this sweep asks for 7" "--seed named"
if command -v mpirun >/dev/null; then
    expect_exit 2 "--launcher changed" -- resume --launcher mpirun
    expect_stderr_has "launcher direct, this sweep asks for mpirun" "--launcher named"
fi
check "nothing ran again" test "$(wc -l <"$TEST_TMP/plan/results.jsonl")" -eq 2
expect_exit 0 "the same plan resumes" -- resume --timeout 10.0
# An empty --out names no directory: refused before anything is written (it made /logs).
expect_exit 2 "an empty --out" -- "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out ''
expect_stderr_has "an empty directory name" "said why"
# A name too long for the launch lines that name files under it: every run was cut to
# "error, results-missing", blaming a filesystem the hosts do not share.
long=$TEST_TMP/$(printf 'd%.0s' $(seq 950))
expect_exit 2 "--out of 950 bytes and more" -- "$TOPOTUNE" sweep --space "$TOPOTUNE_SRC/profiles/spaces/mpi-default.json" --out "$long"
expect_stderr_has "more than 900: give a shorter path" "said why"
expect_no_file "$long" "nothing made"
finish
