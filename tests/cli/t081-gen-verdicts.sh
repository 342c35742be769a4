#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gen's verdicts on results that are ordinary in the field (issue 23): a noisy baseline stays the
# reference (failed and noisy differ), sweeps of different shapes are not merged, per-size rows
# are judged on top of the profile's variables, every simulated number says predicted, and every
# shell file of a profile passes shellcheck.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"
# Every check below derives from this sweep: when one of its runs did not come out ok (a loaded
# machine under ASan), say so here, with the sweep's own words, rather than as a missing row later.
expect_exit 0 "the simulated sweep" -- "$TOPOTUNE" -q sweep --topology "$specs/hgx-h100.json" --backend sim \
    --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" --out "$TEST_TMP/h100"
check "every run of the sweep ok" python3 - "$TEST_TMP/h100/results.jsonl" "$TEST_TMP/err" <<'PY'
import collections, json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
outcomes = collections.Counter(r.get("outcome") for r in runs)
bad = [{k: v for k, v in r.items() if k != "sizes"} for r in runs if r.get("outcome") != "ok"]
assert len(runs) == 36 and outcomes == {"ok": 36}, (outcomes, bad[:3], open(sys.argv[2]).read()[-2000:])
PY
# derive DIR PYTHON: a copy of the h100 sweep whose result lines PYTHON rewrites (r: one line,
# busbw(r, f, sizes): scales it at the sizes given, or at all; kept unless PYTHON returns False).
derive() {
    mkdir -p "$TEST_TMP/$1"
    cp "$TEST_TMP/h100/sweep.json" "$TEST_TMP/$1/"
    python3 - "$TEST_TMP/h100/results.jsonl" "$TEST_TMP/$1/results.jsonl" "$2" <<'PY'
import json, sys
def busbw(r, f, sizes=None):
    for s in r["sizes"]:
        if sizes is None or s["size"] in sizes:
            s["busbw"] *= f
            s["algbw"] *= f
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        env = r["env"]
        if eval(compile(sys.argv[3], "derive", "exec"), {"r": r, "env": env, "busbw": busbw}) is not False:
            out.write(json.dumps(r) + "\n")
PY
}
profile() { echo "$TEST_TMP/$1"/*/latest/profile.json; }

# 1. A baseline whose runs were all ok but varied (cv 0.15 > 0.05) is noisy, not failed: it stays
# the reference, so a stable LL128 at 60% of its speed does not win (the review's 159 over 251).
derive noisy '
if not env:
    busbw(r, 1.15 if r["rep"] == 0 else 0.85)
elif env != {"NCCL_PROTO": "LL128"}:
    busbw(r, 0.5)
else:
    busbw(r, 0.6)'
expect_exit 0 "gen: noisy defaults" -- "$TOPOTUNE" gen --runs "$TEST_TMP/noisy" --profiles "$TEST_TMP/p-noisy"
check "noisy defaults stay the reference: nothing slower wins, the profile says noisy" python3 - \
    "$(profile p-noisy)" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["baseline"]["verdict"] == "noisy" and p["baseline"]["stable"] is False, p["baseline"]
assert p["baseline"]["cv"] > 0.1 and p["baseline"]["runs"] == 2, p["baseline"]
assert p["winner"] is None and p["variables"] == [] and p["defaults_best"], p["summary"]
assert "noisy" in p["summary"] and "failed" not in p["summary"], p["summary"]
PY
check "gen says noisy" grep -q "defaults were noisy (cv 0.2" "$TEST_TMP/out"
# a configuration that beats the noisy defaults beyond their spread still wins, as tuning
derive noisy-beaten '
if not env:
    busbw(r, 1.15 if r["rep"] == 0 else 0.85)
elif env == {"NCCL_PROTO": "LL128"}:
    busbw(r, 2)'
expect_exit 0 "gen: noisy defaults beaten" -- "$TOPOTUNE" gen --runs "$TEST_TMP/noisy-beaten" --profiles "$TEST_TMP/p-beaten"
check "beaten beyond the spread: LL128 wins as tuning, against the defaults" python3 - \
    "$(profile p-beaten)" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["winner"]["env"] == {"NCCL_PROTO": "LL128"}, p["summary"]
v = p["variables"][0]
assert v["role"] == "tuning" and "against" in v["evidence"] and "noisy" in v["evidence"], v
PY
# failed defaults are a different verdict: any stable configuration wins, as before
derive failed '
if not env:
    r["outcome"] = "timeout"; r["stage"] = "init"; r["sizes"] = []; del r["nodes"], r["ranks"]'
expect_exit 0 "gen: failed defaults" -- "$TOPOTUNE" gen --runs "$TEST_TMP/failed" --profiles "$TEST_TMP/p-failed"
check "failed defaults: a winner, the verdict failed" python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); assert p["baseline"]["verdict"] == "failed" and p["winner"], p' "$(profile p-failed)"
check "gen says the defaults failed, its number predicted" grep -q "predicted mean busbw .*(NCCL's defaults failed here)" "$TEST_TMP/out"

# 2. Sweeps of one class with different shapes are not merged into one statistic.
derive two-nodes '
r["nodes"], r["ranks"] = 2, 16'
expect_exit 2 "gen: 1 node x 8 ranks with 2 nodes x 16 ranks" -- "$TOPOTUNE" gen --runs "$TEST_TMP/h100" \
    "$TEST_TMP/two-nodes" --profiles "$TEST_TMP/p-shapes"
expect_stderr_has "measured 1 node x 8 ranks and 2 nodes x 16 ranks" "the shapes named"
expect_stderr_has "'$TEST_TMP/two-nodes' 2 nodes x 16 ranks" "the sweep named with its shape"
expect_no_file "$TEST_TMP/p-shapes/index.json" "nothing written"
expect_exit 0 "gen: one shape at a time" -- "$TOPOTUNE" gen --runs "$TEST_TMP/two-nodes" --profiles "$TEST_TMP/p-shapes"
# one sweep directory whose lines mix shapes: compare refuses it as gen does
derive mixed '
if r["rep"] == 1 and "nodes" in r:
    r["nodes"], r["ranks"] = 2, 16'
expect_exit 2 "compare: a sweep of two shapes" -- "$TOPOTUNE" compare "$TEST_TMP/mixed"
expect_stderr_has "measured 1 node x 8 ranks and 2 nodes x 16 ranks" "compare names the shapes"

# 3. Per-size rows apply on top of the profile's variables, so they are judged there. The
# winner sets NCCL_PROTO=Simple; Tree alone beats the defaults x2 at 8..512 B but never ran with
# Simple: no row from it. Tree with Simple beats the winner (x5: x2 there) at 8 and 32 B: those
# rows only.
derive rows '
if env == {"NCCL_PROTO": "Simple"}:
    busbw(r, 1.5, [s["size"] for s in r["sizes"] if s["size"] >= 1 << 20])
elif env == {"NCCL_ALGO": "Tree"}:
    busbw(r, 2, [8, 32, 128, 512])
elif env == {"NCCL_ALGO": "Tree", "NCCL_PROTO": "Simple"}:
    busbw(r, 5, [8, 32])'
expect_exit 0 "gen: rows on top of the winner" -- "$TOPOTUNE" gen --runs "$TEST_TMP/rows" --profiles "$TEST_TMP/p-rows"
check "rows only from runs with the profile's variables, over the profile's configuration" python3 - \
    "$(profile p-rows)" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["winner"]["env"] == {"NCCL_PROTO": "Simple"}, p["summary"]
t = p["tuner"]
assert [(r["algorithm"], r["protocol"], r["sizes"]) for r in t] == [("tree", "simple", [8, 32])], t
assert t[0]["configs"] == ["deb7fd5fe108"], t
assert "over the profile's configuration" in t[0]["evidence"] and "predicted busbw" in t[0]["evidence"], t
PY

# 3b. The profile's variables apply to the whole job. NCCL_ALGO=Tree, however fast for all_reduce,
# leaves broadcast, reduce, all_gather and reduce_scatter without an algorithm (NCCL fails the job's
# first broadcast): never chosen, named under unusable, its sizes a per-size row of all_reduce's
# (the table applies per collective). NCCL_ALGO=Ring, slower than Tree, leaves every collective
# one: chosen over the defaults.
derive tree-fast 'busbw(r, 3) if env == {"NCCL_ALGO": "Tree"} else None'
derive ring-too 'busbw(r, 3) if env == {"NCCL_ALGO": "Tree"} else busbw(r, 2.5) if env == {"NCCL_ALGO": "Ring"} else None'
not_in() { ! grep -q "$1" "$2"; }
for case in tree-fast ring-too; do
    expect_exit 0 "gen: $case" -- "$TOPOTUNE" gen --runs "$TEST_TMP/$case" --profiles "$TEST_TMP/p-$case"
    check "gen: $case: says why Tree is not chosen" grep -qE \
        "left out whatever their speed: [0-9]+ configuration\\(s\\) under which NCCL fails other collectives" \
        "$TEST_TMP/out"
    check "$case: the profile matches its schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
        "$TOPOTUNE_SRC/docs/schemas/profile.schema.json" "$(profile "p-$case")"
    check "$case: nccl.env sets no Tree" not_in Tree "$(dirname "$(profile "p-$case")")/nccl.env"
done
check "Tree unusable, its gain a per-size row; Ring chosen when faster than the defaults" python3 - \
    "$(profile p-tree-fast)" "$(profile p-ring-too)" <<'PY'
import json, sys
tree, ring = (json.load(open(f)) for f in sys.argv[1:])
for p in (tree, ring):
    assert all(x["env"]["NCCL_ALGO"] == "Tree" for x in p["unusable"]), p["unusable"]
    (u,) = [x for x in p["unusable"] if x["env"] == {"NCCL_ALGO": "Tree"}]
    assert u["fails"] == ["broadcast", "reduce", "all_gather", "reduce_scatter"], u
assert tree["winner"] is None and tree["defaults_best"], tree["summary"]
assert any(r["algorithm"] == "tree" and r["collective"] == "allreduce" for r in tree["tuner"]), tree["tuner"]
assert ring["winner"]["env"] == {"NCCL_ALGO": "Ring"}, ring["summary"]
PY

# 3b'. A version that differs in its per-size table alone: diff said nothing had changed.
expect_exit 0 "gen: a table row" -- "$TOPOTUNE" gen --runs "$TEST_TMP/tree-fast" --profiles "$TEST_TMP/p-diff"
expect_exit 0 "gen: no row" -- "$TOPOTUNE" gen --runs "$TEST_TMP/h100" --profiles "$TEST_TMP/p-diff"
cls=$(basename "$(dirname "$(dirname "$(profile p-diff)")")")
expect_exit 0 "profiles diff" -- "$TOPOTUNE" profiles --profiles "$TEST_TMP/p-diff" diff "$cls"
check "the table's change shown" grep -qE "^  per-size table: [1-9][0-9]* row\(s\) -> 0$" "$TEST_TMP/out"
check "the row gone named" grep -qE "^  - row allreduce [0-9]+\.\.[0-9inf]+ B, 1 node\(s\) x 8 ranks: tree/" "$TEST_TMP/out"
check "the objective says what it measures" grep -q "GB/s mean busbw of all_reduce$" "$TEST_TMP/out"

# 3c. A sweep named twice counted each run twice: a configuration with one of its two runs made
# stable, and every row claimed twice its runs.
expect_exit 2 "gen: one sweep twice" -- "$TOPOTUNE" gen --runs "$TEST_TMP/rows" "$TEST_TMP/rows/" \
    --profiles "$TEST_TMP/p-twice"
expect_stderr_has "are the same sweep: give each sweep once" "said"
expect_no_file "$TEST_TMP/p-twice" "nothing written"

# 4. Every simulated number says predicted: gen, profiles list, show and diff.
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs "$TEST_TMP/h100" --profiles "$TEST_TMP/p-pred"
expect_exit 0 "gen: a second version" -- "$TOPOTUNE" gen --runs "$TEST_TMP/rows" --profiles "$TEST_TMP/p-pred"
# every line with a measured-looking number (GB/s, busbw, 12.34) says predicted
all_predicted() {
    python3 - "$TEST_TMP/out" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if re.search(r"GB/s|busbw|\d\.\d\d", l)]
assert lines, "no number printed"
bad = [l for l in lines if "predicted" not in l.lower()]
assert not bad, bad
PY
}
check "gen: every number predicted" all_predicted
cls=$(basename "$(dirname "$(dirname "$(profile p-pred)")")")
for cmd in list show diff; do
    args=("$cls")
    [ "$cmd" != list ] || args=() # list takes no class
    expect_exit 0 "profiles $cmd" -- "$TOPOTUNE" profiles --profiles "$TEST_TMP/p-pred" $cmd "${args[@]}"
    check "profiles $cmd: every number predicted" all_predicted
done

# 5. Every shell file of a generated profile passes shellcheck, nccl.env included (SC2148).
for dir in "$TEST_TMP"/p-pred/*/v* "$TEST_TMP"/p-failed/*/v*; do
    for sh in "$dir/nccl.env" "$dir"/launch/*.sh; do
        check "shellcheck $(basename "$dir")/$(basename "$sh")" shellcheck "$sh"
    done
done
finish
