#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 23: state planted in folders the tool reuses. A sweep.pid naming another session makes a
# resumed sweep end only processes that carry this folder's run marker: an unrelated process of
# that session survives, a leftover run of this folder does not. Version directories a gen never
# writes (an empty v1999999999, v2147483647) neither hang nor overflow the next gen: they are
# ignored with a warning. A sim cluster file with keys its schema does not allow is refused.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
specs="$TOPOTUNE_SRC/profiles/specs"
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_P2P_DISABLE": [null, "1"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}' >space.json
sweep() { "$TOPOTUNE" sweep --topology "$specs/rtx4090-8x-pcie.json" --space space.json "$@"; }
sweep -q --out s >/dev/null 2>&1 || true
check "the sweep was made" test -s s/results.jsonl

# 1. sweep.pid names the session of an unrelated process (setsid: its own session): it survives.
# (a background job of a script is no group leader: setsid execs in place, $! is the sleep)
setsid sleep 307 &
victim=$!
# until_exec PID TEXT: waits (at most 30 s, whatever the load) until PID's command line is TEXT
until_exec() {
    local _
    for _ in $(seq 300); do
        [ "$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)" = "$2 " ] && return 0
        sleep 0.1
    done
    return 1
}
until_exec "$victim" "sleep 307"
check "an unrelated process in a session of its own" test "$(ps -o sid= -p "$victim" | tr -d ' ')" = "$victim"
printf '%s %s\n' "$victim" "$victim" >s/sweep.pid
expect_exit 0 "resume with a planted sweep.pid" -- timeout 60 "$TOPOTUNE" sweep \
    --topology "$specs/rtx4090-8x-pcie.json" --space space.json --out s --resume
check "the unrelated process survived" kill -0 "$victim"
kill "$victim" 2>/dev/null

# ... while a leftover run of this folder (its marker in its environment) is ended.
marker="TOPOTUNE_SWEEP_RUN=$(stat -c '%d:%i' s)"
setsid env "$marker" sleep 311 &
left=$!
check "the leftover run started" until_exec "$left" "sleep 311"
printf '%s %s\n' "$left" "$left" >s/sweep.pid
expect_exit 0 "resume after a leftover run" -- sweep --out s --resume
expect_stderr_has "left 1 process of its last run" "the leftover was named"
sleep 0.2
check "the leftover run was ended" bash -c "! kill -0 $left 2>/dev/null || [ \"\$(ps -o stat= -p $left)\" = Z ]"

# 2. Version directories gen never writes: no hang, no overflow, a warning, v1 next to them.
class=$(python3 -c 'import json; print(json.load(open("s/sweep.json"))["class"])')
mkdir -p "p/$class/v1999999999" "p/$class/v2147483647" "p/$class/v99999999999999999999"
expect_exit 0 "gen next to absurd versions" -- timeout 60 "$TOPOTUNE" gen --runs s --profiles p
expect_stderr_has "v1999999999': not a version gen writes" "the absurd version named"
check "v1 written" test -s "p/$class/v1/profile.json" -a "$(readlink "p/$class/latest")" = v1
check "the index lists v1 alone" python3 - "p/index.json" "$class" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["classes"][sys.argv[2]]
assert c["latest"] == 1 and [v["version"] for v in c["versions"]] == [1], c
PY
expect_exit 0 "profiles list" -- timeout 20 "$TOPOTUNE" profiles --profiles p list
expect_exit 2 "profiles show v2147483648" -- "$TOPOTUNE" profiles --profiles p show "$class" v2147483648
expect_stderr_has "invalid version 'v2147483648'" "profiles: the version range named"

# 2b. A latest that is not gen's link to a version: a link to a folder elsewhere, whose profile
# every reader then took (profiles show, compare); a folder; and index.json as a link. gen kept
# the first ("unchanged"), wrote v1 then failed on the second, and wrote a version before failing
# on the index. Each is refused before anything is written, and no reader takes it.
mkdir -p elsewhere && cp "p/$class/v1/profile.json" elsewhere/
cp -r p planted-latest && ln -sfn "$TEST_TMP/elsewhere" "planted-latest/$class/latest"
cp -r p folder-latest && rm "folder-latest/$class/latest" && mkdir "folder-latest/$class/latest"
for store in planted-latest folder-latest; do
    expect_exit 2 "gen: $store" -- "$TOPOTUNE" gen --runs s --profiles "$store"
    expect_stderr_has "is not gen's link to a version beside it" "said"
    expect_exit 2 "profiles show: $store" -- "$TOPOTUNE" profiles --profiles "$store" show "$class"
    expect_exit 2 "compare: $store" -- "$TOPOTUNE" compare "$store"
