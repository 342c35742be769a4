#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU check's steps without a GPU (tests/gpu/steps.sh, which check-on-gpu.sh sources): a step
# may be a program or one of its functions (bench), runs under its time limit (a hang costs that
# step only, said), and each is recorded with its exit code against the one wanted, the summary
# rewritten after each. A step that was a function once failed under timeout as "not found".
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
out=$TEST_TMP/gpu
mkdir -p "$out/logs"
steps=$out/steps.jsonl
: >"$steps"
ngpus=1
# steps that end get a limit no loaded machine reaches (under ASan, beside the rest of the suite,
# an MPI benchmark of one rank once took over 3 s); the one that hangs, a short one of its own
export TOPOTUNE_GPU_STEP_S=120
# shellcheck source=../gpu/steps.sh
. "$TOPOTUNE_SRC/tests/gpu/steps.sh"
step program 0 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 64 -T 20 >/dev/null
step function 0 bench fn "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 64 -T 20 >/dev/null
step function-env 0 bench fne env NCCL_DEBUG=WARN "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 64 -T 20 >/dev/null
step wrong-exit 0 "$TOPOTUNE_BENCH" --backend mpi -b 8 -e 64 -T 20 --no-such-flag >/dev/null
step_limit=3 # steps.sh's limit, read by each step
step hangs 0 sleep 60 >/dev/null
step_limit=$TOPOTUNE_GPU_STEP_S
step inner-timeout 0 timeout 1 sleep 60 >/dev/null # a limit inside the step: its own 124
untested no-second-gpu "one GPU: no pair to copy between" >/dev/null
check "summary: each step as it went" python3 - "$out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
by = {x["name"]: x for x in s["steps"]}
assert [x["name"] for x in s["steps"]] == ["program", "function", "function-env", "wrong-exit", "hangs", "inner-timeout"], s
assert by["program"]["ok"] and by["function"]["ok"] and by["function-env"]["ok"], s
assert not by["wrong-exit"]["ok"] and by["wrong-exit"]["detail"].startswith("exit 6, expected 0"), by["wrong-exit"]
assert not by["hangs"]["ok"] and "killed after 3 s" in by["hangs"]["detail"] and by["hangs"]["seconds"] < 30, by["hangs"]
assert by["inner-timeout"]["detail"].startswith("exit 124, expected 0"), by["inner-timeout"]
assert s["failed"] == ["wrong-exit", "hangs", "inner-timeout"], s
assert s["passed"] == 3 and [n["name"] for n in s["not_tested"]] == ["no-second-gpu"], s  # not a pass
PY
check "bench's events where the function puts them" test -s "$out/logs/fn.jsonl" -a -s "$out/logs/fne.jsonl"

# The device machine gives back 8 files of $OUT: with results set, summary.json and the whole
# folder as gpu-check.tgz are there after each step; past the check's deadline a step is said not
# run, and the summary stays whole.
results=$TEST_TMP/results
mkdir -p "$results"
packed_at=-100
deadline=1
steps_started=$((SECONDS - 5))
step late 0 true >/dev/null
check "past the deadline: not run, not passed" python3 - "$results/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
late = [n for n in s["not_tested"] if n["name"] == "late"]
assert late and "deadline" in late[0]["detail"] and "late" not in [x["name"] for x in s["steps"]], s
PY
check "every log in the archive" sh -c "tar -tzf '$results/gpu-check.tgz' | grep -q 'gpu/logs/fn.jsonl'"
finish
