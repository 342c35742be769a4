#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Supervision with misbehaving children: one that ignores SIGTERM, one that leaves grandchildren
# (one in its own session), one that crashes; a launcher that does not exist; a full disk.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# A space sets only the variables the tool tunes (util_env_refused): the mode travels as
# NCCL_FAKE_MODE, which this wrapper hands to fake-bench.sh; FAKE_PIDS is inherited. In mode
# nccl-log it also keeps the NCCL_DEBUG* environment it was given in $FAKE_PIDS.env.
fake=$TEST_TMP/fake-bench
# shellcheck disable=SC2016 # the wrapper's line, expanded when it runs
fake_bench "$fake" space \
    '[ "${NCCL_FAKE_MODE:-}" = nccl-log ] && env | grep "^NCCL_DEBUG" | sort >"$FAKE_PIDS.env"'
export FAKE_PIDS=$TEST_TMP/pids
pids=$FAKE_PIDS
: >"$pids"
cat >"$TEST_TMP/space.json" <<JSON
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["ignore-term", "grandchild", "crash", "no-json"]},
 "repeat": 1, "timeout_s": 1}
JSON

start=$(date +%s)
expect_exit 0 "sweep of misbehaving children" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/sweep"
took=$(($(date +%s) - start))
check "over in bounded time (${took}s)" test "$took" -lt 30
check "outcomes classified" python3 - "$TEST_TMP/sweep/results.jsonl" <<'PY'
import json, sys
runs = {tuple(sorted(r["env"].items())): r for r in map(json.loads, open(sys.argv[1]))}
mode = lambda m: runs[(("NCCL_FAKE_MODE", m),)] if m else runs[()]
assert mode(None)["outcome"] == "ok", mode(None)
assert mode("ignore-term")["outcome"] == "timeout", mode("ignore-term")
assert mode("ignore-term")["wall_s"] < mode("ignore-term")["deadline_s"] + 5
assert mode("grandchild")["outcome"] == "ok", mode("grandchild")  # it exits 0; its children are ours to end
assert mode("crash")["outcome"] == "crash" and mode("crash")["signal"] == "SIGSEGV", mode("crash")
assert mode("no-json")["outcome"] == "error" and mode("no-json")["stage"] == "results-missing", mode("no-json")
PY
check "grandchildren were recorded" test -s "$pids"

# A child printing for ever filled its log at hundreds of MB a second until its deadline (over
# 1 TB in the 960 s of a default run): no file a child writes grows past the cap, the writer gets
# SIGXFSZ and the run is a crash (the cap lowered to 256 KiB here, as only a test may).
sed 's/"ignore-term", "grandchild", "crash", "no-json"/"flood"/; s/"timeout_s": 1/"timeout_s": 20/' \
    "$TEST_TMP/space.json" >"$TEST_TMP/flood.json"
expect_exit 0 "sweep of a child that prints for ever" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    TOPOTUNE_CHILD_MAX_FILE_BYTES=262144 "$TOPOTUNE" sweep --space "$TEST_TMP/flood.json" \
    --out "$TEST_TMP/flood"
check "stopped at the cap: a crash by SIGXFSZ, its log 256 KiB" python3 - "$TEST_TMP/flood" <<'PY'
import json, os, sys
(r,) = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl") if "NCCL_FAKE_MODE" in l]
assert (r["outcome"], r["signal"]) == ("crash", "SIGXFSZ"), r
assert r["wall_s"] < 15, r
assert os.path.getsize(os.path.join(sys.argv[1], r["log"])) <= 262144, r["log"]
PY
alive=0
while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done <"$pids"
check "no grandchild outlives the sweep ($alive alive)" test "$alive" -eq 0
# Only this sweep's benchmarks (their --json is under its folder): other tests run beside it.
check "no fake bench left running" bash -c "! pgrep -f -- 'json=$TEST_TMP/[s]weep/' >/dev/null"

# nccl backend: every run gets NCCL's debug variables; a variable NCCL did not report as
# applied is flagged.
cat >"$TEST_TMP/nccl-space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "nccl", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_PROTO": ["Simple"]}, "fixed": {"NCCL_ALGO": "Ring", "NCCL_FAKE_MODE": "nccl-log"},
 "repeat": 1, "timeout_s": 5}
