#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sweep --workload: each run measures every collective of the job's mix; gen optimises the mix's
# effective algbw and never chooses a configuration that slows one of its collectives; its
# per-size table has rows per collective. A known landscape (fake-bench.sh mode collectives:
# NCCL_FAKE_A=1 makes all_reduce faster and all_gather slower, A=2 makes both faster, LL128 makes
# all_gather faster and all_reduce slower) is swept all_reduce-only, then with a mix of both; then
# a sim sweep with the FSDP preset on the HGX H100 spec.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
fake=$TEST_TMP/fake-bench
fake_bench "$fake" collectives
cat >space.json <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "1M", "max": "16M", "factor": 2},
 "vars": {"NCCL_FAKE_A": [null, "1", "2"], "NCCL_PROTO": [null, "LL128"]}, "repeat": 2,
 "timeout_s": 5, "cv_max": 0.05}
JSON
cat >mix.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [
  {"collective": "all_reduce", "size": 4194304, "weight": 0.7},
  {"collective": "all_gather", "size": 8388608, "weight": 0.3}]}
JSON
sweep() { env TOPOTUNE_BENCH_PROGRAM="$fake" "$TOPOTUNE" sweep --space space.json -q "$@"; }
profile() { python3 -c 'import glob, json, sys; print(json.dumps(json.load(open(glob.glob(sys.argv[1] + "/*/v1/profile.json")[0]))))' "$1"; }

# all_reduce alone: A=1 (x1/0.6) wins.
expect_exit 0 "sweep, all_reduce only" -- sweep --out ar
expect_exit 0 "gen, all_reduce only" -- "$TOPOTUNE" gen --runs ar --profiles p-ar
check "all_reduce alone chooses A=1" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert {v["name"]: v["value"] for v in p["variables"]} == {"NCCL_FAKE_A": "1"}, p["variables"]
assert "workload" not in p and "evidence" not in p, p.keys()' "$(profile p-ar)"

# The mix: every configuration measured per collective, A=1 rejected for all_gather, A=2 chosen.
expect_exit 0 "sweep --workload mix.json" -- sweep --out mix --workload mix.json
check "a line per collective and run, each run's sizes the workload's" python3 - mix/results.jsonl <<'PY'
import collections, json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
per = collections.Counter((r["config_id"], r["rep"], r["collective"]) for r in runs)
assert len(per) == 6 * 2 * 2 and set(per.values()) == {1}, per
sizes = {r["collective"]: [s["size"] for s in r["sizes"]] for r in runs}
assert sizes == {"all_reduce": [4194304], "all_gather": [8388608]}, sizes
assert all(r["log"].endswith("-" + r["collective"] + ".log") for r in runs)
PY
expect_exit 0 "gen --workload sweep" -- "$TOPOTUNE" gen --runs mix --profiles p-mix
check "A=1 rejected for slowing all_gather; A=2 chosen, its evidence per collective" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert {v["name"]: v["value"] for v in p["variables"]} == {"NCCL_FAKE_A": "2"}, p["variables"]
rej = {json.dumps(r["env"], sort_keys=True): r for r in p["rejected"]}
slowed = {k: (r["collective"], round(r["change"], 3)) for k, r in rej.items()}
assert slowed == {
    "{\"NCCL_FAKE_A\": \"1\"}": ("all_gather", 0.5),
    "{\"NCCL_PROTO\": \"LL128\"}": ("all_reduce", 0.2),
    "{\"NCCL_FAKE_A\": \"1\", \"NCCL_PROTO\": \"LL128\"}": ("all_gather", 0.2),
    "{\"NCCL_FAKE_A\": \"2\", \"NCCL_PROTO\": \"LL128\"}": ("all_reduce", 0.08)}, slowed
rows = [(r["collective"], r["algorithm"], r["protocol"]) for r in p["tuner"]]
assert rows == [("allgather", "ring", "ll128")], p["tuner"]
ev = {(e["collective"], e["size"]): e for e in p["evidence"]}
assert set(ev) == {("all_reduce", 4194304), ("all_gather", 8388608)}, ev
assert all(abs(e["change"] + 0.1) < 1e-6 for e in ev.values()), ev
assert "effective algbw" in p["summary"] and p["workload"]["entries"][1]["weight"] == 0.3
' "$(profile p-mix)"
check "the winner's variable evidence names the workload's metric and its pairs" python3 -c '
import json, sys
e = json.loads(sys.argv[1])["variables"][0]["evidence"]
assert "effective algbw" in e and "over the workload" in e and "mean busbw" not in e, e
' "$(profile p-mix)"
# Halving and descent hold a run to the same rule: A=1 (and A=1 with LL128), the best by the
# mix's objective, slow all_gather, so they are not kept or climbed to; both end on A=2, as the grid.
for st in halving descent; do
    expect_exit 0 "sweep --workload mix.json --strategy $st" -- sweep --out "mix-$st" --workload mix.json --strategy "$st"
    expect_exit 0 "gen of it" -- "$TOPOTUNE" gen --runs "mix-$st" --profiles "p-mix-$st"
    check "$st chooses A=2" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert {v["name"]: v["value"] for v in p["variables"]} == {"NCCL_FAKE_A": "2"}, p["summary"]' "$(profile "p-mix-$st")"
