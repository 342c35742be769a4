#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune-bench -C: every nccl-tests collective on 4 real MPI ranks (nccl-tests' table, counts and
# busbw factors, the JSON events), -c catching a corrupted result of each, -r, and the sim.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
check_py="$(dirname "$0")/bench-check.py"
colls="all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv"

# 64 B to 1 MiB by 4: 8 sizes, each holding a 16-byte part for every one of 4 ranks.
for c in $colls; do
    expect_exit 0 "$c on 4 ranks" -- mpirun_np 4 "$TOPOTUNE_BENCH" --backend mpi -C "$c" \
        -b 64 -e 1M -f 4 -n 2 -w 1 -c 2 --json "$TEST_TMP/$c.json"
    check "$c: nccl-tests' table" python3 "$check_py" text "$TEST_TMP/out" 4 8 "$c"
    check "$c: JSON events" python3 "$check_py" json "$TEST_TMP/$c.json" 4 8 "$c"
    # rank 0 (the root, for reduce) finds one element altered in its output, per size and
    # placement: 8 x 2 out of bounds, exit 7 as nccl-tests' wrong results
    expect_exit 7 "$c: corrupted result" -- mpirun_np 4 TOPOTUNE_BENCH_TEST_CORRUPT=0 \
        "$TOPOTUNE_BENCH" --backend mpi -C "$c" -b 64 -e 1M -f 4 -n 1 -w 0
    check "$c: corruption counted" grep -q "Out of bounds values : 16 FAILED" "$TEST_TMP/out"
done

# reduce: a non-root's buffer must stay as it was (nccl-tests checks it too): altered, it counts.
expect_exit 7 "reduce: a non-root's buffer altered" -- mpirun_np 3 TOPOTUNE_BENCH_TEST_CORRUPT=1 \
    "$TOPOTUNE_BENCH" --backend mpi -C reduce -b 1K -e 1K -n 1 -w 0
check "reduce: the non-root's change counted" grep -q "Out of bounds values : 2 FAILED" "$TEST_TMP/out"

# nccl-tests' program names and NCCL's spellings are the same collective.
expect_exit 0 "-C AllGather" -- mpirun_np 3 "$TOPOTUNE_BENCH" --backend mpi -C AllGather \
    -b 48 -e 48 -n 1 -w 0
check "3-rank all_gather table" python3 "$check_py" text "$TEST_TMP/out" 3 1 all_gather

# -r: another root, data moved in types MPI cannot reduce (half, bfloat16 as 16 bits).
for c in broadcast_perf reduce_perf; do
    for d in int8 half; do
        [ "$c" = reduce_perf ] && [ "$d" = half ] && continue
        expect_exit 0 "$c -r 2 -d $d" -- mpirun_np 3 "$TOPOTUNE_BENCH" --backend mpi -C "$c" -r 2 \
            -d "$d" -b 1K -e 4K -f 2 -n 1 -w 0 -c 2
        # shellcheck disable=SC2016 # awk's own $5
        check "$c -r 2: the root column" awk '!/^#/ && NF { if ($5 != 2) exit 1 }' "$TEST_TMP/out"
    done
done
expect_exit 6 "reduce -d half on MPI" -- mpirun_np 2 "$TOPOTUNE_BENCH" --backend mpi -C reduce \
    -d half -b 1K -e 1K
expect_stderr_has "MPI cannot reduce half or bfloat16" "reduce -d half: says why"
expect_exit 6 "-r past the ranks" -- "$TOPOTUNE_BENCH" --backend mpi -C broadcast -r 1 -b 1K -e 1K
expect_stderr_has "give a root from 0 to 0" "-r 1 on one rank: says the range"
expect_exit 6 "unknown collective" -- "$TOPOTUNE_BENCH" --backend mpi -C gather
expect_stderr_has "all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv" \
    "unknown collective: lists the names"
expect_exit 6 "no size holds a part per rank" -- mpirun_np 4 "$TOPOTUNE_BENCH" --backend mpi \
    -C alltoall -b 8 -e 32
expect_stderr_has "give -e at least 64" "alltoall at 32 B on 4 ranks: says the smallest size"

# The sim predicts every collective, labelled predicted, with nccl-tests' factors.
for c in $colls; do
    expect_exit 0 "sim $c" -- "$TOPOTUNE_BENCH" --backend sim -C "$c" \
        --topology "$TOPOTUNE_FIXTURES/../../profiles/specs/hgx-h100-2nodes.json" \
        -b 1K -e 1G -f 32 --json "$TEST_TMP/sim-$c.json"
    check "sim $c: predicted, nccl-tests' factor" python3 - "$TEST_TMP/sim-$c.json" "$c" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
