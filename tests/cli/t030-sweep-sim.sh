#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune sweep on sim topologies: a complete sweep, the field's failures classified within
# their deadlines, kill -9 then --resume, halving, and bad spaces.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"
spaces="$TOPOTUNE_SRC/profiles/spaces"

# The acceptance sweep: HGX H100 spec, the quick space.
expect_exit 0 "quick space on HGX H100" -- "$TOPOTUNE" sweep --backend sim --topology "$specs/hgx-h100.json" \
    --space "$spaces/nccl-quick.json" --out "$TEST_TMP/h100"
check "progress: every busbw marked predicted; the defaults' probe before the plan counts 1/?" \
    python3 - "$TEST_TMP/err" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("[")]
assert lines[0].startswith("[1/?] ") and lines[0].rstrip().endswith("| ETA ?"), lines[0]
assert all(re.search(r"\[(\d+/\d+|1/\?)\] ", l) for l in lines), lines[:3]
assert all(re.search(r" GB/s predicted \| best [0-9.]+ GB/s predicted ", l) for l in lines), lines[:3]
PY
best=$(grep -o '| best [0-9.]* GB/s predicted ([0-9a-f]*)' "$TEST_TMP/err" | tail -1) # for --resume
check "sweep.json, results.jsonl and logs" test -s "$TEST_TMP/h100/sweep.json" -a -s "$TEST_TMP/h100/results.jsonl" \
    -a -n "$(ls "$TEST_TMP/h100/logs")"
check "every run classified, every configuration twice" python3 - "$TEST_TMP/h100" <<'PY'
import collections, json, sys
d = sys.argv[1]
sweep = json.load(open(d + "/sweep.json"))
runs = [json.loads(l) for l in open(d + "/results.jsonl")]
count = collections.Counter(r["config_id"] for r in runs)
assert len(count) == len(sweep["configs"]) == 18 and set(count.values()) == {2}, count
assert all(r["outcome"] in ("ok", "wrong", "error", "crash", "timeout", "launch-failed") for r in runs)
assert all(r["predicted"] is True and r["class"] == sweep["class"] for r in runs)
ok = [r for r in runs if r["outcome"] == "ok"]
assert ok and all(r["sizes"] and r["sizes"][-1]["algo"] for r in ok)
assert sweep["configs"][0]["env"] == {}, "the baseline comes first"
PY

# Hang, crash and wrong results on 8 RTX 4090 in a container: classified, hangs within deadline + 5 s.
expect_exit 1 "RTX 4090 faults (the baseline hangs: exit 1)" -- "$TOPOTUNE" sweep --no-cures \
    --topology "$specs/rtx4090-8x-pcie-container.json" --space "$TOPOTUNE_FIXTURES/space-rtx-faults.json" \
    --out "$TEST_TMP/rtx"
check "faults classified" python3 - "$TEST_TMP/rtx/results.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
def outcome(**env):
    got = {r["outcome"] for r in runs if r["env"] == {k: v for k, v in env.items()}}
    assert len(got) == 1, (env, got)
    return got.pop()
assert outcome() == "timeout"                                          # P2P where it is broken
assert outcome(NCCL_P2P_DISABLE="1") == "crash"                        # SHM outgrows /dev/shm
assert outcome(NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="1") == "ok"     # the network works
assert outcome(NCCL_P2P_DISABLE="1", NCCL_SHM_DISABLE="1", NCCL_PROTO="LL128") == "wrong"
for r in runs:
    if r["outcome"] == "timeout":
        assert r["stage"] == "init" and r["wall_s"] <= 3 + 5, r
    if r["outcome"] == "crash":
        assert r["signal"] == "SIGBUS", r
PY
# Only this test's runs: other tests may run benchmarks at the same time.
check "no benchmark of this sweep left running" bash -c "! pgrep -f -- 'json=$TEST_TMP/[r]tx' >/dev/null"

# --resume runs what is missing, a configuration's second repeat as well as a whole configuration:
# each (configuration, repeat) exactly once.
"$TOPOTUNE" -q sweep --backend sim --no-cures --topology "$specs/hgx-h100.json" \
    --space "$spaces/nccl-quick.json" --repeat 2 --out "$TEST_TMP/gaps" 2>/dev/null
