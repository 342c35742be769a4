#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs/schemas: every schema is a valid draft 2020-12 schema; every shipped space and spec passes;
# real outputs pass (topo --json live and from files, sim sweeps with their results and events,
# profiles from gen, a measured run, compare --json, topotune-bench and predict events); broken
# documents fail, naming what is wrong, so the schemas can fail.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
schemas=$TOPOTUNE_SRC/docs/schemas
specs=$TOPOTUNE_SRC/profiles/specs
spaces=$TOPOTUNE_SRC/profiles/spaces
cd "$TEST_TMP" || exit 1

# valid SCHEMA FILE [--lines]: FILE passes docs/schemas/SCHEMA.schema.json.
valid() {
    local schema=$1 file=$2
    shift 2
    if python3 "$here/validate-schema.py" "$schemas/$schema.schema.json" "$file" "$@" >verr 2>&1; then
        pass
    else
        fail "$file is not a valid $schema: $(head -5 verr)"
    fi
}

# invalid SCHEMA FILE TEXT [--lines]: FILE fails (exit 1) and the report names TEXT.
invalid() {
    local schema=$1 file=$2 text=$3
    shift 3
    python3 "$here/validate-schema.py" "$schemas/$schema.schema.json" "$file" "$@" >verr 2>&1
    local rc=$?
    if [ "$rc" -eq 1 ] && grep -qF -- "$text" verr; then pass; else
        fail "$file should fail $schema at '$text': exit $rc: $(head -5 verr)"
    fi
}