factor = {"all_reduce": 2 * 15 / 16, "all_gather": 15 / 16, "reduce_scatter": 15 / 16,
          "alltoall": 15 / 16}.get(sys.argv[2], 1)
assert ev[0]["collective"] == sys.argv[2] and ev[0]["predicted"] and ev[0]["ranks"] == 16
sizes = [e for e in ev if e["event"] == "size"]
assert len(sizes) == 5
for e in sizes:
    assert e["predicted"] and e["collective"] == sys.argv[2]
    assert abs(e["busbw"] - e["algbw"] * factor) < 1e-9 * (1 + e["busbw"]), e
assert ev[-1]["outcome"] == "ok"
PY
done
check "sim: alltoall between nodes below all_gather at 1 GiB" python3 - "$TEST_TMP" <<'PY'
import json, sys
def at(c):
    return [json.loads(l) for l in open(f"{sys.argv[1]}/sim-{c}.json")][-2]["busbw"]
assert at("alltoall") < at("all_gather") / 2, (at("alltoall"), at("all_gather"))
PY
# topotune predict -C: the same model, nccl-tests' sizes (parts rounded to 16 bytes per rank).
spec="$TOPOTUNE_FIXTURES/../../profiles/specs/hgx-h100-2nodes.json"
expect_exit 0 "predict -C reduce_scatter" -- "$TOPOTUNE" predict --input "$spec" -C ReduceScatter \
    -b 1M -e 4M
check "predict: the collective named, labelled predicted" grep -q "^# PREDICTED reduce_scatter" "$TEST_TMP/out"
check "predict: three sizes" test "$(grep -c '^   predicted ' "$TEST_TMP/out")" -eq 3
expect_exit 0 "predict -C alltoall --json" -- "$TOPOTUNE" predict --input "$spec" -C alltoall \
    -b 1G -e 1G --json
check "predict --json: alltoall point to point, busbw x 15/16" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
s = [e for e in ev if e["event"] == "size"][0]
assert ev[0]["collective"] == "alltoall" and s["algo"] == "P2P", s
assert abs(s["busbw"] - s["algbw"] * 15 / 16) < 1e-9 * s["busbw"], s' "$TEST_TMP/out"
expect_exit 2 "predict -C unknown" -- "$TOPOTUNE" predict --input "$spec" -C gather
expect_stderr_has "expected one of all_reduce" "predict -C unknown: lists the names"

# The calibration report per collective runs on the published rows and names each collective.
check "calibrate-collectives.py reports every collective it has rows of" bash -c \
    "TOPOTUNE_BIN='$TOPOTUNE' python3 '$TOPOTUNE_SRC/bench/perf/calibrate-collectives.py' >'$TEST_TMP/cal' &&
     for c in all_gather alltoall broadcast reduce sendrecv all; do grep -q \"^\$c \" '$TEST_TMP/cal' || exit 1; done"
# ... and cuts the bands model/params.c holds: predict -C gives each group's band.
for c in reduce alltoall; do
    for size in 1M 1G; do
        "$TOPOTUNE" predict --input "$spec" -C "$c" -b "$size" -e "$size" >"$TEST_TMP/band-$c-$size"
    done
done
check "the bands predict gives are the ones calibrate-collectives.py cuts" python3 - "$TEST_TMP" <<'PY'
import re, sys
d = sys.argv[1]
cut = re.findall(r"band of a prediction P of ([a-z_, ]+) \(.*\n +small .*P x ([0-9.]+) to P x ([0-9.]+).*\n"
                 r" +large .*P x ([0-9.]+) to P x ([0-9.]+)", open(d + "/cal").read())
assert len(cut) == 2, cut
for group, *edges in cut:
    c = "reduce" if group.startswith("broadcast") else "alltoall"
    for size, (lo, hi) in (("1M", edges[:2]), ("1G", edges[2:])):
        row = [l.split() for l in open("%s/band-%s-%s" % (d, c, size)) if l.startswith("   predicted")][0]
        busbw, (plo, phi) = float(row[5]), map(float, row[8].split("-"))
        assert abs(plo / busbw - float(lo)) < 0.005 and abs(phi / busbw - float(hi)) < 0.005, (c, size, row, lo, hi)
PY
finish
