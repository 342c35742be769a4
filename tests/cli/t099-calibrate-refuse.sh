#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune calibrate writes no file it cannot stand behind: a damaged measured busbw (1e-300 GB/s,
# or the smallest double, whose relative error is infinite) made it write a fit with a mean error
# of 2.8e303% without a word, or '{}' with exit 0. Such fits, parameters outside what a
# calibration file may hold, and a held-out check that cannot be computed are refused: exit 1,
# the point furthest off named, and the file left as it was. So is a fit from too few runs: one
# size, or fewer than 3 points for each parameter the fit settles (one configuration at 256 MiB,
# 512 MiB and 1 GiB, made with the defaults, moved fill_bytes to 4.4 MiB on the noise). Runs the
# model cannot describe (another rank count than every GPU of the node, a configuration it predicts
# to fail) were fitted or dropped without a word: they are left out, and said so. A sweep given
# twice is refused, and so is --out naming one of a sweep's own files.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
cat >space.json <<'JSON'
{
  "schema": "topotune/space/1",
  "backend": "nccl",
  "collective": "all_reduce",
  "sizes": {"min": "1M", "max": "1G", "factor": 2},
  "dtype": "float",
  "op": "sum",
  "objective": {"min": "1M", "max": "1G"},
  "vars": {"NCCL_PROTO": [null, "Simple"]},
  "repeat": 1,
  "iters": 20,
  "warmup": 5,
  "timeout_s": 60,
  "cv_max": 0.05
}
JSON
expect_exit 0 "sim sweep" -- "$TOPOTUNE" -q sweep --backend sim \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --space space.json --out good
expect_exit 0 "the sweep as measured calibrates" -- "$TOPOTUNE" calibrate --runs good --out ok.json

# damage DIR VALUE: the last size of the first run measured VALUE GB/s.
damage() {
    rm -rf "$1"
    cp -r good "$1"
    python3 - "$1/results.jsonl" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows[0]["sizes"][-1]["busbw"] = float(sys.argv[2])
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in rows))
PY
}
printf 'an older calibration\n' >keep.json
damage tiny 1e-300
expect_exit 1 "a fit off by 1e301%" -- "$TOPOTUNE" calibrate --runs tiny --out keep.json
expect_stderr_has "calibration not written to 'keep.json': the fit is not usable" "refused"
expect_stderr_has "the model cannot explain these runs" "why said"
expect_stderr_has "the point furthest from it: 'tiny', configuration" "the point named"
expect_stderr_has "1073741824 B: measured 1e-300 GB/s" "its size and value"
check "the file left as it was" grep -qx 'an older calibration' keep.json
check "no 300-digit number printed" test "$(wc -L <"$TEST_TMP/out")" -lt 300
expect_exit 1 "the same, written nowhere before" -- "$TOPOTUNE" calibrate --runs tiny --out new.json
expect_no_file new.json "nothing written"

damage denormal 5e-324
expect_exit 1 "an infinite error" -- "$TOPOTUNE" calibrate --runs denormal --out inf.json
expect_stderr_has "its error is not a number (inf%)" "why said"
expect_no_file inf.json "no '{}' written"

# Held out: the fit itself is fine, its check on the larger sizes is not a number.
expect_exit 1 "a damaged held-out size" -- "$TOPOTUNE" calibrate --runs denormal --fit-max 256M \
    --out held.json
expect_stderr_has "the fit predicts the sizes above --fit-max with a mean |error| of inf%" "why said"
expect_no_file held.json "nothing written"

# Runs the model cannot describe. edit DIR PYTHON: PYTHON changes rows[0], the baseline's run.
edit() {
    rm -rf "$1"
    cp -r good "$1"
    python3 - "$1/results.jsonl" "$2" <<'PY'
import json, sys
def cid(env):  # sweep_config_id: FNV-1a over the sorted NAME=value lines, 12 hex digits
    h = 1469598103934665603
    for k in sorted(env):
        for ch in ("%s=%s\n" % (k, env[k])).encode():
            h = ((h ^ ch) * 1099511628211) & (2**64 - 1)
    return "%012x" % (h >> 16)
rows = [json.loads(l) for l in open(sys.argv[1])]
r = rows[0]
exec(sys.argv[2])
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in rows))
PY
}
# Four ranks on the 8-GPU node, at half the busbw: not the system the model predicts.
edit np4 'r["ranks"] = 4
for s in r["sizes"]: s["busbw"] *= 0.5'
expect_exit 0 "a run of 4 ranks among runs of 8" -- "$TOPOTUNE" calibrate --runs np4 --out np4.json
expect_stderr_has "'np4': 1 run(s) left out: they ran another number of ranks than the model predicts (8 per node" \
    "said"
