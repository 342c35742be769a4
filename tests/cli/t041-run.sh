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
# the command it names runs as written (it named the default root and "CLASS")
show=$(sed -n "s/.*; '\(topotune profiles .*\)' explains it\$/\1/p" "$TEST_TMP/out")
check "it names this root and class: $show" test "$show" = "topotune profiles --profiles '$TEST_TMP/profiles' show '$class'"
expect_exit 0 "that command" -- bash -c "${show/topotune/\"\$TOPOTUNE\"}"
# run chooses the sweep's options itself, so continuing one is run's too: interrupted, it named
# 'topotune sweep --resume' "with the same options" (which it had chosen and not shown: strategy,
# ranks, space), and run had no --resume.
printf '%s\n' '{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "64"},
 "vars": {"OMPI_MCA_coll_tuned_use_dynamic_rules": [null, "1"]}, "repeat": 2, "timeout_s": 20}' >slow.json
fake_bench "$TEST_TMP/slow-bench" ok 'sleep 1'
TOPOTUNE_BENCH_PROGRAM=$TEST_TMP/slow-bench "$TOPOTUNE" run --backend mpi --space slow.json \
    --profiles "$TEST_TMP/p2" --out "$TEST_TMP/cut" >run.out 2>run.err &
run_pid=$!
for _ in $(seq 100); do [ -s "$TEST_TMP/cut/results.jsonl" ] && break; sleep 0.1; done
kill -INT "$run_pid"
wait "$run_pid"
check "interrupted: run names its own command to continue" \
    grep -qF "continue with: topotune run --resume --out '$TEST_TMP/cut' --backend mpi --space 'slow.json' --profiles '$TEST_TMP/p2'" run.err
# the command as printed (the backend in it: with GPUs visible run would choose nccl)
expect_exit 0 "topotune run --resume" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/slow-bench" \
    "$TOPOTUNE" run --resume --out "$TEST_TMP/cut" --backend mpi --space slow.json --profiles "$TEST_TMP/p2"
expect_stderr_has "already in" "the finished runs kept"
check "and its profile written" grep -q "profile written under" "$TEST_TMP/out"
# A run in which every benchmark crashed wrote a profile that recommends nothing and pointed
# latest, which launch scripts and check read, at it: kept as evidence, latest stays on v1.
fake_bench "$TEST_TMP/crash-bench" crash
expect_exit 1 "a run whose every benchmark crashes" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/crash-bench" \
    "$TOPOTUNE" run --backend mpi --space slow.json --profiles "$TEST_TMP/p2" --out "$TEST_TMP/crashed"
class2=$(basename "$(ls -d "$TEST_TMP"/p2/*/)")
check "its profile written, as v2" test -s "$TEST_TMP/p2/$class2/v2/profile.json"
check "latest still names v1" test "$(readlink "$TEST_TMP/p2/$class2/latest")" = v1
expect_stderr_has "no run ended ok: 'latest' stays on v1" "and says so"
check "the index says v1 too" python3 -c 'import json, sys
assert json.load(open(sys.argv[1]))["classes"][sys.argv[2]]["latest"] == 1' "$TEST_TMP/p2/index.json" "$class2"
expect_exit 0 "profiles list" -- "$TOPOTUNE" profiles --profiles "$TEST_TMP/p2" list
check "v1 with v1's summary, not v2's" sh -c "grep -q ' v1 (2 versions) ' '$TEST_TMP/out' &&
    ! grep -q 'nothing to recommend' '$TEST_TMP/out'"
# diff by default compares latest with the version before it: latest v1 was "the only one"
expect_exit 2 "profiles diff, latest v1 and a newer v2" -- "$TOPOTUNE" profiles --profiles "$TEST_TMP/p2" diff "$class2"
expect_stderr_has "latest is v1, its first; v2 is newer" "it names the newer version"
# the index is written over every class: another class's planted latest printed an error line
# from a gen that succeeded
mkdir -p "$TEST_TMP/p2/other-class/v1" && ln -s /tmp "$TEST_TMP/p2/other-class/latest"
expect_exit 0 "gen beside another class's planted latest" -- "$TOPOTUNE" gen --runs "$TEST_TMP/cut" \
    --profiles "$TEST_TMP/p2"
check "no error said of the other class" sh -c "! grep -q 'error' '$TEST_TMP/err'"
# The GPUs this process may use: NVML (here, a topology standing for this node) lists 8, but
# CUDA_VISIBLE_DEVICES hides them all; run swept nccl with 8 ranks, every run an error.
expect_exit 1 "8 GPUs, none visible" -- env TOPOTUNE_TOPOLOGY="$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" \
    CUDA_VISIBLE_DEVICES= TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/crash-bench" "$TOPOTUNE" run --space slow.json \
    --profiles "$TEST_TMP/p3" --out "$TEST_TMP/hidden"
expect_stderr_has "this machine: 0 GPU(s) visible (CUDA_VISIBLE_DEVICES)" "it counts the visible ones"
expect_stderr_has "no GPU visible: measuring MPI_Allreduce" "and measures MPI"
# bad input is refused before the sweep (exit 2): --profiles naming a file failed after it had run
# (exit 1), and a TOPOTUNE_TOPOLOGY that cannot be read was the environment's (exit 3)
touch afile
expect_exit 2 "--profiles naming a file" -- "$TOPOTUNE" run --profiles afile --out "$TEST_TMP/never"
expect_no_file "$TEST_TMP/never" "no sweep run"
expect_exit 2 "TOPOTUNE_TOPOLOGY not there" -- env TOPOTUNE_TOPOLOGY=/nonexistent "$TOPOTUNE" run --out "$TEST_TMP/never"
if [ ! -e /dev/nvidia0 ]; then
    # no GPU here, whatever CUDA_VISIBLE_DEVICES names (a CI runner's "0")
    expect_exit 3 "--backend nccl without a GPU, CUDA_VISIBLE_DEVICES=0,1" -- env CUDA_VISIBLE_DEVICES=0,1 \
        "$TOPOTUNE" run --backend nccl --out "$TEST_TMP/nogpu2"
    expect_exit 3 "--backend nccl without a GPU" -- "$TOPOTUNE" run --backend nccl --out "$TEST_TMP/nogpu"
    expect_stderr_has "--backend nccl: no GPU visible here" "said, not a --np of 0"
fi
finish