JSON
expect_exit 0 "nccl sweep (fake)" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space "$TEST_TMP/nccl-space.json" --out "$TEST_TMP/nccl"
check "debug variables set, unapplied variable flagged" python3 - "$TEST_TMP/nccl/results.jsonl" "$pids.env" <<'PY'
import json, sys
runs = {json.dumps(r["env"], sort_keys=True): r for r in map(json.loads, open(sys.argv[1]))}
r = runs[json.dumps({"NCCL_PROTO": "Simple"})]
env = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]))
assert env["NCCL_DEBUG"] == "INFO" and env["NCCL_DEBUG_SUBSYS"] == "INIT,ENV,TUNING", env
assert env["NCCL_DEBUG_FILE"].endswith(".nccl.%h.%p.log"), env
# the fake reports them in its algo field, which is not an algorithm's name: not recorded
assert r["sizes"][0]["algo"] is None, r["sizes"]
assert r["not_applied"] == ["NCCL_PROTO"], r["not_applied"]
assert r["effective_env"] == {"NCCL_ALGO": "Ring"}
PY

# A launcher that does not exist: launch-failed, not a started run that failed.
expect_exit 1 "missing program" -- env TOPOTUNE_BENCH_PROGRAM=/nonexistent/topotune-bench \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/missing"
check "launch-failed" python3 -c '
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert runs and all(r["outcome"] == "launch-failed" for r in runs), runs
assert "No such file" in runs[0]["stderr_tail"]' "$TEST_TMP/missing/results.jsonl"
# mpirun (or srun) not on PATH: refused before the first run (exit 3, the fix named); every run
# was launch-failed, the whole space tried, exit 1.
mkdir -p "$TEST_TMP/nompi"
expect_exit 3 "--launcher mpirun without mpirun" -- env PATH="$TEST_TMP/nompi" \
    "$TOPOTUNE" sweep --launcher mpirun --space "$TEST_TMP/space.json" --out "$TEST_TMP/nompi/sweep"
expect_stderr_has "mpirun not found: install Open MPI" "said once, with the fix"
check "nothing swept" test ! -e "$TEST_TMP/nompi/sweep/results.jsonl"
expect_exit 3 "--launcher srun without srun" -- env PATH="$TEST_TMP/nompi" \
    "$TOPOTUNE" sweep --launcher srun --space "$TEST_TMP/space.json" --out "$TEST_TMP/nompi/sweep"
expect_stderr_has "srun not found on PATH" "said"

# A full disk for the results file: the sweep directory on a tmpfs, filled once sweep.json is
# there (a first sweep wrote it; results.jsonl, never a symlink, is removed), then --resume: the
# sweep stops with an error naming the file, and the file holds no torn line.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p "$TEST_TMP/fullsweep"
    printf '{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["no-json"]}, "repeat": 1, "timeout_s": 1}\n' >"$TEST_TMP/full.json"
    expect_exit 1 "full disk" -- unshare -m bash -c "
        mount -t tmpfs -o size=64k tmpfs '$TEST_TMP/fullsweep' || exit 8
        export TOPOTUNE_BENCH_PROGRAM='$fake'
        '$TOPOTUNE' -q sweep --space '$TEST_TMP/full.json' --out '$TEST_TMP/fullsweep' 2>/dev/null
        test -s '$TEST_TMP/fullsweep/sweep.json' || exit 10
        rm -f '$TEST_TMP/fullsweep/results.jsonl'
        head -c 1M /dev/zero > '$TEST_TMP/fullsweep/filler' 2>/dev/null
        '$TOPOTUNE' sweep --space '$TEST_TMP/full.json' --out '$TEST_TMP/fullsweep' --resume
        rc=\$?
        test ! -s '$TEST_TMP/fullsweep/results.jsonl' || exit 9
        exit \$rc"
    expect_stderr_has "cannot append to" "the full disk is reported"
else
    echo "skipped: the full-disk check needs root and mount namespaces"
fi

# A run whose process SIGKILL does not end (asleep in the GPU driver; a write to a frozen file
# system here): the sweep goes on, and says the runs after it may find its GPUs held (they were
# measured, or failed, with nothing said).
if frozen_dir; then
    printf '#!/bin/sh\nsh -c "echo x >%s/run" &\nexec sleep 1000\n' "$FROZEN" >"$TEST_TMP/stuck-bench"
    chmod +x "$TEST_TMP/stuck-bench"
    printf '{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": [null]}, "repeat": 1, "timeout_s": 1}\n' >"$TEST_TMP/stuck.json"
    expect_exit 1 "a sweep whose only run leaves a process SIGKILL does not end (none ran well)" -- timeout 120 env \
        TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/stuck-bench" "$TOPOTUNE" sweep --space "$TEST_TMP/stuck.json" \
        --out "$TEST_TMP/stuck-sweep" --no-cures
    expect_stderr_has "left processes SIGKILL had not ended" "said"
    thaw_dir
fi
finish
