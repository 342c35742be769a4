#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The runs die with the sweep: after kill -9 of the sweep, or SIGHUP (a dropped ssh session),
# neither mpirun nor its hung ranks keep running. And a sweep resumed in a directory whose last
# run is still alive (DIR/sweep.pid) ends it first and says so.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
# shellcheck source=sweep-procs.sh
. "$(dirname "$0")/sweep-procs.sh"
trap 'end_leftovers; rm -rf "$TEST_TMP"' EXIT
for sig in KILL HUP; do
    start_hung_sweep "$TEST_TMP/$sig"
    kill -"$sig" "$sweep_pid"
    wait "$sweep_pid" 2>/dev/null
    left=1
    for _ in $(seq 20); do
        left=$(leftovers)
        [ "$left" -eq 0 ] && break
        sleep 0.1
    done
    check "SIG$sig: mpirun and its ranks died with the sweep ($left left after 2 s)" test "$left" -eq 0
    end_leftovers
done

# What a sweep of this directory left running (here a stand-in in a session of its own, named
# by sweep.pid as its run, with the directory's run marker every run carries): --resume ends it
# before it measures and says what it ended. A process without the marker is never signalled
# (t009).
cat >"$TEST_TMP/ok.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_ALGO": ["Ring"]}, "repeat": 1, "timeout_s": 10}
JSON
expect_exit 0 "a sweep" -- "$TOPOTUNE" -q sweep --space "$TEST_TMP/ok.json" --out "$TEST_TMP/left"
marker="TOPOTUNE_SWEEP_RUN=$(stat -c '%d:%i' "$TEST_TMP/left")"
setsid env "$marker" bash -c 'trap "" TERM; while :; do sleep 1; done' &
stray=$!
for _ in $(seq 300); do # until env has exec'd bash with the marker, however slow the machine
    tr '\0' '\n' <"/proc/$stray/environ" 2>/dev/null | grep -qx "$marker" && break
    sleep 0.1
done
sleep 0.2
printf '999999 %d\n' "$stray" >"$TEST_TMP/left/sweep.pid"
expect_exit 0 "--resume next to a leftover run" -- \
    "$TOPOTUNE" sweep --space "$TEST_TMP/ok.json" --out "$TEST_TMP/left" --resume
check "the leftover run was ended" bash -c "! kill -0 $stray 2>/dev/null || ps -o stat= -p $stray | grep -q Z"
expect_stderr_has "left 2 processes of its last run (process group $stray): killed" "what it killed is said"
kill -9 "$stray" 2>/dev/null
finish
