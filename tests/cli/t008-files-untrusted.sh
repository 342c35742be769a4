#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 23: files in a reused output folder and inputs that are not regular files. A link, a hard
# link or a FIFO planted at a name a command writes (a run's log and events, results.jsonl, the
# benchmark's --json) never makes the tool write through it: the victim stays as it was. A FIFO
# where a command reads a profile, a sweep's pid file or a sim cluster's spec is refused at once
# (exit 2), never waited on; a link found inside a folder (results.jsonl, sweep.json, a spec) is
# refused with exit 2 too.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
specs="$TOPOTUNE_SRC/profiles/specs"
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_P2P_DISABLE": [null, "1"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}' >space.json
sweep() { "$TOPOTUNE" -q sweep --topology "$specs/rtx4090-8x-pcie.json" --space space.json "$@"; }
sweep --out clean || true
check "the clean sweep has its logs" test -n "$(ls clean/logs/*.log 2>/dev/null)"
echo "precious" >victim.txt

# 1. Links and hard links at every log and events name of the same sweep in a new folder.
for kind in sym hard; do
    mkdir -p "$kind/logs"
    for f in clean/logs/*.log clean/logs/*.jsonl; do
        if [ $kind = sym ]; then ln -s "$PWD/victim.txt" "$kind/logs/${f##*/}"; else ln victim.txt "$kind/logs/${f##*/}"; fi
    done
    timeout 120 "$TOPOTUNE" -q sweep --topology "$specs/rtx4090-8x-pcie.json" --space space.json \
        --out "$kind" >"$kind.out" 2>"$kind.err"
    check "$kind links: the victim is intact" test "$(cat victim.txt)" = precious
    check "$kind links: said why" grep -q "cannot write '$kind/logs/.*\.log': a \(symbolic link\|file with another name\)" "$kind.err"
done

# 2. results.jsonl a link: refused (bad input, exit 2), the victim untouched; so is sweep.json
#    on --resume, and gen on a sweep whose results.jsonl is a link.
mkdir res && ln -s "$PWD/victim.txt" res/results.jsonl
expect_exit 2 "sweep into a folder with a linked results.jsonl" -- sweep --out res
expect_stderr_has "a symbolic link" "results.jsonl: the link named"
check "results.jsonl: the victim is intact" test "$(cat victim.txt)" = precious
cp -r clean resumed && mv resumed/sweep.json real-sweep.json && ln -s "$PWD/real-sweep.json" resumed/sweep.json
expect_exit 2 "sweep --resume with a linked sweep.json" -- sweep --out resumed --resume
expect_stderr_has "sweep.json': a symbolic link" "sweep.json: the link named"
cp -r clean genlink && mv genlink/results.jsonl real-results.jsonl && ln -s "$PWD/real-results.jsonl" genlink/results.jsonl
expect_exit 2 "gen on a sweep with a linked results.jsonl" -- "$TOPOTUNE" gen --runs genlink --profiles p-link
expect_stderr_has "a symbolic link" "gen: the link named"

# 3. The benchmark's --json: not through a link, not into a FIFO.
ln -s "$PWD/victim.txt" bench-link.json
TOPOTUNE_TOPOLOGY=$specs/hgx-h100.json expect_exit 6 "topotune-bench --json LINK" -- timeout 20 \
    "$TOPOTUNE_BENCH" --backend sim -b 8 -e 8 -n 1 -w 0 --json bench-link.json
expect_stderr_has "cannot write 'bench-link.json': a symbolic link" "bench: the link named"
mkfifo bench-fifo.json
TOPOTUNE_TOPOLOGY=$specs/hgx-h100.json expect_exit 6 "topotune-bench --json FIFO" -- timeout 20 \
    "$TOPOTUNE_BENCH" --backend sim -b 8 -e 8 -n 1 -w 0 --json bench-fifo.json
check "bench: the victim is intact" test "$(cat victim.txt)" = precious

# 4. A FIFO where a profile is read: compare, verify, doctor --profile, profiles show.
expect_exit 0 "gen on the clean sweep" -- "$TOPOTUNE" gen --runs clean --profiles profiles
class=$(python3 -c 'import json; print(json.load(open("clean/sweep.json"))["class"])')
cp -r "profiles/$class/v1" fifo-profile && rm fifo-profile/profile.json && mkfifo fifo-profile/profile.json
for cmd in "compare fifo-profile" "verify fifo-profile --topology $specs/rtx4090-8x-pcie.json" \
    "doctor --input $specs/rtx4090-8x-pcie.json --profile fifo-profile"; do
    read -ra args <<<"$cmd"
    expect_exit 2 "${args[0]} with a FIFO profile.json" -- timeout 20 "$TOPOTUNE" "${args[@]}"
    expect_stderr_has "not a regular file" "${args[0]}: the FIFO named"
done
rm "profiles/$class/v1/profile.json" && mkfifo "profiles/$class/v1/profile.json"
expect_exit 2 "profiles show with a FIFO profile.json" -- timeout 20 "$TOPOTUNE" profiles \
    --profiles profiles show "$class" v1
expect_stderr_has "not a regular file" "profiles show: the FIFO named"

# 5. A FIFO sweep.pid: the resumed sweep goes on (the file ignored, said so), never hangs.
cp -r clean pidfifo && rm -f pidfifo/sweep.pid && mkfifo pidfifo/sweep.pid
expect_exit 0 "sweep --resume with a FIFO sweep.pid" -- timeout 60 "$TOPOTUNE" sweep \
    --topology "$specs/rtx4090-8x-pcie.json" --space space.json --out pidfifo --resume
expect_stderr_has "sweep.pid': not a regular file" "sweep.pid: the FIFO named"

# 6. A sim cluster's spec next to it: a FIFO or a link is refused, never waited on or followed.
mkdir cl && mkfifo cl/fifo.json && ln -s "$specs/hgx-h100.json" cl/link.json
for spec in fifo link; do
    printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "%s.json", "count": 2}]}\n' $spec >"cl/$spec-cluster.json"
    expect_exit 2 "survey: a $spec spec" -- timeout 20 "$TOPOTUNE" survey --backend sim \
        --cluster "cl/$spec-cluster.json" --out "cl/$spec-out"