done
# verify predicts all_reduce by default: a workload profile's allgather row is said not verified
# (with the option that shows it), not counted as fitting this run; -C all_gather counts it (the
# sweep's 1 node x 1 rank: not this spec's 8 ranks).
expect_exit 0 "verify a workload profile" -- "$TOPOTUNE" verify "$(ls -d p-mix/*/v1)" \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --nodes 1 -b 1M -e 1M
check "0 all_reduce rows, its allgather row not verified" sh -c "grep -q '0 of its 0 all_reduce row(s) fit' '$TEST_TMP/out' &&
    grep -q '^# 1 row(s) for all_gather are not verified by this run: verify -C all_gather shows them' '$TEST_TMP/out'"
expect_exit 0 "verify -C all_gather" -- "$TOPOTUNE" verify "$(ls -d p-mix/*/v1)" -C all_gather \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --nodes 1 -b 1M -e 4M --json
check "all_gather: its row counted, none left unverified" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["collective"] == "all_gather" and d["table_rows_collective"] == 1, d
assert d["table_rows_fitting"] == 0 and d["table_rows_not_verified"] == 0, d
' "$TEST_TMP/out"
expect_exit 2 "verify -C alltoall: no tuner is asked" -- "$TOPOTUNE" verify "$(ls -d p-mix/*/v1)" -C alltoall \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
expect_stderr_has "asks no tuner" "said why"
# The mpi backend cannot reduce half or bfloat16 (MPI has neither): refused before the first run,
# naming the collective; a workload that only moves data runs.
cat >mpi-half.json <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "dtype": "half", "sizes": {"min": "1M", "max": "4M"},
 "vars": {"NCCL_FAKE_A": [null]}, "repeat": 1, "timeout_s": 5}
JSON
half() { env TOPOTUNE_BENCH_PROGRAM="$fake" "$TOPOTUNE" sweep --space mpi-half.json -q "$@"; }
expect_exit 2 "an FSDP workload in half on the mpi backend" -- half --out mh --workload fsdp
expect_stderr_has "cannot run reduce_scatter with dtype half" "names the collective that reduces"
check "nothing run" test ! -e mh/results.jsonl
expect_exit 2 "all_reduce in half on the mpi backend" -- half --out mh0
cat >ag-only.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [{"collective": "all_gather", "size": 1048576, "weight": 1}]}
JSON
expect_exit 0 "all_gather alone in half on the mpi backend" -- half --out mh1 --workload ag-only.json
expect_exit 1 "NCCL's defaults crash in one collective of the mix" -- env FAKE_CRASH_COLL=all_gather \
    TOPOTUNE_BENCH_PROGRAM="$fake" "$TOPOTUNE" sweep --space space.json -q --out crash --workload mix.json
expect_stderr_has "the NCCL-defaults baseline never ran ok" "the defaults' run is not ok when one collective crashed"
expect_stderr_has "12 runs (24 lines, one per collective of the workload)" "runs counted as runs"
expect_exit 2 "resume with another workload" -- sweep --out mix --workload fsdp --resume
expect_stderr_has "it was swept with another workload (all_reduce at 4194304 B weighs 0.7 in the recorded workload and nothing in the other)" \
    "resume: says what differs, whole"
expect_exit 2 "resume without the workload" -- sweep --out mix --resume
expect_stderr_has "it was swept for a workload (--workload), this sweep gives none" "said, not 'null'"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["entries"].reverse(); json.dump(d, open(sys.argv[2], "w"))' mix.json mix-reversed.json
expect_exit 0 "resume with the same entries in another order" -- sweep --out mix --workload mix-reversed.json --resume
echo '{"schema": "topotune/workload/1", "entries": [{"collective": "gather", "size": 8, "weight": 1}]}' >bad.json
expect_exit 2 "a workload with an unknown collective" -- sweep --out bad --workload bad.json
expect_stderr_has "entries[0].collective: one of all_reduce" "bad workload: names the entry"
for bad in '"size": 0, "weight": 1' '"size": 8, "weight": 2' '"size": 8, "weight": 0' '"size": "8", "weight": 1'; do
    echo "{\"schema\": \"topotune/workload/1\", \"entries\": [{\"collective\": \"all_reduce\", $bad}]}" >bad.json
    expect_exit 2 "workload entry $bad" -- sweep --out bad --workload bad.json
    expect_stderr_lines 1 "workload entry $bad: one error"
