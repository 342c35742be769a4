#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune-bench's output is its result (issue 23): a table or JSON events that cannot be written
# (a full disk, a file at its size limit) make the run fail with exit 1, said on stderr, where it used to exit 0;
# a size range of more than 10,000 sizes (-b 8 -e 1G -i 1: 10^9 of them) is invalid usage (exit 6)
# before anything runs.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
spec=$TOPOTUNE_SRC/profiles/specs/dgx-a100.json
bench=("$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 8 -e 64K -f 2)
cd "$TEST_TMP" || exit 1

expect_exit 0 "a run that writes its table" -- "${bench[@]}"
check "the table ends with its footer" grep -q "^# Avg bus bandwidth" out
# nccl-tests' own columns (src/util.cu, writeBenchmarkLineBody): an unchecked cell is "    N/A"
# after busbw, a checked one "  %6g"; scripts that cut fixed positions read both alike.
expect_exit 0 "-c 0" -- "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 8 -e 8 -n 1 -w 0 -c 0
check "N/A in nccl-tests' place" grep -qE '^ +8 +2 +float +sum +-1 +[0-9.]+ +[0-9.]+ +[0-9.]+    N/A +[0-9.]+ +[0-9.]+ +[0-9.]+    N/A$' out
n_a=$(grep -E '^ +8 ' out)
expect_exit 0 "-c 1" -- "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 8 -e 8 -n 1 -w 0 -c 1
checked=$(grep -E '^ +8 ' out)
check "a checked line is one column longer per placement, as nccl-tests'" test "$((${#checked} - ${#n_a}))" = 2
# The Avg bus bandwidth line's word is the bandwidth's alone (nccl-tests' util.cu: FAILED below
# 0.9 x NCCL_TESTS_MIN_BW), even when results are wrong too.
expect_exit 7 "wrong results and too slow" -- env NCCL_TESTS_MIN_BW=1000 TOPOTUNE_BENCH_TEST_CORRUPT=0 \
    "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 64 -f 2 -n 1 -w 0
check "both lines say FAILED" sh -c "grep -q '^# Out of bounds values : [1-9][0-9]* FAILED$' out &&
    grep -q '^# Avg bus bandwidth    : [0-9.e+-]* FAILED$' out"
# -1 is nccl-tests' own default, "unchecked" (common.cu): a script that sets it turns the check
# off, no word on the line; it was refused (exit 6). Any other negative value checks and passes.
expect_exit 0 "NCCL_TESTS_MIN_BW=-1" -- env NCCL_TESTS_MIN_BW=-1 "$TOPOTUNE_BENCH" --backend sim \
    --topology "$spec" -b 8 -e 8 -n 1 -w 0
check "unchecked: no word" grep -qE '^# Avg bus bandwidth    : [0-9.e+-]* ?$' out
expect_exit 0 "NCCL_TESTS_MIN_BW=-5" -- env NCCL_TESTS_MIN_BW=-5 "$TOPOTUNE_BENCH" --backend sim \
    --topology "$spec" -b 8 -e 8 -n 1 -w 0
check "checked: OK" grep -qE '^# Avg bus bandwidth    : [0-9.e+-]* OK$' out
# A reader gone before the table is written: exit 1 and the message, as the page says, not a
# death by SIGPIPE (141).
closed_stdout "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 8 -e 8 -n 1 -w 0
check "a closed pipe: exit 1" test "$?" = 1
check "and said" grep -q "cannot write the results table to stdout" "$TEST_TMP/err"
# The sim's header names each rank's simulated host, as its JSON does; an NVL72 rack is 18 hosts
# of 4 GPUs (NCCL merges them into one node, a real run still has 18 hosts).
expect_exit 0 "a 2-node sim" -- "$TOPOTUNE_BENCH" --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100-2nodes.json" -b 1M -e 1M
check "rank 8 on sim-node1" grep -qE '^#  Rank  8 Group  0 Pid +[0-9]+ on  sim-node1 device  0 ' out
expect_exit 0 "a GB200 NVL72 rack" -- "$TOPOTUNE_BENCH" --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/gb200-nvl72.json" -b 1M -e 1M --json -
check "72 ranks on 18 hosts, 72 devices" python3 -c 'import json, sys
s = json.loads(open(sys.argv[1]).readline())
assert (s["ranks"], s["nodes"], len(s["hosts"])) == (72, 18, 18), s' "$TEST_TMP/out"
expect_exit 0 "the rack's table" -- "$TOPOTUNE_BENCH" --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/gb200-nvl72.json" -b 1M -e 1M
check "its header has 72 whole rank lines, the last on sim-node17" sh -c "test \$(grep -c '^#  Rank ' '$TEST_TMP/out') = 72 &&
    grep -qE '^#  Rank 71 Group  0 Pid +[0-9]+ on sim-node17 device  3 ' '$TEST_TMP/out' && ! grep -q '^#  #' '$TEST_TMP/out'"
expect_exit 0 "48 trays, racks of 18" -- "$TOPOTUNE_BENCH" --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/gb200-nvl72.json" --nodes 48 -b 1M -e 1M --json -
check "48 hosts, not 3 racks' 54" python3 -c 'import json, sys
s = json.loads(open(sys.argv[1]).readline())
assert (s["ranks"], s["nodes"], len(s["hosts"])) == (192, 48, 48), s' "$TEST_TMP/out"
expect_exit 0 "a run that writes its events" -- "${bench[@]}" --json events.jsonl
check "the end event is there" grep -q '"event": *"end"' events.jsonl

expect_exit 1 "the table to a full disk" -- bash -c '"$@" >/dev/full' _ "${bench[@]}"
expect_stderr_has "cannot write the results table to stdout" "the table: why"
# A file that stops taking data (the file-size limit: EFBIG, as a full disk gives ENOSPC); the
# events file is opened as a regular file only, so /dev/full itself is refused before the run.
expect_exit 1 "the events to a file that cannot grow" -- \
    bash -c 'trap "" XFSZ; ulimit -f 1; exec "$@"' _ "${bench[@]}" --json big.jsonl
expect_stderr_has "cannot write the JSON events to 'big.jsonl'" "the events: why"
expect_exit 6 "the events to a device" -- "${bench[@]}" --json /dev/full
expect_stderr_has "not a regular file" "the device: why"
expect_exit 1 "the events on stdout to a full disk" -- bash -c '"$@" >/dev/full' _ "${bench[@]}" --json -
expect_stderr_has "cannot write the JSON events to 'stdout'" "stdout events: why"
expect_exit 6 "an events file that cannot be opened" -- "${bench[@]}" --json "$TEST_TMP/no/such/dir/e.jsonl"

# Size ranges: 10^9 sizes refused at once, 10,001 too; a deadline keeps the old behaviour from
# hanging the test.
expect_exit 6 "-b 8 -e 1G -i 1" -- timeout 60 "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 8 -e 1G -i 1
expect_stderr_has "measures more than 10000 sizes" "the limit named"
expect_exit 6 "10,001 sizes" -- timeout 60 "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -d int8 -b 1 -e 10001 -i 1
expect_exit 0 "1,000 sizes by a step" -- timeout 120 "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -d int8 -b 1 -e 1000 -i 1 -n 1 -w 0 -c 0
check "1,000 size lines" test "$(grep -c '^ *[0-9]' "$TEST_TMP/out")" -eq 1000
finish
