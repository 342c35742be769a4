# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# The GPU check's steps (sourced by check-on-gpu.sh; tests/cli/t121-gpu-check-steps.sh tries them
# without a GPU): each step's exit code against the one wanted, under a time limit, recorded
# (name, ok, detail, seconds) in $steps and summed up in $out/summary.json after each.
# Needs: out (the results folder, with logs/), steps (its steps.jsonl), ngpus; results, when set,
# is the folder the device machine gives back ($OUT: at most 8 files come back), which gets
# summary.json and gpu-check.tgz (the whole of out) after each step, so that a run cut short at
# its limit still brings them.
# shellcheck disable=SC2154 # those three are the caller's
# One step's limit: a hang costs that step, not the whole device budget.
step_limit=${TOPOTUNE_GPU_STEP_S:-240}
# The whole check's: a step that would start after it is said not run (0: none), so that the
# machine's time limit never cuts the summary.
deadline=${TOPOTUNE_GPU_DEADLINE_S:-0}
steps_started=$SECONDS
packed_at=-100

# pack: summary.json and gpu-check.tgz into results (the archive at most every 20 s, or now when
# packed_at is reset), each written beside and renamed: a kill leaves the last whole one.
pack() {
    [ -n "${results:-}" ] || return 0
    cp "$out/summary.json" "$results/summary.json.tmp" 2>/dev/null &&
        mv -f "$results/summary.json.tmp" "$results/summary.json"
    if [ $((SECONDS - packed_at)) -ge 20 ]; then
        tar -czf "$results/gpu-check.tgz.tmp" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null &&
            mv -f "$results/gpu-check.tgz.tmp" "$results/gpu-check.tgz"
        packed_at=$SECONDS
    fi
}

# summary: $OUT/summary.json from the steps so far (written after each, so that a run cut short
# by its deadline leaves one); exits 1 when a step failed.
summary() {
    python3 - "$steps" "$out/summary.json" "$ngpus" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
steps = [s for s in lines if not s.get("note")]
failed = [s["name"] for s in steps if not s["ok"]]
notes = [s for s in lines if s.get("note")]  # what was not tested: neither passed nor failed
summary = {"gpus": int(sys.argv[3]), "steps": steps, "passed": len(steps) - len(failed), "failed": failed,
           "not_tested": notes}
json.dump(summary, open(sys.argv[2], "w"), indent=1)
print(f"{len(steps) - len(failed)} passed, {len(failed)} failed, {len(notes)} not tested")
sys.exit(1 if failed else 0)
PY
    local rc=$?
    pack
    return $rc
}

# record NAME OK DETAIL SECONDS: one line of the summary.
record() {
    python3 -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "ok": sys.argv[2] == "1", "detail": sys.argv[3], "seconds": float(sys.argv[4])}))' \
        "$1" "$2" "$3" "$4" >>"$steps"
    printf '%-34s %s  %s\n' "$1" "$([ "$2" = 1 ] && echo ok || echo FAILED)" "$3"
    summary >/dev/null
}

# untested NAME DETAIL: what this machine cannot exercise, said in the summary apart from the
# steps (neither passed nor failed).
untested() {
    python3 -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "note": True, "detail": sys.argv[2]}))' \
        "$1" "$2" >>"$steps"
    printf '%-34s %s  %s\n' "$1" "not tested" "$2"
    summary >/dev/null
}

# step NAME WANT_EXIT COMMAND...: runs COMMAND (output to logs/NAME.log), checks its exit code;
# past the deadline, says it was not run.
step() {
    local name=$1 want=$2 start rc
    shift 2
    if [ "$deadline" -gt 0 ] && [ $((SECONDS - steps_started)) -ge "$deadline" ]; then
        untested "$name" "not run: the check's deadline (TOPOTUNE_GPU_DEADLINE_S=$deadline) had passed"
        return 0
    fi
    start=$(date +%s.%N)
    # through bash: timeout runs programs, and a step may be a function of this script (bench)
    timeout -k 10 "$step_limit" bash -c '"$@"' _ "$@" >"$out/logs/$name.log" 2>&1
    rc=$?
    local took
    took=$(python3 -c "import sys; print(round($(date +%s.%N) - $start, 2))")
    # the step's own limit ran out (124, or 137 after -k): not a timeout inside the step
    if { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && [ "$rc" -ne "$want" ] &&
        python3 -c "import sys; sys.exit(0 if $took >= $step_limit else 1)"; then
        record "$name" 0 "killed after ${step_limit} s (TOPOTUNE_GPU_STEP_S)" "$took"
    elif [ "$rc" -eq "$want" ]; then record "$name" 1 "exit $rc" "$took"; else
        record "$name" 0 "exit $rc, expected $want: $(tail -n 2 "$out/logs/$name.log" | tr '\n' ' ' | cut -c1-300)" "$took"
    fi
    return 0
}

# verify NAME PYTHON-CHECK ARGS...: a check on files already written, recorded like a step.
verify() {
    local name=$1 code=$2 msg
    shift 2
    if msg=$(python3 -c "$code" "$@" 2>&1); then record "$name" 1 "${msg:-ok}" 0; else
        record "$name" 0 "$(echo "$msg" | tail -n 3 | tr '\n' ' ' | cut -c1-300)" 0
    fi
}

# bench NAME ARGS...: topotune-bench with NCCL's log, its events to logs/NAME.jsonl.
bench() {
    local name=$1
    shift
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$out/logs/$name.nccl.%h.%p.log" \
        "$@" --json "$out/logs/$name.jsonl"
}
export -f bench # a step runs it in a child bash (under timeout)
export out