check "its points left out, the fit as good as without it" python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["fit"]
assert f["points"] == 11 and f["mean_abs_error_pct"] < 5, f' np4.json
# Measured ok where the model predicts a failure (an unknown protocol name).
edit fault 'r["env"] = {"NCCL_PROTO": "Nope"}; r["config_id"] = cid(r["env"])'
expect_exit 0 "a run the model predicts to fail" -- "$TOPOTUNE" calibrate --runs fault --out fault.json
expect_stderr_has "'fault': 1 run(s) measured ok left out: the model predicts that their configuration fails" \
    "said"

# A result line twice, or an ok run without the shape it ran on, was fitted (as 4096 nodes, from
# sweep.json) though the result schema refuses it.
edit copied 'rows.append(dict(r))'
expect_exit 2 "a result line twice" -- "$TOPOTUNE" calibrate --runs copied --out copied.json
expect_stderr_has "line $(($(wc -l <good/results.jsonl) + 1)): the run of line 1 again" "said"
expect_no_file copied.json "nothing written"
edit shapeless 'del r["hosts"], r["nodes"], r["ranks"]'
expect_exit 2 "an ok run without its nodes" -- "$TOPOTUNE" calibrate --runs shapeless --out shapeless.json
expect_stderr_has "line 1: nodes: expected an integer from 1 to" "said"

# One sweep given twice would count each point twice.
expect_exit 2 "the same sweep twice" -- "$TOPOTUNE" calibrate --runs good --runs ./good/ --out twice.json
expect_stderr_has "--runs 'good' and './good/' are the same sweep: give each sweep once" "said"
expect_no_file twice.json "nothing written"
# Every run at half the busbw (a degraded system): a calibration absorbs it (nvls_scale 0.4,
# lat_scale 4) and predicted that system from then on, unsaid; it is said now.
edit halved '
for r in rows:
    for s in r["sizes"]:
        s["busbw"] /= 2; s["algbw"] /= 2; s["time_us"] *= 2'
"$TOPOTUNE" calibrate --runs halved --out halved.json >/dev/null 2>halved.err
check "a degraded system's runs: said ($(tail -n 1 halved.err))" grep -q "below the band where healthy systems of this hardware measure" halved.err
"$TOPOTUNE" calibrate --runs good --out good2.json >/dev/null 2>good.err
check "the sweep as measured: not said" bash -c "! grep -q 'below the band' good.err"
# Sweeps of two node classes: a calibration is one kind of node's (an H100 and an A100 sweep
# were fitted together, exit 0, a fit neither machine's).
expect_exit 0 "an A100 sim sweep" -- "$TOPOTUNE" -q sweep --backend sim \
    --topology "$TOPOTUNE_SRC/profiles/specs/dgx-a100.json" --space space.json --out a100
expect_exit 2 "sweeps of two classes" -- "$TOPOTUNE" calibrate --runs good --runs a100 --out mixed.json
expect_stderr_has "a calibration is one kind of node's" "said, both classes named"
expect_no_file mixed.json "nothing written"
# --out naming the sweep's own file would replace it with the calibration.
cp good/sweep.json sweep.before
expect_exit 2 "--out the sweep's sweep.json" -- "$TOPOTUNE" calibrate --runs good --out ./good/sweep.json
expect_stderr_has "--out './good/sweep.json' is the sweep's own sweep.json: name another file" "said"
check "sweep.json left as it was" cmp -s sweep.before good/sweep.json

# few SIZES: a space of NCCL's defaults alone at those sizes.
few() {
    sed -e "/\"sizes\"/s/\"min\": \"1M\", \"max\": \"1G\", \"factor\": 2/$1/" -e 's/\[null, "Simple"\]/[null]/' \
        space.json >few.json
}
few '"min": "1G", "max": "1G", "factor": 2'
expect_exit 0 "a sweep of one size" -- "$TOPOTUNE" -q sweep --backend sim \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --space few.json --out one-size
expect_exit 1 "a fit from one size" -- "$TOPOTUNE" calibrate --runs one-size --out one.json
expect_stderr_has "the runs are too few for this fit: it settles" "refused"
expect_stderr_has "one size cannot tell latency, fill and bandwidth apart (measure at least 3 sizes)" \
    "why said"
expect_no_file one.json "nothing written"
few '"min": "256M", "max": "1G", "factor": 2'
expect_exit 0 "a sweep of three sizes" -- "$TOPOTUNE" -q sweep --backend sim \
    --topology "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --space few.json --out three-sizes
expect_exit 1 "a fit from three points" -- "$TOPOTUNE" calibrate --runs three-sizes --out three.json
expect_stderr_has "from 3 point(s): at least" "refused"
expect_no_file three.json "nothing written"

# The documented statuses (1: the work failed): a sweep without an ok run, and a file that cannot
# be written, exited 255 and 3.
edit nothing-ok 'for r in rows: r.update(outcome="timeout", stage="warmup", sizes=[])'
expect_exit 1 "no ok run to fit" -- "$TOPOTUNE" calibrate --runs nothing-ok --out none.json
expect_stderr_has "no measured point to fit" "said"
expect_no_file none.json "nothing written"
expect_exit 1 "a folder that is not there" -- "$TOPOTUNE" calibrate --runs good --out no/such/c.json
finish
