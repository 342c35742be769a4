#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A benchmark, not a test: does topotune-bench's harness add anything measurable?
# Runs topotune-bench --backend mpi and a minimal MPI_Allreduce loop interleaved, RUNS times
# each (default 5), 2 ranks, 8 B to 4 MiB, and prints per size the median out-of-place time of
# each and their ratio. Target: every ratio within 10% of 1.
# usage: bench/perf/compare.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${RUNS:-5}
iters=${ITERS:-50}
flags=(-np 2 --mca btl "self,vader,tcp")
[ "$(id -u)" = 0 ] && flags+=(--allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$runs"); do
    mpirun "${flags[@]}" "$build/topotune-bench" --backend mpi -b 8 -e 4M -f 2 -n "$iters" -w 5 -c 0 \
        --json "$tmp/tt-$r.jsonl" >/dev/null
    mpirun "${flags[@]}" "$build/bench/perf/allreduce-loop" "$iters" 5 >"$tmp/ref-$r.txt"
done
python3 - "$tmp" "$runs" <<'PY'
import json, math, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
tt, ref = {}, {}
for r in range(1, runs + 1):
    for line in open(f"{tmp}/tt-{r}.jsonl"):
        e = json.loads(line)
        if e["event"] == "size":
            tt.setdefault(e["size"], []).append(e["time_us"])
    for line in open(f"{tmp}/ref-{r}.txt"):
        size, t = line.split()
        ref.setdefault(int(size), []).append(float(t))
print(f"{'size':>10} {'topotune us':>12} {'minimal us':>11} {'ratio':>7}")
worst, logs = 0, []
for size in sorted(ref):
    a, b = statistics.median(tt[size]), statistics.median(ref[size])
    worst = max(worst, abs(a / b - 1))
    logs.append(math.log(a / b))
    print(f"{size:>10} {a:>12.2f} {b:>11.2f} {a / b:>7.3f}")
print(f"largest deviation from 1: {worst * 100:.1f}% (target: within 10%)")
print(f"geometric mean ratio: {math.exp(sum(logs) / len(logs)):.3f} (systematic overhead; the rest is noise)")
PY