done
expect_exit 2 "a workload without its schema" -- sweep --out bad --workload space.json
expect_stderr_has "schema: \"topotune/workload/1\" expected" "no schema: says which"
check "nothing was written for a refused workload" test ! -e bad
# The schema's fields only (a misspelt one is an error, not silently no weight); weights are
# scaled to add up to 1; a preset's name that is also a file here is ambiguous.
echo '{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 8, "typo_weigth": 1}]}' >bad.json
expect_exit 2 "a misspelt field in an entry" -- sweep --out bad --workload bad.json
expect_stderr_has 'entries[0]: unknown field "typo_weigth"' "names the field"
echo '{"schema": "topotune/workload/1", "wieghts": 1, "entries": [{"collective": "all_reduce", "size": 8, "weight": 1}]}' >bad.json
expect_exit 2 "an unknown field" -- sweep --out bad --workload bad.json
expect_stderr_has 'unknown field "wieghts"' "names it"
# every field the schema names is of its type (these were taken as they were)
for bad in '"calls": -5' '"calls": "x"'; do
    echo "{\"schema\": \"topotune/workload/1\", \"entries\": [{\"collective\": \"all_reduce\", \"size\": 8, \"weight\": 1, $bad}]}" >bad.json
    expect_exit 2 "workload entry $bad" -- sweep --out bad --workload bad.json
    expect_stderr_has "entries[0].calls" "$bad: named"
done
for bad in '"sources": 5' '"lines": "x"' '"totals": [1]' '"from": "elsewhere"' '"assumed": "yes"' \
    '"ranks_seen": -1' '"sources": [{"file": 1, "lines": 2}]' '"totals": {"all_reduce": {"calls": -1, "bytes": 8}}'; do
    echo "{\"schema\": \"topotune/workload/1\", $bad, \"entries\": [{\"collective\": \"all_reduce\", \"size\": 8, \"weight\": 1}]}" >bad.json
    expect_exit 2 "workload field $bad" -- sweep --out bad --workload bad.json
    expect_stderr_has "workload.schema.json" "$bad: the schema named"
done
# one weight per (collective, size): a second once made the file differ from itself, so that a
# sweep of it could never resume (and compare refused it)
echo '{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 1024, "weight": 0.3},
 {"collective": "all_gather", "size": 1024, "weight": 0.1}, {"collective": "all_reduce", "size": 1024, "weight": 0.6}]}' >dup.json