# events DIR: every run's events of a sweep directory, one JSON Lines file (one validation).
events() {
    cat "$1"/logs/*.jsonl >"$1.events.jsonl"
    check "$1 has run events" test -s "$1.events.jsonl"
    valid bench-event "$1.events.jsonl" --lines
}

# 1. The schemas themselves.
check "each schema is a draft 2020-12 schema with its \$id, a title and a description" python3 - "$schemas" <<'PY'
import json, os, sys
import jsonschema
d = sys.argv[1]
names = sorted(n for n in os.listdir(d) if n.endswith(".schema.json"))
assert names == sorted(f"{n}.schema.json" for n in ("topology", "space", "spec", "sweep", "result",
                                                      "profile", "compare", "bench-event", "survey",
                                                      "sim-cluster", "expect", "check", "workload")), names
readme = open(os.path.join(d, "README.md")).read()
for n in names:
    s = json.load(open(os.path.join(d, n)))
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema", n
    assert s["$id"] == "https://topotune.invalid/schemas/" + n, (n, s["$id"])
    assert s["title"] and s["description"], n
    assert f"]({n})" in readme, f"README.md does not list {n}"
PY
check "the spec schema's GPU and NIC names are the catalog's" python3 - "$schemas/spec.schema.json" \
    "$TOPOTUNE_SRC/profiles/hardware" <<'PY'
import json, sys
schema = json.load(open(sys.argv[1]))
gpus = json.load(open(sys.argv[2] + "/gpus.json"))["gpus"]
nics = json.load(open(sys.argv[2] + "/nics.json"))["nics"]
assert schema["properties"]["gpu"]["enum"] == [g["name"] for g in gpus], "gpu enum"
assert schema["properties"]["nics"]["items"]["properties"]["model"]["enum"] == [n["name"] for n in nics]
no_nvlink = schema["allOf"][0]["if"]["properties"]["gpu"]["enum"]
assert no_nvlink == [g["name"] for g in gpus if g["nvlinks"] == 0], "models without NVLink"
PY

# 2. What ships: spaces (and the test spaces), specs.
for f in "$spaces"/*.json "$TOPOTUNE_FIXTURES"/space-*.json; do valid space "$f"; done
for f in "$specs"/*.json; do valid spec "$f"; done

# 3. topo --json: this machine, every hwloc and NCCL XML export (AMD's GPUs' class key failed
# the schema), a spec, and a topology read back.
expect_exit 0 "topo --json (live)" -- "$TOPOTUNE" topo --json live.json
valid topology live.json
for f in "$TOPOTUNE_FIXTURES"/*.xml; do
    xml=$(basename "$f" .xml)
    expect_exit 0 "topo --input $xml" -- "$TOPOTUNE" topo --input "$f" --json
    cp out "$xml.json"
    valid topology "$xml.json"
done
expect_exit 0 "topo --input a spec" -- "$TOPOTUNE" topo --input "$specs/rtx4090-8x-pcie-container.json" --json spec.json
valid topology spec.json
expect_exit 0 "topo --input a spec on Slingshot" -- "$TOPOTUNE" topo --input "$specs/gh200-4x-slingshot.json" --json cxi.json
valid topology cxi.json
expect_exit 0 "topo --input a topology JSON" -- "$TOPOTUNE" topo --input live.json --json again.json
valid topology again.json

# 4. A sim sweep: sweep.json, results.jsonl and every run's events.
expect_exit 0 "sim sweep" -- "$TOPOTUNE" sweep --backend sim --topology "$specs/hgx-h100.json" \
    --space "$spaces/nccl-quick.json" --out h100
valid sweep h100/sweep.json
valid result h100/results.jsonl --lines
events h100
check "one class in sweep.json, its topology and every result" python3 - h100 <<'PY'
import json, sys
sweep = json.load(open(sys.argv[1] + "/sweep.json"))
classes = {json.loads(l)["class"] for l in open(sys.argv[1] + "/results.jsonl")}
assert classes == {sweep["class"]} == {sweep["topology"]["class"]["id"]}, classes
PY

# Failures of the field, quickly: a hang (timeout), SIGBUS (crash), LL128 (wrong), and a cure.
cat >faults.json <<'EOF'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "16M", "factor": 16},
 "objective": {"min": "1M", "max": "16M"},
 "vars": {"NCCL_P2P_DISABLE": [null, "1"], "NCCL_SHM_DISABLE": [null, "1"], "NCCL_PROTO": [null, "LL128"]},
 "exclude": [{"NCCL_P2P_DISABLE": null, "NCCL_SHM_DISABLE": "1"}],
 "repeat": 1, "iters": 5, "warmup": 1, "timeout_s": 1}
EOF
valid space faults.json
expect_exit 1 "sim sweep with faults (the baseline hangs: exit 1)" -- "$TOPOTUNE" sweep --no-cures \
    --topology "$specs/rtx4090-8x-pcie-container.json" --space faults.json --out rtx
valid sweep rtx/sweep.json
valid result rtx/results.jsonl --lines
events rtx
check "every failure seen" python3 - rtx/results.jsonl <<'PY'
import json, sys
outcomes = {json.loads(l)["outcome"] for l in open(sys.argv[1])}
assert outcomes == {"ok", "timeout", "crash", "wrong"}, outcomes
PY

# 5. gen: a profile per class (the 4090's with system variables and a winner).
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs h100 rtx --profiles profiles
for p in profiles/*/latest/profile.json; do valid profile "$p"; done
check "two profiles" test "$(find profiles -path '*/v1/profile.json' | wc -l)" -eq 2

# 6. A measured run of this machine (real MPI ranks, halving): sweep, results, events, profile.
if command -v mpirun >/dev/null; then
    expect_exit 0 "topotune run (tiny MPI space)" -- "$TOPOTUNE" run \
        --space "$TOPOTUNE_FIXTURES/space-mpi-tiny.json" --profiles measured --out run-sweep
    valid sweep run-sweep/sweep.json
    valid result run-sweep/results.jsonl --lines
    events run-sweep
    for p in measured/*/latest/profile.json; do valid profile "$p"; done
else
    echo "skipped: the measured run (no mpirun)"
fi

# 7. compare --json: two specs; then a sweep directory and a profiles root beside a spec.
expect_exit 0 "compare two specs" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" "$specs/dgx-a100.json" --json compare.json
valid compare compare.json
expect_exit 0 "compare a sweep, profiles and a spec" -- "$TOPOTUNE" compare h100 profiles \
    "$specs/rtx4090-8x-pcie.json" --price rtx4090-8x-pcie=100000 --json compare-mixed.json
valid compare compare-mixed.json
check "every kind of input and the price" python3 - compare-mixed.json <<'PY'
import json, sys
inputs = json.load(open(sys.argv[1]))["inputs"]
assert [i["kind"] for i in inputs] == ["sweep", "profile", "profile", "spec"], [i["kind"] for i in inputs]
assert all(i["predicted"] == i["profile"]["predicted"] for i in inputs)
assert inputs[-1]["price"] == 100000
PY

# 8. Events: topotune-bench on a spec, and predict's (a predicted hang: an error event).
expect_exit 0 "topotune-bench --json" -- "$TOPOTUNE_BENCH" --backend sim --topology "$specs/hgx-h100.json" \
    -b 8 -e 1M -f 4 --json bench.jsonl
valid bench-event bench.jsonl --lines
expect_exit 1 "predict --json (broken P2P: a hang)" -- "$TOPOTUNE" predict --input "$specs/rtx4090-8x-pcie.json" --json
cp out predict.jsonl
valid bench-event predict.jsonl --lines
check "predict: start, error, end" python3 -c '
import json, sys
assert [json.loads(l)["event"] for l in open(sys.argv[1])] == ["start", "error", "end"]' predict.jsonl

# 9. Broken documents fail, naming where: untrusted sweep directories must not pass.
python3 - h100 <<'PY'
import glob, json, sys
src = sys.argv[1]
def sweep(name, change):
    doc = json.load(open(src + "/sweep.json"))
    change(doc)
    json.dump(doc, open(name, "w"))
sweep("bad-class.json", lambda d: d.update({"class": "../../escape-0123abcd"}))
sweep("bad-version.json", lambda d: d["versions"].update({"nccl": "2.21.5\n"}))
sweep("bad-version-shell.json", lambda d: d["versions"].update({"nccl": "2.21.5\"; touch /tmp/pwned; \""}))
sweep("bad-config-id.json", lambda d: d["configs"][1].update({"id": "0123456789ab\n"}))
sweep("bad-value.json", lambda d: d["configs"][1]["env"].update({"NCCL_ALGO": "Ring;touch /tmp/pwned"}))
sweep("bad-baseline.json", lambda d: d["configs"].reverse())
sweep("bad-extra.json", lambda d: d.update({"surprise": 1}))
sweep("bad-predicted.json", lambda d: d.update({"predicted": False}))
lines = open(src + "/results.jsonl").read().splitlines()
r = json.loads(lines[1])
r["outcome"] = "fine"
with open("bad-results.jsonl", "w") as f:
    f.write(lines[0] + "\n" + json.dumps(r) + "\n" + lines[2][:40])  # and a torn last line
profile = json.load(open(sorted(glob.glob("profiles/*/latest/profile.json"))[0]))
profile["variables"] = [{"name": "NCCL_ALGO", "value": "$(reboot)", "role": "tuning", "evidence": "x"}]
json.dump(profile, open("bad-profile.json", "w"))
PY
invalid sweep bad-class.json '$.class'
invalid sweep bad-version.json '$.versions.nccl'
invalid sweep bad-version-shell.json '$.versions.nccl'
invalid sweep bad-config-id.json '$.configs[1].id'
invalid sweep bad-value.json '$.configs[1].env.NCCL_ALGO'
invalid sweep bad-baseline.json '$.configs[0].env'
invalid sweep bad-extra.json "'surprise' was unexpected"
invalid sweep bad-predicted.json '$.predicted'
invalid result bad-results.jsonl 'bad-results.jsonl:2: $.outcome' --lines
invalid result bad-results.jsonl 'bad-results.jsonl:3: the last line has no newline' --lines
invalid profile bad-profile.json '$.variables[0].value'
printf '{"schema": "topotune/space/1", "vars": {"nccl_algo": [null]}}\n' >bad-name.json
invalid space bad-name.json '$.vars'
printf '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": [null]}, "repeat": 2.0}\n' >bad-integer.json
invalid space bad-integer.json '$.repeat'
printf '{"schema": "topotune/space/1", "vars": {"NCCL_ALGO": [null]}, "vars": {"X": [null]}}\n' >bad-duplicate.json
invalid space bad-duplicate.json "duplicate key 'vars'"
printf '{"schema": "topotune/spec/1", "gpu": "RTX-4090", "count": 8, "fabric": "nvswitch"}\n' >bad-fabric.json
invalid spec bad-fabric.json '$.fabric'
printf '{"schema": "topotune/spec/1", "gpu": "Z9000", "count": 8}\n' >bad-gpu.json
invalid spec bad-gpu.json '$.gpu'
printf '{"event": "start", "backend": "sim"}\n{"event": "party"}\n' >bad-events.jsonl
invalid bench-event bad-events.jsonl 'bad-events.jsonl:1: $: ' --lines
invalid bench-event bad-events.jsonl 'bad-events.jsonl:2: $.event' --lines
finish