done
expect_exit 2 "compare CLASS: a planted latest" -- "$TOPOTUNE" compare "planted-latest/$class"
# removed as the message says, gen points it again even with nothing new to write
rm "planted-latest/$class/latest"
expect_exit 0 "gen after the planted latest is removed" -- "$TOPOTUNE" gen --runs s --profiles planted-latest
check "latest points at v1 again" test "$(readlink "planted-latest/$class/latest")" = v1
check "nothing new written" test "$(ls "folder-latest/$class")" = "latest
v1
v1999999999
v2147483647
v99999999999999999999"
mkdir -p linked-index && echo secret >secret.txt && ln -s "$TEST_TMP/secret.txt" linked-index/index.json
expect_exit 2 "gen: index.json a link" -- "$TOPOTUNE" gen --runs s --profiles linked-index
check "no version written" test -z "$(find linked-index -name 'v*')"
check "nothing made: no class folder either" test "$(ls -A linked-index)" = index.json
expect_exit 2 "profiles list: index.json a link" -- "$TOPOTUNE" profiles --profiles linked-index list
not_shown() { ! grep -q secret "$TEST_TMP/err"; }
check "its target not shown" not_shown

# 3. The sim cluster file: keys the schema does not allow are refused, each level.
for bad in '"nodes": [{"spec": "hgx-h100.json", "count": 2}], "nodse": []' \
    '"nodes": [{"spec": "hgx-h100.json", "count": 2, "cout": 3}]' \
    '"nodes": [{"spec": "hgx-h100.json", "count": 2}], "faults": [{"kind": "slow-node", "hosts": ["node0001"], "factr": 0.5}]'; do
    printf '{"schema": "topotune/sim-cluster/1", %s}\n' "$bad" >cluster.json
    expect_exit 2 "cluster: unknown key in $bad" -- "$TOPOTUNE" survey --backend sim --cluster cluster.json --out c
    expect_stderr_has "unknown key" "cluster: the key named"
done

# 4. A sweep folder's own state: a logs folder planted as a link is refused (nothing written where
# it points); a run whose log cannot be opened is not recorded, and its failure is no verdict on
# NCCL's defaults (no cure added, as when the benchmark cannot start at all); a resume refuses
# an edited line before reusing it (no crash on a wrong type).
h100() { "$TOPOTUNE" sweep -q --topology "$specs/hgx-h100.json" --space space.json "$@"; }
h100 --out h >/dev/null 2>&1
base=$(python3 -c 'import json; print(json.load(open("h/sweep.json"))["configs"][0]["id"])')
mkdir -p victim planted && ln -s "$TEST_TMP/victim" planted/logs
expect_exit 2 "a logs folder planted as a link" -- h100 --out planted
check "nothing written where it points" test -z "$(ls victim)"
mkdir -p blocked/logs/"$base-r0.log"
h100 --out blocked >/dev/null 2>"$TEST_TMP/err"
check "a baseline whose log cannot be opened is not recorded" sh -c "! grep -q '\"$base\"' blocked/results.jsonl 2>/dev/null"
check "and cures nothing" python3 -c 'import json, sys; assert not json.load(open(sys.argv[1])).get("cures"), sys.argv[1]' blocked/sweep.json
expect_stderr_has "cannot write its log" "the folder named as the cause"
expect_exit 1 "the benchmark cannot start: every run launch-failed" -- env TOPOTUNE_BENCH_PROGRAM=/nonexistent/topotune-bench "$TOPOTUNE" sweep -q \
    --topology "$specs/hgx-h100.json" --space space.json --out nobench
check "no cure for a launch that failed" python3 -c 'import json, sys; assert not json.load(open(sys.argv[1])).get("cures"), sys.argv[1]' nobench/sweep.json
# sweep.pid planted as a link: said once and removed (never written through: its target is
# untouched), so every run records its group again; no error per run.
echo keep >pid-target
mkdir -p pidlink && ln -s "$TEST_TMP/pid-target" pidlink/sweep.pid
expect_exit 0 "a sweep.pid planted as a link" -- h100 --out pidlink
check "no error per run" test "$(grep -c 'error' "$TEST_TMP/err")" = 0
check "its target untouched, the file the sweep's own" sh -c "test \"\$(cat pid-target)\" = keep && test -f pidlink/sweep.pid && test ! -L pidlink/sweep.pid"
# ... and as an empty folder: removed too, as said; a folder with something in it stays, said
# once with what to do.
mkdir -p piddir/sweep.pid
loud() { "$TOPOTUNE" sweep --topology "$specs/hgx-h100.json" --space space.json "$@"; }
expect_exit 0 "a sweep.pid planted as a folder" -- loud --out piddir
check "removed, as said, no error per run" sh -c "grep -q 'a directory.*removed' '$TEST_TMP/err' && test -f piddir/sweep.pid && ! grep -q error '$TEST_TMP/err'"
mkdir -p piddir2/sweep.pid && touch piddir2/sweep.pid/x
expect_exit 0 "a sweep.pid planted as a folder with a file in it" -- loud --out piddir2
expect_stderr_has "cannot remove it" "said, not called removed"
check "and not claimed removed" sh -c "! grep -q 'removed\$' '$TEST_TMP/err'"
for edit in 's/"outcome":"ok"/"outcome":5/' 's/"config_id":"[0-9a-f]*"/"config_id":null/' 's/"final":true/"final":"yes"/' \
    's/"env":{}/"env":{"NCCL_ALGO":"Tree"}/'; do
    rm -rf edited && cp -r h edited && sed -i "1$edit" edited/results.jsonl
    expect_exit 2 "resume after $edit" -- h100 --out edited --resume
    expect_stderr_has "refusing 'edited/results.jsonl': line 1" "the line named"
done
finish