expect_exit 2 "a (collective, size) given twice" -- sweep --out bad --workload dup.json
expect_stderr_has "entries[2] repeats entries[0]'s all_reduce at 1024 B" "names both entries"
check "nothing was written for it" test ! -e bad
# a sweep recorded before that was refused holds such a workload: it counted as the sum, and gen
# and compare still read it (its two entries' weights added up)
cp -r mix mix-dup
python3 - mix-dup/sweep.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
e = m["workload"]["entries"]
half = dict(e[0], weight=e[0]["weight"] / 2)
m["workload"]["entries"] = [half, dict(half)] + e[1:]
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 0 "gen: a recorded workload with a (collective, size) twice" -- "$TOPOTUNE" gen --runs mix-dup --profiles p-dup
expect_exit 0 "compare reads it too" -- "$TOPOTUNE" compare mix-dup
expect_exit 0 "its profile, compared for the summed workload" -- "$TOPOTUNE" compare p-dup/*/latest --workload mix.json
check "the same workload: its pair's weights summed, not the last one's" bash -c "! grep -q 'another workload' '$TEST_TMP/out' '$TEST_TMP/err'"
cat >two.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [
  {"collective": "all_reduce", "size": 4194304, "weight": 1},
  {"collective": "all_gather", "size": 8388608, "weight": 1}]}
JSON
expect_exit 0 "weights adding up to 2" -- sweep --out two --workload two.json
check "are read as halves" python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["workload"]["entries"]
assert [e["weight"] for e in w] == [0.5, 0.5], w' two/sweep.json
cp mix.json fsdp
expect_exit 2 "a file named like a preset" -- sweep --out amb --workload fsdp
expect_stderr_has "give ./fsdp for the file" "says how to name the file"
expect_exit 0 "./ names the file" -- sweep --out amb --workload ./fsdp
rm fsdp

# A workload run's deadline grows with the sizes it measures, not the space's: a benchmark
# that takes 2 s (fake-bench.sh mode slow) within a 1 s per-stage timeout over the 28 sizes
# from 8 B to 1 GiB has 8 s (1 x (1 + 28 / 4)); the space's one size would give it 1.25 s.
slow=$TEST_TMP/slow-bench
fake_bench "$slow" slow
cat >one-size.json <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "1M", "max": "1M"},
 "vars": {"NCCL_FAKE_A": [null]}, "repeat": 1, "timeout_s": 1}
JSON
cat >wide.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [
  {"collective": "all_reduce", "size": 8, "weight": 0.5},
  {"collective": "all_reduce", "size": 1073741824, "weight": 0.5}]}
JSON
expect_exit 0 "a workload run over 28 sizes" -- env TOPOTUNE_BENCH_PROGRAM="$slow" "$TOPOTUNE" sweep \
    --space one-size.json -q --workload wide.json --out wide
check "its deadline counts its own sizes: ok, not a timeout" python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][0]
assert r["outcome"] == "ok" and r["deadline_s"] == 8, (r["outcome"], r.get("stage"), r["deadline_s"])
' wide/results.jsonl

# gen refuses to mix an all_reduce sweep with a workload sweep, in either order.
expect_exit 2 "gen: an all_reduce sweep and a workload sweep" -- "$TOPOTUNE" gen --runs ar mix --profiles p-x
expect_stderr_has "optimised different workloads" "gen: says the workloads differ"
expect_exit 2 "gen: the other order" -- "$TOPOTUNE" gen --runs mix ar --profiles p-x

# A real job's log: a call with no data (count 0) weighs nothing and is left out; a tiny
# all_gather (8 bytes of 2 ranks) still measures: its run goes up to one 16-byte part per rank.
cat >job.log <<'LOG'
h:1:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 0 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4
h:1:2 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x2 count 1048576 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4
h:1:2 [0] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff 0x2 count 1 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4
LOG
expect_exit 0 "workload from the log" -- "$TOPOTUNE" workload --from-nccl-log job.log --json --out job.json
cat >tiny.json <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "1M"},
 "vars": {"NCCL_PROTO": [null, "Simple"]}, "repeat": 2}
JSON
expect_exit 0 "sim sweep of the log's workload" -- "$TOPOTUNE" sweep --space tiny.json -q --workload job.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out joblog
check "every run ok; all_gather measured from 8 B up to a part per rank" python3 - joblog <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
assert runs and all(r["outcome"] == "ok" for r in runs), [(r["collective"], r["outcome"], r.get("stage")) for r in runs]
ag = [s["size"] for r in runs if r["collective"] == "all_gather" for s in r["sizes"]]
assert min(ag) >= 8 * 16 and min(ag) <= 256, ag
w = json.load(open(sys.argv[1] + "/sweep.json"))["workload"]
assert all(e["size"] > 0 for e in w["entries"]) and w["from"] == "nccl-log" and w["assumed"] is False, w
PY

# A results line naming a collective otherwise than the sweep writes it is refused, not ignored.
cp -r mix mix-edited
sed -i '1s/"collective":"[a-z_]*"/"collective":"AllGather"/' mix-edited/results.jsonl
expect_exit 2 "gen: a collective spelt otherwise" -- "$TOPOTUNE" gen --runs mix-edited --profiles p-e
expect_stderr_has "collective: expected one of all_reduce" "gen: names the field"

# The sim with the FSDP preset on the HGX H100 spec: the profile's evidence covers
# reduce_scatter and all_gather at the preset's sizes.
# A mix of tiny calls (predicted on the spec): its effective algbw keeps its digits, not 0.00.
cat >tiny-mix.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 8, "weight": 1}]}
JSON
expect_exit 0 "sim sweep --workload of 8-byte calls" -- "$TOPOTUNE" sweep --space tiny.json -q \
    --workload tiny-mix.json --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out tinymix
expect_exit 0 "gen of it" -- "$TOPOTUNE" gen --runs tinymix --profiles p-tiny
check "its summary's figures are not 0.00" python3 -c '
import json, re, sys
s = json.loads(sys.argv[1])["summary"]
assert re.search(r"effective algbw 0\.0\d*[1-9]", s) and "0.00 GB/s" not in s, s
' "$(profile p-tiny)"
# ... and carries its band: the mix's, all_reduce's at 8 B (the band expect gives there).
"$TOPOTUNE" expect --input "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" -b 8 -e 8 --format json >tiny-expect.json
check "its summary's predicted figure with the mix's band" python3 -c '
import json, re, sys
s = json.loads(sys.argv[1])["summary"]
v, lo, hi = (float(x) for x in re.search(r"effective algbw ([0-9.]+) GB/s \[band ([0-9.]+)-([0-9.]+)\]", s).groups())
e = json.load(open(sys.argv[2]))["sizes"][0]
assert abs(lo / v - e["low"] / e["busbw"]) < 0.02 and abs(hi / v - e["high"] / e["busbw"]) < 0.05, (s, e)
' "$(profile p-tiny)" tiny-expect.json
# A weighted size off the doubling grid from the smallest (8 B and 1000 B: 8 x 2^k never hits
# 1000) lies between two measured sizes, not extrapolated from 512 B at twice its time.
cat >offgrid.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 8, "weight": 0.5},
  {"collective": "all_reduce", "size": 1000, "weight": 0.5}]}
JSON
cat >ongrid.json <<'JSON'
{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 1000, "weight": 1}]}
JSON
for w in offgrid ongrid; do
    "$TOPOTUNE" sweep --space tiny.json -q --workload "$w.json" \
        --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out "sw-$w" 2>/dev/null
    "$TOPOTUNE" gen --runs "sw-$w" --profiles "p-$w" >/dev/null 2>&1
done
check "1000 B read within 5% of its own measurement" python3 -c '
import json, sys
t = [{e["size"]: e["time_us"] for e in json.loads(a)["evidence"]}[1000] for a in sys.argv[1:]]
assert abs(t[0] / t[1] - 1) < 0.05, t
' "$(profile p-offgrid)" "$(profile p-ongrid)"
cat >sim.json <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "16M", "factor": 4},
 "vars": {"NCCL_PROTO": [null, "LL", "Simple"]}, "repeat": 2}
JSON
expect_exit 0 "sim sweep, FSDP preset" -- "$TOPOTUNE" sweep --space sim.json -q --workload fsdp \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out fsdp
expect_exit 0 "gen, FSDP" -- "$TOPOTUNE" gen --runs fsdp --profiles p-fsdp
check "FSDP evidence: reduce_scatter and all_gather, predicted" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert p["predicted"] is True
ev = {(e["collective"], e["size"]) for e in p["evidence"]}
assert ev == {(c, s) for c in ("all_gather", "reduce_scatter") for s in (16 << 20, 128 << 20)}, ev
assert all(e["time_us"] > 0 and e["baseline_time_us"] > 0 for e in p["evidence"]), p["evidence"]
' "$(profile p-fsdp)"
# An edited sweep.json's mix with entries of no weight (one of size 0): gen used the copy as it
# was, and wrote evidence for them, size 0 included, which the profile schema refuses.
cp -r fsdp fsdp-edited
python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
m["workload"]["entries"] += [{"collective": "all_reduce", "size": 0, "weight": 0},
                             {"collective": "all_gather", "size": 4096, "weight": 0}]
json.dump(m, open(sys.argv[1], "w"))' fsdp-edited/sweep.json
expect_exit 0 "gen, an edited mix" -- "$TOPOTUNE" gen --runs fsdp-edited --profiles p-edited
check "the profile as for the mix itself, and valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/profile.schema.json" "$(ls p-edited/*/v1/profile.json)"
# The buyer's view weighted by the same mix: two specs predicted for FSDP, per input the mix's
# effective algbw, per 1,000 of the price per GPU, and each (collective, size)'s time, all predicted.
cat >cmp-space.json <<'JSON'
{"schema": "topotune/space/1", "backend": "nccl", "sizes": {"min": "1M", "max": "16M", "factor": 4},
 "vars": {"NCCL_PROTO": [null, "Simple"]}, "repeat": 1}