sed -i -e 2d -e '$d' "$TEST_TMP/gaps/results.jsonl" # a second repeat and a last line lost
expect_exit 0 "--resume fills the gaps" -- "$TOPOTUNE" -q sweep --backend sim --no-cures \
    --topology "$specs/hgx-h100.json" --space "$spaces/nccl-quick.json" --repeat 2 --out "$TEST_TMP/gaps" --resume
check "every configuration twice, each repeat once" python3 - "$TEST_TMP/gaps/results.jsonl" <<'PY'
import collections, json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
per = collections.Counter((r["config_id"], r["rep"]) for r in runs)
assert set(per.values()) == {1} and set(collections.Counter(r["config_id"] for r in runs).values()) == {2}, per
PY

# The progress line's best so far counts the runs a resumed sweep reuses: with the last four
# other configurations' runs lost, every line names the whole sweep's best (it named the first
# run measured again).
cp -r "$TEST_TMP/h100" "$TEST_TMP/best-kept"
python3 - "$TEST_TMP/best-kept/results.jsonl" "$best" <<'PY'
import json, sys
assert sys.argv[2], "the first sweep's best"
runs = [json.loads(l) for l in open(sys.argv[1])]
order = list(dict.fromkeys(r["config_id"] for r in runs if r["config_id"] not in sys.argv[2]))
with open(sys.argv[1], "w") as f:
    f.writelines(json.dumps(r) + "\n" for r in runs if r["config_id"] not in order[-4:])
PY
expect_exit 0 "--resume with four configurations lost" -- "$TOPOTUNE" sweep --backend sim \
    --topology "$specs/hgx-h100.json" --space "$spaces/nccl-quick.json" --out "$TEST_TMP/best-kept" --resume
check "eight runs again, each progress line naming the reused best ($best)" \
    python3 - "$TEST_TMP/err" "$best" <<'PY'
import sys
lines = [l for l in open(sys.argv[1]) if l.startswith("[")]
assert len(lines) == 8 and all(sys.argv[2] in l for l in lines), lines[:2]
PY

# kill -9 in the middle, then --resume: every configuration exactly `repeat` times (once: each
# hang costs its whole deadline; repeats are filled in above), no torn line.
"$TOPOTUNE" -q sweep --no-cures --topology "$specs/rtx4090-8x-pcie-container.json" \
    --space "$TOPOTUNE_FIXTURES/space-rtx-faults.json" --out "$TEST_TMP/killed" 2>/dev/null &
pid=$!
sleep 5
kill -9 "$pid"
wait "$pid" 2>/dev/null
check "the killed sweep had started" test -s "$TEST_TMP/killed/sweep.json"
printf '{"config_id": "torn' >>"$TEST_TMP/killed/results.jsonl" # as a kill mid-write would leave it
expect_exit 1 "--resume" -- "$TOPOTUNE" sweep --no-cures --topology "$specs/rtx4090-8x-pcie-container.json" \
    --space "$TOPOTUNE_FIXTURES/space-rtx-faults.json" --out "$TEST_TMP/killed" --resume
expect_stderr_has "torn" "the torn line is reported"
check "each configuration exactly once, every line whole" python3 - "$TEST_TMP/killed/results.jsonl" <<'PY'
import collections, json, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "ends with a newline"
runs = [json.loads(l) for l in lines[:-1]]
keys = collections.Counter((r["config_id"], r["rep"]) for r in runs)
assert len(keys) == 8 and set(keys.values()) == {1}, keys
PY
expect_exit 2 "no resume without --resume" -- "$TOPOTUNE" sweep --topology "$specs/rtx4090-8x-pcie-container.json" \
    --space "$TOPOTUNE_FIXTURES/space-rtx-faults.json" --out "$TEST_TMP/killed"
expect_stderr_has "--resume" "the fix is named"
expect_exit 2 "resume with another space" -- "$TOPOTUNE" sweep --topology "$specs/rtx4090-8x-pcie-container.json" \
    --space "$spaces/nccl-quick.json" --backend sim --out "$TEST_TMP/killed" --resume
