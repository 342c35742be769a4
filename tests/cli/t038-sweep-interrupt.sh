#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGINT and SIGTERM during a run of real mpirun with hung ranks: the sweep says what it
# interrupted and where the results are, dies of the signal (130, 143), and leaves no rank
# behind, not even for a moment.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
# shellcheck source=sweep-procs.sh
. "$(dirname "$0")/sweep-procs.sh"
trap 'end_leftovers; rm -rf "$TEST_TMP"' EXIT
for sig in INT TERM; do
    start_hung_sweep "$TEST_TMP/$sig"
    kill -"$sig" "$sweep_pid"
    wait "$sweep_pid"
    rc=$?
    left=$(leftovers)
    want=$((128 + $(kill -l "$sig")))
    check "SIG$sig: exit $rc, expected $want" test "$rc" -eq "$want"
    check "SIG$sig: nothing left at exit ($left processes)" test "$left" -eq 0
    cp "$TEST_TMP/sweep.err" "$TEST_TMP/err"
    expect_stderr_has "sweep interrupted by SIG$sig during run" "SIG$sig: the run is named"
    expect_stderr_has "finished runs are in '$TEST_TMP/$sig/results.jsonl'" "SIG$sig: the results are named"
    check "SIG$sig: the cut run is not recorded" test ! -s "$TEST_TMP/$sig/results.jsonl"
    end_leftovers
done
finish