done
expect_stderr_has "'link.json' next to the file: a symbolic link" "survey: the linked spec named"
# 7. A hard link at the lock file or at a results.jsonl with a torn line to repair: never cut.
cp -r clean locked && rm -f locked/.lock && ln victim.txt locked/.lock
expect_exit 1 "sweep --resume with a hard-linked .lock" -- sweep --out locked --resume
expect_stderr_has "cannot open or lock 'locked/.lock'" "the lock refused"
cp victim.txt torn-victim.txt && printf '{"torn' >>torn-victim.txt
cp -r clean torn && rm torn/results.jsonl && ln torn-victim.txt torn/results.jsonl
sweep --out torn --resume >/dev/null 2>&1
check "a hard-linked results.jsonl is not repaired" grep -q torn torn-victim.txt
check "nothing was written anywhere through the links" test "$(cat victim.txt)" = precious
# An output option naming the command's own input replaced it (the log by its workload, a spec by
# its map, the space by Prometheus text); --metrics was checked only after the whole sweep.
printf 'h:1:2 [0] NCCL INFO AllReduce: opCount 0 count 1 datatype 0 [nranks=2]\n' >job.log
cp "$specs/hgx-h100.json" spec.json
cp space.json space.keep
for args in "workload --from-nccl-log job.log --out job.log" "topo --input spec.json --json spec.json" \
    "topo --input spec.json --nccl-xml spec.json" "doctor --input spec.json --json spec.json"; do
    read -r -a words <<<"$args"
    expect_exit 2 "$args" -- "$TOPOTUNE" "${words[@]}"
done
check "the log kept" grep -q "NCCL INFO AllReduce" job.log
check "the spec kept" cmp -s spec.json "$specs/hgx-h100.json"
ln -s "$TEST_TMP/victim.txt" metrics-link.prom
for m in space.json metrics-link.prom /nonexistent-dir/x.prom; do
    expect_exit 2 "sweep --metrics $m, refused before any run" -- sweep --out "m-$(basename "$m")" --metrics "$m"
    expect_no_file "m-$(basename "$m")" "no run made"
done
check "the space kept" cmp -s space.json space.keep
# ... nor the sweep's own journal under --out, nor doctor --json the profile.json it reads
expect_exit 2 "sweep --metrics inside --out" -- sweep --out clean --resume --metrics clean/results.jsonl
check "the journal kept" grep -q '"config_id"' clean/results.jsonl
mkdir -p dprof && printf '{"schema": "topotune/profile/1", "class": "x", "variables": []}\n' >dprof/profile.json
cp dprof/profile.json dprof.keep
expect_exit 2 "doctor --json the profile's file" -- "$TOPOTUNE" doctor --input spec.json --profile dprof \
    --json dprof/profile.json
check "the profile kept" cmp -s dprof/profile.json dprof.keep
# the hardware read through TOPOTUNE_TOPOLOGY is doctor's input too: the report replaced it
expect_exit 2 "doctor --json the TOPOTUNE_TOPOLOGY file" -- env TOPOTUNE_TOPOLOGY=spec.json "$TOPOTUNE" doctor \
    --json spec.json
check "the spec kept" cmp -s spec.json "$specs/hgx-h100.json"
# a profile given without --profile was ignored: doctor ran without it, exit 0
expect_exit 2 "doctor PROFILE, without --profile" -- "$TOPOTUNE" doctor --input spec.json dprof
expect_stderr_has "unexpected argument 'dprof'" "it names the argument"

# An empty file is said as such: three loaders handed jansson its NULL buffer and printed
# "line -1: wrong arguments".
: >empty.json
expect_exit 2 "an empty workload" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" --workload empty.json
expect_stderr_has "empty.json: the file is empty: a workload is a JSON object" "it says so"
expect_exit 2 "an empty calibration" -- "$TOPOTUNE" predict --input "$specs/hgx-h100.json" \
    --calibration empty.json
expect_stderr_has "empty.json: the file is empty: a calibration is" "it says so"
expect_exit 2 "an empty space" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" --space empty.json
expect_stderr_has "document: the file is empty: a space is a JSON object" "it says so"
finish