expect_stderr_has "another space" "refused"
expect_exit 2 "resume on another topology" -- "$TOPOTUNE" sweep --topology "$specs/hgx-h100.json" \
    --space "$TOPOTUNE_FIXTURES/space-rtx-faults.json" --out "$TEST_TMP/killed" --resume
expect_stderr_has "node class" "refused"

# Halving: rungs at growing effort, survivors measured at full effort `repeat` times.
expect_exit 0 "halving" -- "$TOPOTUNE" sweep --backend sim --topology "$specs/hgx-h100.json" \
    --space "$spaces/nccl-quick.json" --strategy halving --repeat 3 --out "$TEST_TMP/halving"
check "halving shape" python3 - "$TEST_TMP/halving/results.jsonl" <<'PY'
import collections, json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
rungs = collections.Counter(r["rung"] for r in runs if not r["final"])
assert len(rungs) >= 3 and all(rungs[g + 1] <= (rungs[g] + 1) // 2 + 1 for g in range(1, len(rungs))), rungs
final = collections.Counter(r["config_id"] for r in runs if r["final"])
assert final and set(final.values()) == {3}, final
assert any(r["env"] == {} for r in runs if r["final"]), "the baseline reaches the final rung"
PY

# The sim predicts a whole job in one process (no MPI): several would write one log at once.
expect_exit 2 "sim with more than one process" -- "$TOPOTUNE" sweep --backend sim --np 2 \
    --launcher mpirun --topology "$specs/hgx-h100.json" --space "$spaces/nccl-quick.json" \
    --out "$TEST_TMP/sim-np"
expect_stderr_has "--nodes" "the option that sets the job's size is named"
expect_no_file "$TEST_TMP/sim-np" "nothing written for it"

# Bad spaces: exit 2, the entry named.
bad() { printf '%s\n' "$2" >"$TEST_TMP/bad-$1.json"; }
bad unknown-key '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": [null]}, "varz": 1}'
bad duplicate '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": [null], "NCCL_ALGO": ["Ring"]}}'
bad name '{"schema": "topotune/space/1", "vars": {"nccl_algo": [null, "Ring"]}}'
bad value '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": ["Ring; rm -rf /"]}}'
bad empty '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": []}}'
bad size '{"schema": "topotune/space/1", "sizes": {"min": "1X"}, "vars": {"NCCL_ALGO": [null]}}'
bad minmax '{"schema": "topotune/space/1", "sizes": {"min": "1G", "max": "8"}, "vars": {"NCCL_ALGO": [null]}}'
bad requires '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": [null]}, "requires": {"NCCL_ALGO": "warp-drive"}}'
bad fixed-swept '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": [null]}, "fixed": {"NCCL_ALGO": "Ring"}}'
for f in unknown-key:varz duplicate:NCCL_ALGO name:nccl_algo value:vars.NCCL_ALGO empty:vars.NCCL_ALGO \
    size:sizes.min minmax:sizes requires:requires.NCCL_ALGO fixed-swept:vars.NCCL_ALGO; do
    name=${f%%:*}
    expect_exit 2 "bad space: $name" -- "$TOPOTUNE" sweep --backend sim --topology "$specs/hgx-h100.json" \
        --space "$TEST_TMP/bad-$name.json" --out "$TEST_TMP/bad-out-$name"
    expect_stderr_has "${f#*:}" "bad space $name names its entry"
    expect_no_file "$TEST_TMP/bad-out-$name" "bad space $name"
done

# NCCL variables of the shell reach every run, the defaults' too, which then are not NCCL's:
# said. The space's fixed ones, NCCL_DEBUG and device names are the run's own or the node's; this
# host's NCCL configuration files are not the spec's machine's, which the sim predicts (NCCL's
# own runs: unit-sweep).
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_ALGO": [null, "Tree"]},
 "fixed": {"NCCL_MAX_NCHANNELS": "8"}, "repeat": 1, "iters": 5, "warmup": 1, "timeout_s": 5}' >"$TEST_TMP/inherit.json"
printf 'NCCL_PROTO=Simple\nNCCL_MAX_NCHANNELS=4\n' >"$TEST_TMP/site.conf"
expect_exit 0 "a sweep under NCCL variables of the shell and a configuration file" -- env NCCL_ALGO=Ring \
    NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=ib0 NCCL_CONF_FILE="$TEST_TMP/site.conf" "$TOPOTUNE" sweep \
    --topology "$specs/hgx-h100.json" --space "$TEST_TMP/inherit.json" --out "$TEST_TMP/inherit"