JSON
expect_exit 0 "compare --workload fsdp" -- "$TOPOTUNE" compare --workload fsdp --nodes 2 \
    --space cmp-space.json --price hgx-h100=300 --price dgx-a100=150 --json cmp.json --html cmp.html \
    "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" "$TOPOTUNE_SRC/profiles/specs/dgx-a100.json"
check "compare: the workload's table, every number predicted" python3 - "$TEST_TMP/out" cmp.json <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
assert "== The workload: its effective algbw and each (collective, size)" in text, text
rows = [l for l in text.splitlines() if l.startswith(("effective algbw", "chosen GB/s", "all_gather", "reduce_scatter"))]
assert len(rows) == 7 and all(l.count("predicted") == 2 for l in rows), rows
doc = json.load(open(sys.argv[2]))
bw = {i["label"]: i["profile"]["baseline"]["objective"] for i in doc["inputs"]}
assert bw["hgx-h100"] > bw["dgx-a100"] > 0, bw
assert all({e["collective"] for e in i["profile"]["evidence"]} == {"all_gather", "reduce_scatter"}
           for i in doc["inputs"])
PY
check "compare: the mix and its collectives take their group's band (x 0.460 to x 1.929), not all_reduce's" \
    python3 - "$TEST_TMP/out" <<'PY'
