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
# Shapes the sweep refuses, refused here too: each ran other than asked and exited 0 (a sim run
# twice into one --json, a "remote" host measured on this machine).
expect_exit 2 "topotune bench --backend sim --np 2" -- "$TOPOTUNE" bench --backend sim --np 2 \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" -b 1M -e 1M
expect_stderr_has "the sim is one process" "said"
expect_exit 2 "topotune bench --launcher direct --hosts" -- "$TOPOTUNE" bench --launcher direct \
    --hosts elsewhere --backend mpi -b 8 -e 8
expect_stderr_has "--hosts needs a launcher that reaches them" "said"

# --split by node with groups of different rank counts (a host of 2 ranks, one of 1, each rank
# given its host name in a UTS namespace): all_gather's 16 B has a part for each rank of the
# 1-rank group only. Each group skipped by its own count while every size ended in one gather:
# the groups fell out of step, sizes were reported one step off, or, with rank 0 in the larger
# group, the run hung. Each group's lines carry its own sizes, in step.
if [ "$(id -u)" = 0 ] && unshare -u true 2>/dev/null; then
    for single in 0 2; do
        cat >"$TEST_TMP/host-$single.sh" <<SH
#!/bin/bash
h=hosta; [ "\$OMPI_COMM_WORLD_RANK" = $single ] && h=hostb
exec unshare -u sh -c 'hostname "\$0"; exec "\$@"' "\$h" "$TOPOTUNE_BENCH" "\$@"
SH
        chmod +x "$TEST_TMP/host-$single.sh"
        expect_exit 0 "--split node, groups of 1 and 2 ranks (rank $single alone)" -- \
            mpirun_np 3 "$TEST_TMP/host-$single.sh" --backend mpi -C all_gather -b 16 -e 64 -f 2 -n 2 \
            -w 1 --split node -T 20 --json "$TEST_TMP/split-$single.jsonl"
        check "each group's own sizes, each size's bytes its own (rank $single alone)" python3 - \
            "$TEST_TMP/split-$single.jsonl" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
groups = next(e for e in events if e["event"] == "groups")["groups"]
sizes = {}
for e in (e for e in events if e["event"] == "size"):
    sizes.setdefault(e["group"], []).append(e["size"])
    assert abs(e["time_us"] * e["algbw"] * 1e3 - e["size"]) <= 0.02 * e["size"] + 1, e
want = {g: ([16, 32, 64] if h == ["hostb"] else [32, 64]) for g, h in enumerate(groups)}  # hostb: 1 rank
assert sizes == want, (sizes, groups)
PY
    done
    # 16 B alone: the 1-rank group measures it, the other none. That group ended in an "init"
    # error (exit 6) after the other's measurement; only no group measuring is an error.
    expect_exit 0 "--split node, a size for one group only" -- mpirun_np 3 "$TEST_TMP/host-0.sh" \
        --backend mpi -C all_gather -b 16 -e 16 -n 2 -w 1 --split node -T 20 --json "$TEST_TMP/one.jsonl"
    check "its one line, no error" python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert [e["size"] for e in ev if e["event"] == "size"] == [16], ev
assert not any(e["event"] == "error" for e in ev), ev' "$TEST_TMP/one.jsonl"
fi

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