expect_stderr_has "warning: NCCL_ALGO=Ring reach every run, the defaults' too" "the inherited one named"
check "not the fixed, the debug, the device ones or the host's file" sh -c \
    "! grep 'reach every run' '$TEST_TMP/err' | grep -q -e NCCL_MAX_NCHANNELS -e NCCL_DEBUG -e NCCL_SOCKET_IFNAME -e NCCL_PROTO"
# ... and recorded: the warning scrolled away, and the profile of the runs said nothing of them.
check "sweep.json records what the runs inherited, in its schema" sh -c "python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))[\"inherited\"] == {\"NCCL_ALGO\": {\"value\": \"Ring\", \"from\": \"environment\"}}
' '$TEST_TMP/inherit/sweep.json' && python3 '$TOPOTUNE_SRC/tests/cli/validate-schema.py' \
    '$TOPOTUNE_SRC/docs/schemas/sweep.schema.json' '$TEST_TMP/inherit/sweep.json'"
expect_exit 2 "--resume under other inherited variables is refused" -- env NCCL_ALGO=Tree "$TOPOTUNE" sweep \
    --topology "$specs/hgx-h100.json" --space "$TEST_TMP/inherit.json" --out "$TEST_TMP/inherit" --resume
expect_stderr_has "its runs inherited [NCCL_ALGO=Ring], these would inherit [NCCL_ALGO=Tree]" "both named"
expect_exit 0 "... and under the same, resumed" -- env NCCL_ALGO=Ring "$TOPOTUNE" sweep \
    --topology "$specs/hgx-h100.json" --space "$TEST_TMP/inherit.json" --out "$TEST_TMP/inherit" --resume
# gen says what its profile was measured with and does not set (NCCL_PROTO here; a variable the
# profile sets is its own)
expect_exit 0 "a sweep inheriting NCCL_PROTO" -- env NCCL_PROTO=Simple "$TOPOTUNE" sweep \
    --topology "$specs/hgx-h100.json" --space "$TEST_TMP/inherit.json" --out "$TEST_TMP/inherit-proto"
expect_exit 0 "gen of it" -- "$TOPOTUNE" gen --runs "$TEST_TMP/inherit-proto" --profiles "$TEST_TMP/inherit-prof"
expect_stderr_has "warning: the runs of '$TEST_TMP/inherit-proto' inherited NCCL_PROTO=Simple, which the profile does not set" \
    "gen names it"
# what the record keeps is what its reader takes: a name NCCL never reads (lower case) is none, a
# value past 4096 bytes is cut (the sweep wrote both, then refused its own sweep.json, and gen
# could not use its runs)
long=$(head -c 5000 /dev/zero | tr '\0' x)
expect_exit 0 "a sweep under a lower-case name and a long value" -- env NCCL_algo_x=1 NCCL_IB_HCA_LONG="$long" \
    "$TOPOTUNE" sweep --topology "$specs/hgx-h100.json" --space "$TEST_TMP/inherit.json" --out "$TEST_TMP/inherit-odd"
check "its record: the long value cut, no lower-case name" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["inherited"]
assert "NCCL_algo_x" not in r and len(r["NCCL_IB_HCA_LONG"]["value"]) == 4096, r.keys()' "$TEST_TMP/inherit-odd/sweep.json"
expect_exit 0 "... and gen reads it" -- "$TOPOTUNE" gen --runs "$TEST_TMP/inherit-odd" --profiles "$TEST_TMP/inherit-odd-prof"
# a damaged record is refused, as the rest of sweep.json is
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["inherited"] = {"LD_PRELOAD": {"value": "/tmp/x.so", "from": "environment"}}
json.dump(d, open(sys.argv[1], "w"))' "$TEST_TMP/inherit-proto/sweep.json"
expect_exit 2 "gen refuses a sweep.json whose inherited names no NCCL variable" -- "$TOPOTUNE" gen \
    --runs "$TEST_TMP/inherit-proto" --profiles "$TEST_TMP/inherit-prof2"
expect_stderr_has "inherited" "the entry named"
finish