import re, sys
for l in open(sys.argv[1]).read().splitlines():
    for v, lo, hi in re.findall(r"([0-9.,]+) \(([0-9.,]+)-([0-9.,]+)\) predicted", l):
        v, lo, hi = (float(x.replace(",", "")) for x in (v, lo, hi))
        if l.startswith("effective algbw"):  # busbw x 0.460 to x 1.929 (all_reduce: 0.822)
            assert abs(lo / v - 0.460) < 0.01 and abs(hi / v - 1.929) < 0.01, l
        if l.startswith(("all_gather", "reduce_scatter")):  # a time: / 1.929 to / 0.460
            assert abs(v / hi - 0.460) < 0.01 and abs(v / lo - 1.929) < 0.02, l
PY
check "compare: a plot per collective of the mix, each input's curves predicted, one banded" python3 - cmp.html <<'PY'
import re, sys
page = open(sys.argv[1]).read()
plots = re.findall(r"<svg.*?</svg>", page, flags=re.S)
by = {c: [p for p in plots if c + " in the workload: time per call" in p]
      for c in ("all_gather", "reduce_scatter")}
assert all(len(v) == 1 for v in by.values()), {c: len(v) for c, v in by.items()}
for c, (svg,) in by.items():
    titles = re.findall(r"<title>([^<]*(?:chosen|defaults)[^<]*)</title>", svg)
    curves = [t for t in titles if ": band" not in t]
    assert sorted(curves) == sorted(f"{i} {w} (predicted)" for i in ("hgx-h100", "dgx-a100")
                                    for w in ("chosen", "defaults")), (c, curves)
    bands = sorted(t for t in titles if ": band" in t)  # each input's reference curve, shaded
    assert len(bands) == 2 and all(re.fullmatch(r"(hgx-h100|dgx-a100) (chosen|defaults): band \(predicted\)", b)
                                   for b in bands) and bands[0][:8] != bands[1][:8], bands
ids = re.findall(r"id='([^']*)'", page)
assert len(ids) == len(set(ids)), "element ids repeat across plots"
PY
# A profile is untrusted: evidence naming 40 collectives that do not exist draws no plot for them
# (each was a gnuplot run), and the two real ones are drawn once each.
cp -r p-fsdp p-bogus
python3 - p-bogus/*/v1/profile.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["evidence"] += [dict(p["evidence"][0], collective="bogus%d" % i) for i in range(40)]
p["evidence"] += [dict(p["evidence"][0])]
json.dump(p, open(sys.argv[1], "w"))
PY
expect_exit 0 "compare: a profile with made-up collectives" -- "$TOPOTUNE" compare --html bogus.html \
    p-bogus/*/v1
check "two plots, one per real collective" test "$(grep -c '<svg' bogus.html)" = 2
# An all_reduce-only NCCL_ALGO leaves the workload's all_gather its own algorithms, as NCCL and
# the sim do: every predicted run of the mix is ok (2 runs: 2 configurations, a line per collective).
cat >nvls.json <<'JSON'
{"schema": "topotune/space/1", "backend": "nccl", "sizes": {"min": "1M", "max": "16M", "factor": 4},
 "vars": {"NCCL_ALGO": [null, "allreduce:nvls"]}, "repeat": 1}
JSON
expect_exit 0 "compare: all_reduce-only NCCL_ALGO" -- "$TOPOTUNE" compare --workload fsdp --space nvls.json \
    --json - "$TOPOTUNE_SRC/profiles/specs/dgx-a100.json"
check "compare: every predicted run ok" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["inputs"][0]["profile"]
assert p["sweep"]["outcomes"] == {"ok": 2}, p["sweep"]' "$TEST_TMP/out"
# A run of a mix is ok only when every collective of it is: with NCCL_ALGO=Tree fixed all_gather
# fails in every run while all_reduce runs ok. The sweep, its metrics, gen's exit status and the
# profile counted the 6 ok all_reduce lines as 6 ok runs (gen exited 0 with nothing to recommend).
cat >tree.json <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "16M", "factor": 4},
 "vars": {"NCCL_PROTO": [null, "Simple"]}, "fixed": {"NCCL_ALGO": "Tree"}, "repeat": 2, "iters": 5,
 "warmup": 1, "timeout_s": 20, "cv_max": 0.05}
JSON
expect_exit 1 "a mix whose all_gather never runs" -- "$TOPOTUNE" sweep --backend sim --space tree.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --workload mix.json --out s-tree --seed 1 \
    --metrics tree.prom
