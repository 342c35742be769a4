#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey --backend mpi` on 8 simulated hosts (tests/multinode/hosts.sh) with real faults:
# a slow link (tc tbf on h2's veth at 100mbit: its pairs measured 0.01 GB/s, a forty-fourth of the
# class's 0.44 GB/s, each in 5.6 s, where 50mbit took 10.5 s of the suite's time per pair; at 200mbit
# a busy machine's pairs, CPU-bound, came down to the shaped link's speed and it was not slow), a
# slow host (h4's processes in a cgroup with 5% of a CPU), a host whose benchmark hangs (the stall
# hook, h6); then a lossy link (netem loss on h3, where the kernel has netem), a host that is down
# (h5) and a host of another class (h8). Each is named with its kind and nothing else is (the
# healthy hosts of each survey get no verdict: how often noise alone names a node is measured over
# seeds with the sim backend, tests/cli); nothing is left running.
# shellcheck source=../cli/lib.sh
. "$(dirname "$0")/../cli/lib.sh"
# shellcheck source=hosts.sh
. "$(dirname "$0")/hosts.sh"
# limits scale with TOPOTUNE_TEST_TIME_SCALE (lib.sh's scaled): on a busy machine the starved host's
# launches took past the 20 s deadline and it was called hung, not slow
mn_guard "$(scaled 590)" "$@"
hosts=h1,h2,h3,h4,h5,h6,h7,h8
# The 8 hosts share this machine's 2 cores (16 ranks): a healthy node alone has come out at a
# sixth of the best and, in CI, at 28% then 20% of the median (alone, then repeated longer), so
# "slow" is below 10% of the class median (the most --tolerance takes), between that noise and
# the faults (the shaped link's pairs at 1% of the median, the starved host alone at 0.3%), and
# one group is measured at a time (pairs measured at once took each other's cores: a round's values
# spread by 64% and hid the slow link). Alone in its launch, the slow host's start-up (its orted is
# in the cgroup too) once took 17 s at 3% and passed the 6 s deadline; its short runs fitted in
# one period's quota and it was not slow alone (at 8%, then once in CI at 5%: 3.5 GB/s against a
# median of 6): 5%, a 20 s deadline, and the quota in 20 ms periods, not 100 (mn_slow_host).
survey() { mn_head "$TOPOTUNE" survey --backend mpi --hosts "$hosts" --size 1M --iters 10 --timeout "$(scaled 20)" \
    --tolerance 0.9 --groups-per-launch 1 "$@"; }
not_healthy() { ! grep -qx "$1" "$2"; }
verdicts() { # what survey.json names: "host kind" per line, sorted
    python3 -c 'import json, sys
print("\n".join(sorted(" ".join(v["hosts"]) + " " + v["kind"] for v in json.load(open(sys.argv[1]))["verdicts"])))' "$1/survey.json"
}

# 1. A slow link, a slow host and a hanging host.
mn_up 8 || { fail "the hosts did not come up"; finish; exit 1; }
echo TOPOTUNE_BENCH_TEST_STALL=0 >>"$TOPOTUNE_MN_DIR/h6.env" # its rank 0 of any group stalls
mn_slow_link h2 100mbit || fail "tc tbf on h2"
mn_slow_host h4 5 || fail "cgroup CPU quota on h4"
survey --out "$TEST_TMP/faults" 2>"$TEST_TMP/faults.err"
rc=$?
got=$(verdicts "$TEST_TMP/faults")
# "class-too-spread" is the survey's honest answer when the healthy hosts' own values spread
# wider than the tolerance: 16 ranks on 2 cores once gave a spread of 181% (a level of 1.49 GB/s,
# a bound 225 times below it, the starved host above that). It names no host healthy, so it is not
# a wrong verdict; the harness's noise is measured once more, never twice
if grep -q "class-too-spread" <<<"$got"; then
    echo "note: the class was too noisy to judge (got: $got): surveyed once more" >&2
    cat "$TEST_TMP/faults/report.txt" >&2
    check "too noisy: the starved host is not called healthy" \
        not_healthy h4 "$TEST_TMP/faults/healthy.hostfile"
    rm -rf "$TEST_TMP/faults"
    survey --out "$TEST_TMP/faults" 2>"$TEST_TMP/faults.err"
    rc=$?
    got=$(verdicts "$TEST_TMP/faults")
fi
check "exit 1: something named (exit $rc)" test "$rc" -eq 1
want=$'h2 link-slow\nh4 node-slow\nh6 node-fails'
check "the slow link, the slow host and the hanging host, each with its kind (got: $got)" \
    test "$got" = "$want"
check "healthy.hostfile: the others" test "$(tr '\n' ' ' <"$TEST_TMP/faults/healthy.hostfile")" = "h1 h3 h5 h7 h8 "
check "excluded.txt: host, verdict, evidence" python3 - "$TEST_TMP/faults/excluded.txt" <<'PY'
import json, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
assert [r[:2] for r in rows] == [["h2", "link-slow"], ["h4", "node-slow"], ["h6", "node-fails"]], rows
for r in rows:
    json.loads(r[2])
PY
check "survey.json valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/survey.schema.json" "$TEST_TMP/faults/survey.json"
check "nothing left on the hosts" test -z "$(mn_strays)"
cat "$TEST_TMP/faults.err" "$TEST_TMP/faults/report.txt" >&2
python3 -c 'import json, sys
for p in json.load(open(sys.argv[1]))["pairs"]: print(p)' "$TEST_TMP/faults/survey.json" >&2

# 2. A lossy link and a host of another class.
mn_down
export MN_TOPOLOGY_h8=$TOPOTUNE_SRC/profiles/specs/dgx-a100.json
mn_up 8 || { fail "the hosts did not come up again"; finish; exit 1; }
# netem is a kernel module (sch_netem) that not every kernel has: where it is missing, the
# lossy link is left out, and said so
lossy=1
mn_lossy_link h3 5 2>/dev/null || { lossy=0; echo "note: no tc netem in this kernel: no lossy link injected"; }
mn_kill_host h5
survey --out "$TEST_TMP/lossy" 2>"$TEST_TMP/lossy.err"
rc=$?
got=$(verdicts "$TEST_TMP/lossy")
check "exit 1 again (exit $rc)" test "$rc" -eq 1
if [ "$lossy" = 1 ]; then
    want=$'h3 link-slow\nh5 node-unreachable'
else
    want="h5 node-unreachable"
fi
check "the host that is down (and the lossy link) named, nothing else (got: $got)" test "$got" = "$want"
check "h8 is its own class" python3 - "$TEST_TMP/lossy/survey.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
cls = {n["host"]: n["class"] for n in s["nodes"]}
assert cls["h8"].startswith("a100-") and cls["h5"] is None, cls  # h5 is down: no class
assert len({c for c in cls.values() if c}) == 2, cls
PY
cat "$TEST_TMP/lossy.err" >&2

mn_down
check "nothing left of the hosts" test -z "$(mn_leftovers)"
finish
