#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A benchmark, not a test: `topotune compare SPEC --workload FILE` (and `sweep`'s comparison of a
# recorded workload with a new one, workload_differs) on workloads of N and 8N (collective, size)
# entries, N = 2,000 by default: a workload may hold 100,000 (topotune workload writes that many
# from a job's log). It prints each time and their ratio; the target is at most 12: the work
# grows with the entries, and with the log of the sizes' range (8N entries span 8 times the
# sizes: each predicted line holds a few sizes more). A linear search per entry (before this
# benchmark) gave 21 at N = 1,000.
# usage: bench/perf/workload-scale.sh [BUILD_DIR]     N (default 2000)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
n=${N:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
seconds() { # seconds FILE: the wall time of compare on the workload FILE
    local start end
    start=$(date +%s%N)
    "$build/topotune" -q compare profiles/specs/hgx-h100.json --workload "$1" >/dev/null
    end=$(date +%s%N)
    echo "scale=3; ($end - $start) / 1000000000" | bc
}
for k in 1 8; do
    python3 - "$((n * k))" "$tmp/w$k.json" <<'PY'
import json, sys
n = int(sys.argv[1])
colls = ["all_reduce", "all_gather", "reduce_scatter", "alltoall"]
json.dump({"schema": "topotune/workload/1",
           "entries": [{"collective": colls[i % 4], "size": 4096 + 16 * i, "weight": 1 / n}
                       for i in range(n)]}, open(sys.argv[2], "w"))
PY
done
t1=$(seconds "$tmp/w1.json")
t8=$(seconds "$tmp/w8.json")
printf 'compare --workload: %d entries %.2f s, %d entries %.2f s, ratio %.1f (target <= 12)\n' \
    "$n" "$t1" "$((n * 8))" "$t8" "$(echo "scale=3; $t8 / $t1" | bc)"