expect_stderr_has "6 runs (12 lines, one per collective of the workload): 6 error" "runs counted, not lines"
check "metrics count runs" grep -qx 'topotune_sweep_runs{class="[^"]*",outcome="ok"} 0' tree.prom
expect_exit 1 "gen: no run of the mix was ok" -- "$TOPOTUNE" gen --runs s-tree --profiles p-tree
check "the profile counts runs" python3 -c '
import glob, json, sys
p = json.load(open(glob.glob("p-tree/*/v1/profile.json")[0]))
assert (p["sweep"]["runs"], p["sweep"]["outcomes"]) == (6, {"error": 6}), p["sweep"]'

# Versions chosen for different objectives: diff showed a workload's effective algbw against
# all_reduce's busbw as a change of one number.
expect_exit 0 "gen, the mix into one store" -- "$TOPOTUNE" gen --runs mix --profiles p-both
expect_exit 0 "gen, all_reduce alone into it" -- "$TOPOTUNE" gen --runs ar --profiles p-both
expect_exit 0 "profiles diff" -- "$TOPOTUNE" profiles --profiles p-both diff "$(basename "$(ls -d p-both/*/)")"
check "not comparable, each said" grep -q "effective algbw of its workload -> .* mean busbw of all_reduce (not comparable: chosen for different workloads)" "$TEST_TMP/out"

# A mix of 1-byte calls: its effective algbw is tiny, and was written 3.39e-05.
printf '%s\n' '{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 1, "weight": 1}]}' >tiny.json
expect_exit 0 "sim sweep, a mix of 1-byte calls" -- "$TOPOTUNE" sweep --space tree.json -q --workload tiny.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out tiny
no_exponent() { ! grep -qE "[0-9]e[-+][0-9]" "$1"; }
check "no exponent in what gen will choose" no_exponent "$TEST_TMP/err"
check "the number written out" grep -qE "effective algbw 0\.0000[0-9]+ GB/s" "$TEST_TMP/err"
expect_exit 0 "the same with its progress lines" -- "$TOPOTUNE" sweep --space tree.json --workload tiny.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out tiny-progress
check "progress in three significant digits, not 0.00" python3 - "$TEST_TMP/err" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("[")]
assert lines and all(re.search(r"ok 0\.0000\d+ GB/s predicted \| best 0\.0000\d+ GB/s", l) for l in lines), lines[:2]
PY

# Profiles side by side must share a mix: one made for FSDP is not lined up with dp's predictions,
# nor an all_reduce profile with a workload one.
p_fsdp=$(ls -d p-fsdp/*/v1)
p_ar=$(ls -d p-ar/*/v1)
p_mix=$(ls -d p-mix/*/v1)
expect_exit 2 "compare --workload dp with a profile made for FSDP" -- "$TOPOTUNE" compare --workload dp \
    "$p_fsdp" "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
expect_stderr_has "was chosen for another workload" "refused, and said"
expect_exit 2 "an all_reduce profile beside a workload one" -- "$TOPOTUNE" compare "$p_mix" "$p_ar"
expect_stderr_has "was chosen for all_reduce alone" "refused, and said"
expect_exit 0 "the FSDP profile with --workload fsdp" -- "$TOPOTUNE" compare --workload fsdp \
    "$p_fsdp" "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
# Only a slowdown beyond the noise, at a size that carries weight, vetoes a configuration: values
# equal to NCCL's own defaults (no-ops) over a mix of 28 sizes (4 of 7 were vetoed on the sim's
# per-size noise), and a 4-byte entry with a billionth of the bytes (Simple vetoed "at 4 B").
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "8", "max": "1G", "factor": 4},
 "objective": {"min": "1M", "max": "1G"}, "vars": {"NCCL_BUFFSIZE": [null, "4194304"],
 "NCCL_NTHREADS": [null, "512"], "NCCL_P2P_NVL_CHUNKSIZE": [null, "524288"]}, "repeat": 2, "iters": 20,
 "warmup": 5, "timeout_s": 60, "cv_max": 0.05}' >noop.json
python3 -c 'import json
print(json.dumps({"schema": "topotune/workload/1", "entries": [
    {"collective": "all_reduce", "size": 8 << i, "weight": 1 / 28} for i in range(28)]}))' >many.json
expect_exit 0 "sim sweep of no-op values over 28 sizes" -- "$TOPOTUNE" sweep --space noop.json -q \
    --workload many.json --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out noop
expect_exit 0 "gen of it" -- "$TOPOTUNE" gen --runs noop --profiles p-noop
check "no no-op value vetoed" python3 -c 'import glob, json
p = json.load(open(glob.glob("p-noop/*/v1/profile.json")[0]))
assert not p.get("rejected"), p["rejected"]'
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "4", "max": "256M", "factor": 4},
 "vars": {"NCCL_PROTO": [null, "Simple", "LL"]}, "repeat": 2, "iters": 20, "warmup": 5, "timeout_s": 60,
 "cv_max": 0.05}' >proto.json
