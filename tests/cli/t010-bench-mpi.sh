#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune-bench --backend mpi on 2 and 3 real ranks: nccl-tests' table, JSON Lines, busbw arithmetic.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
check_py="$(dirname "$0")/bench-check.py"

# 8 B to 4 MiB by 2: 20 sizes.
expect_exit 0 "2 ranks, text" -- mpirun_np 2 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 4M -f 2 -n 5 -w 2
check "2-rank table" python3 "$check_py" text "$TEST_TMP/out" 2 20

# JSON to stdout replaces the table; the recorded environment is whitelisted.
expect_exit 0 "2 ranks, json" -- \
    mpirun_np 2 NCCL_TEST_MARKER=1 MY_SECRET_TOKEN=hunter2 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 4M -f 2 -n 5 -w 2 --json -
check "2-rank JSON Lines" python3 "$check_py" json "$TEST_TMP/out" 2 20
check "whitelisted variable recorded" grep -q NCCL_TEST_MARKER "$TEST_TMP/out"
check "secret not recorded" bash -c "! grep -q hunter2 '$TEST_TMP/out'"

# 3 ranks (oversubscribed on 2 cores): busbw = algbw x 4/3; every dtype MPI has; --json FILE.
for dtype in int8 uint8 int32 uint32 int64 uint64 float double; do
    for op in sum prod min max; do
        expect_exit 0 "3 ranks $dtype $op" -- mpirun_np 3 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 64K -f 4 \
            -n 2 -w 1 -c 2 -d "$dtype" -o "$op" --json "$TEST_TMP/$dtype-$op.json"
    done
done
check "3-rank JSON" python3 "$check_py" json "$TEST_TMP/float-sum.json" 3 7
check "3-rank text is still printed with --json FILE" grep -q "Out of bounds values : 0 OK" "$TEST_TMP/out"

# topotune bench drives the same through mpirun.
expect_exit 0 "topotune bench --np 2" -- "$TOPOTUNE" bench --backend mpi --np 2 -b 8 -e 1M -f 2 -n 5
check "topotune bench table" python3 "$check_py" text "$TEST_TMP/out" 2 18
# Killed, topotune bench takes its launcher with it: mpirun and both ranks (one stalled at its
# first size, as a hung NCCL would be) kept running for ever after a scheduler killed topotune.
TOPOTUNE_BENCH_TEST_STALL=0 "$TOPOTUNE" bench --backend mpi --np 2 -b 1040 -e 1040 >/dev/null 2>&1 &
bench_pid=$!
ranks() { pgrep -f -- "topotune-bench --backend mpi -b 1040 -e 1040" >/dev/null; }
for _ in $(seq 100); do ranks && break; sleep 0.2; done
check "the ranks started" ranks
kill -TERM "$bench_pid"
wait "$bench_pid" 2>/dev/null
for _ in $(seq 100); do ranks || break; sleep 0.2; done
no_ranks() { ! ranks; }
check "no rank left after topotune bench was killed" no_ranks
pkill -KILL -f -- "-b 1040 -e 1040" 2>/dev/null
finish
