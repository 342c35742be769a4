#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmark's failure paths on real ranks: corrupted results (exit 7), a stalled rank under
# -T at a size and before the first exchange (exit 4, stage named), no GPU for the nccl backend
# (exit 2, fast), bad usage (exit 6, the real range named), a run that would measure nothing
# (exit 6), host memory that cannot be had (exit 1, nccl-tests' internal error, not 3: MPI and
# NCCL did nothing wrong).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

expect_exit 7 "corrupted rank" -- \
    mpirun_np 2 TOPOTUNE_BENCH_TEST_CORRUPT=1 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 1K -f 2 -n 2 --json "$TEST_TMP/c.json"
check "corruption counted" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-1]["outcome"] == "wrong" and ev[-1]["wrong"] > 0
assert all(e["wrong"] > 0 for e in ev if e["event"] == "size")' "$TEST_TMP/c.json"
check "table says FAILED" grep -q "Out of bounds values : [1-9][0-9]* FAILED" "$TEST_TMP/out"

start=$(date +%s)
expect_exit 4 "stalled rank under -T 2" -- \
    mpirun_np 2 TOPOTUNE_BENCH_TEST_STALL=1 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 1K -f 2 -n 2 -T 2 --json "$TEST_TMP/t.json"
elapsed=$(($(date +%s) - start))
check "timeout fires within 15 s (took ${elapsed}s)" test "$elapsed" -lt 15
expect_stderr_has "stage size:8" "the stage is named"
check "timeout events" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-2]["event"] == "error" and ev[-2]["stage"] == "size:8"
assert ev[-1]["outcome"] == "timeout" and ev[-1]["exit_code"] == 4' "$TEST_TMP/t.json"

# A rank that never reaches the first exchange (a peer that cannot be reached): the others' -T
# watchdog ends the run at stage init, with its error and end events.
start=$(date +%s)
expect_exit 4 "a rank stalled before the first exchange, under -T 2" -- timeout 60 bash -c \
    "$(declare -f mpirun_np); mpirun_np 2 TOPOTUNE_BENCH_TEST_STALL_INIT=1 '$TOPOTUNE_BENCH' --backend mpi -b 8 -e 1K -f 2 -n 2 -T 2 --json '$TEST_TMP/i.json'"
elapsed=$(($(date +%s) - start))
check "timeout fires within 15 s (took ${elapsed}s)" test "$elapsed" -lt 15
expect_stderr_has "no progress for 2 s in stage init" "the stage is named"
check "timeout events at stage init" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-2]["event"] == "error" and ev[-2]["stage"] == "init", ev
assert ev[-1]["outcome"] == "timeout" and ev[-1]["exit_code"] == 4, ev' "$TEST_TMP/i.json"

# (CUDA_VISIBLE_DEVICES hides any GPU this machine has: the test means the same with one)
start=$(date +%s)
expect_exit 2 "nccl backend without a GPU" -- env CUDA_VISIBLE_DEVICES= "$TOPOTUNE_BENCH" --backend nccl -b 8 -e 1M
elapsed=$(($(date +%s) - start))
# promptly: a hang would wait for NCCL's own timeouts (minutes); a sanitized MPI start-up on a
# loaded machine once took 5 s
check "nccl backend fails promptly (took ${elapsed}s)" test "$elapsed" -lt "$(scaled 15)"
expect_stderr_has "no GPU visible" "the message says so"

# An output file that cannot be opened stops every rank, none waits for the others.
start=$(date +%s)
expect_exit 6 "unwritable --json under mpirun" -- timeout 60 bash -c "$(declare -f mpirun_np); mpirun_np 2 '$TOPOTUNE_BENCH' --backend mpi -b 8 -e 8 --json /nonexistent/dir/x.json"
check "no hang on an unwritable --json (took $(($(date +%s) - start))s)" test $(($(date +%s) - start)) -lt 30

# topotune bench speaks topotune's exit codes: usage 2, no GPU 3.
expect_exit 2 "topotune bench with a bad flag" -- "$TOPOTUNE" bench -b foo
if [ ! -e /dev/nvidia0 ]; then
    expect_exit 3 "topotune bench without a GPU" -- "$TOPOTUNE" bench -b 8 -e 8
fi

# Bad usage: exit 6, the flag named.
for args in "-b 1X:-b" "-b 8 -e 4:-e" "-d quad:-d" "-n 0:-n" "-o mulsum:-o" "-T x:-T" "--backend tcp:--backend"; do
    flags=${args%%:*}
    named=${args##*:}
    # shellcheck disable=SC2086
    expect_exit 6 "bad flags '$flags'" -- "$TOPOTUNE_BENCH" --backend mpi $flags
    expect_stderr_has "$named" "'$flags' names $named"
done
expect_exit 6 "-g 10000" -- "$TOPOTUNE_BENCH" --backend nccl -g 10000
expect_stderr_has "for -g (--ngpus): expected a whole number from 1 to 1024" "-g names its range"
expect_exit 6 "-n past its range" -- "$TOPOTUNE_BENCH" --backend mpi -n 2000000000
expect_stderr_has "from 1 to 1000000000" "-n names its range"
expect_exit 6 "-b 3 -e 7 measures nothing" -- "$TOPOTUNE_BENCH" --backend mpi -b 3 -e 7
expect_stderr_has "measures nothing: no size holds one float element (4 bytes); give -b at least 4" \
    "the empty range is explained"
expect_exit 6 "-b 1 -e 7 -d double" -- "$TOPOTUNE_BENCH" --backend mpi -b 1 -e 7 -f 2 -d double
expect_stderr_has "give -b and -e at least 8" "the fix for a range below one element"
# An allocation larger than any address space fails at once (ASan returns NULL as malloc does).
for backend in mpi nccl; do
    # (-f 2: by the default -i 1M, 8 B to 900000G would be more sizes than a run measures)
    expect_exit 1 "$backend: host memory for -e 900000G" -- env \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1" \
        "$TOPOTUNE_BENCH" --backend $backend -b 8 -e 900000G -f 2 -w 0 -n 1 -c 0 --json "$TEST_TMP/mem-$backend.json"
    expect_stderr_has "cannot allocate" "$backend: the allocation is named"
    expect_stderr_has "give a smaller -e" "$backend: the fix is named"
    check "$backend: the end event says exit 1" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev[-1]["event"] == "end" and ev[-1]["exit_code"] == 1, ev' "$TEST_TMP/mem-$backend.json"
done
expect_exit 6 "half with mpi" -- "$TOPOTUNE_BENCH" --backend mpi -d half
expect_stderr_has "half" "unsupported dtype named"
expect_exit 6 "avg with mpi" -- "$TOPOTUNE_BENCH" --backend mpi -o avg
expect_stderr_has "avg" "unsupported op named"
expect_exit 6 "sim without a topology" -- "$TOPOTUNE_BENCH" --backend sim
expect_stderr_has "--topology" "sim names the missing flag"
expect_exit 6 "--topology without sim" -- "$TOPOTUNE_BENCH" --backend mpi --topology x.json
expect_stderr_has "--backend sim" "the flag's backend is named"
expect_exit 0 "--help" -- "$TOPOTUNE_BENCH" --help
check "--help lists -T" grep -q -- "--timeout" "$TEST_TMP/out"
finish