printf '%s\n' '{"schema": "topotune/workload/1", "entries": [
 {"collective": "all_reduce", "size": 268435456, "weight": 0.999999999},
 {"collective": "all_reduce", "size": 4, "weight": 0.000000001}]}' >bytes.json
expect_exit 0 "sim sweep, a 4-byte entry with a billionth of the bytes" -- "$TOPOTUNE" sweep --space proto.json -q \
    --workload bytes.json --topology "$TOPOTUNE_SRC/profiles/specs/dgx-a100.json" --out bytes
expect_exit 0 "gen of it" -- "$TOPOTUNE" gen --runs bytes --profiles p-bytes
check "no configuration vetoed at 4 B" python3 -c 'import glob, json
p = json.load(open(glob.glob("p-bytes/*/v1/profile.json")[0]))
assert not any(r["size"] == 4 for r in p.get("rejected", [])), p["rejected"]'
# A flat mix of 300 sizes, none of which alone takes 1% of its time: LL, about twice as slow at
# every one of them, is vetoed (an entry had to take 1% alone to be judged, and none was).
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1G", "max": "8G", "factor": 2},
 "vars": {"NCCL_PROTO": [null, "LL"]}, "repeat": 2, "iters": 20, "warmup": 5, "timeout_s": 60, "cv_max": 0.05}' >ll.json
python3 -c 'import json
print(json.dumps({"schema": "topotune/workload/1", "entries": [
    {"collective": "all_reduce", "size": (1 << 30) + i * (16 << 20), "weight": 1 / 300} for i in range(300)]}))' >flat.json
expect_exit 0 "sim sweep, a flat mix of 300 sizes" -- "$TOPOTUNE" sweep --space ll.json -q --workload flat.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out flat
expect_exit 0 "gen of it" -- "$TOPOTUNE" gen --runs flat --profiles p-flat
check "LL vetoed" python3 -c 'import glob, json
p = json.load(open(glob.glob("p-flat/*/v1/profile.json")[0]))
assert [r["env"] for r in p.get("rejected", [])] == [{"NCCL_PROTO": "LL"}], p.get("rejected")'
# A resumed workload sweep's best so far is the mix's, of the runs it reuses (it was one
# collective's busbw, all_gather's at 64 MiB: nearly 4x the mix's).
printf '%s\n' '{"schema": "topotune/workload/1", "entries": [{"collective": "all_reduce", "size": 1048576, "weight": 0.3},
 {"collective": "all_gather", "size": 67108864, "weight": 0.7}]}' >mix2.json
quick=$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json
"$TOPOTUNE" sweep --backend sim --space "$quick" --workload mix2.json --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" \
    --out whole >/dev/null 2>whole.err
best=$(grep -o '| best [0-9.]* GB/s' whole.err | tail -1)
cp -r whole cut
python3 - cut/results.jsonl <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
order = list(dict.fromkeys(r["config_id"] for r in runs))
open(sys.argv[1], "w").writelines(json.dumps(r) + "\n" for r in runs if r["config_id"] not in order[-4:])
PY
expect_exit 0 "a workload sweep resumed" -- "$TOPOTUNE" sweep --backend sim --space "$quick" --workload mix2.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out cut --resume
check "every progress line's best the whole sweep's ($best)" python3 - "$TEST_TMP/err" "$best" <<'PY'
import sys
lines = [l for l in open(sys.argv[1]) if l.startswith("[")]
assert sys.argv[2] and lines and all(sys.argv[2] + " " in l for l in lines), (sys.argv[2], lines[:2])
PY
# A workload from a 2-rank job's AllGather lines records its communicator's size; a sweep of 8
# ranks runs each rank a quarter of the job's part, which it says (it said nothing).
printf '%s\n' 'h:1:2 [0] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff 0x2 count 2097152 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4' \
    'h:1:3 [1] NCCL INFO AllGather: opCount 3 sendbuff 0x1 recvbuff 0x2 count 2097152 datatype 7 op 0 root 0 comm 0x4 [nranks=2] stream 0x4' >ag2.log
expect_exit 0 "a workload of a 2-rank all_gather" -- "$TOPOTUNE" workload --from-nccl-log ag2.log --out ag2.json
check "its communicator's size recorded" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["entries"][0]["size"] == 16777216, d' ag2.json
expect_exit 0 "swept on 8 ranks" -- "$TOPOTUNE" sweep --backend sim --space "$quick" --workload ag2.json \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --out ag2
expect_stderr_has "the workload's all_gather sizes are its job's 2-rank communicator's" "said"
expect_stderr_has "this sweep runs 8 ranks, so each rank's part is smaller than the job's" "and what it means"
finish
