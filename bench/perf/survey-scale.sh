#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A benchmark, not a test: `topotune survey --backend sim` on simulated clusters of n = 16 to
# 4,096 HGX H100 nodes with random faults, against surveying every pair. Per n and seed it injects
# max(2, n/64) faults: slow nodes and slow network links (factor 0.2 to 0.7), dead nodes (no answer
# to the map) and one node that hangs in collectives, with 2% noise. It prints per n: precision and
# recall of the verdicts (a verdict is right when it names an injected host with the kind of its
# fault: slow-node -> node-slow, slow-link -> link-slow, dead -> node-unreachable, hang ->
# node-fails), the launches (rounds) made, and the PREDICTED wall time, next to all-pairs' n-1
# pair rounds. Targets, printed: precision and recall >= 0.95 at every n, launches growing no
# faster than log n.
# usage: bench/perf/survey-scale.sh [BUILD_DIR]     SEEDS (default 3), SIZES (default 16 ... 4096)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
seeds=${SEEDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in ${SIZES:-16 64 256 1024 4096}; do
    for seed in $(seq "$seeds"); do
        d=$tmp/$n-$seed
        mkdir -p "$d"
        python3 - "$n" "$seed" "$d/cluster.json" "$d/faults.json" <<'PY'
import json, random, sys
n, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(n * 1000 + seed)
k = max(2, n // 64)
hosts = rng.sample(range(1, n + 1), k + 1)
kinds = ["slow-node", "slow-link", "dead"]
faults = [{"kind": "hang", "hosts": [f"node{hosts[0]:04d}"]}]
for i, h in enumerate(hosts[1:]):
    f = {"kind": kinds[i % 3], "hosts": [f"node{h:04d}"]}
    if f["kind"] != "dead":
        f["factor"] = round(rng.uniform(0.2, 0.7), 2)
    faults.append(f)
json.dump({"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": n}],
           "faults": faults, "noise": 0.02}, open(sys.argv[3], "w"))
json.dump(faults, open(sys.argv[4], "w"))
PY
        start=$(date +%s%N)
        "$build/topotune" -q survey --backend sim --cluster "$d/cluster.json" --seed "$seed" \
            --out "$d/out" || [ $? -eq 1 ]
        echo "$((($(date +%s%N) - start) / 1000000))" >"$d/ms"
    done
done
python3 - "$tmp" <<'PY'
import json, math, os, sys
tmp = sys.argv[1]
want = {"slow-node": "node-slow", "slow-link": "link-slow", "dead": "node-unreachable", "hang": "node-fails"}
rows = {}
for d in sorted(os.listdir(tmp)):
    n = int(d.split("-")[0])
    faults = json.load(open(f"{tmp}/{d}/faults.json"))
    s = json.load(open(f"{tmp}/{d}/out/survey.json"))
    truth = {(f["hosts"][0], want[f["kind"]]) for f in faults}
    named = {(v["hosts"][0], v["kind"]) for v in s["verdicts"]}
    r = rows.setdefault(n, {"tp": 0, "fp": 0, "fn": 0, "launches": [], "wall": [], "cpu": []})
    r["tp"] += len(truth & named)
    r["fp"] += len(named - truth)
    r["fn"] += len(truth - named)
    r["launches"].append(s["launches"]["total"])
    r["wall"].append(s["launches"]["wall_s"])
    r["cpu"].append(int(open(f"{tmp}/{d}/ms").read()) / 1000)
print(f"{'nodes':>6} {'precision':>9} {'recall':>7} {'launches':>8} {'/log2 n':>7} {'all-pairs':>9} "
      f"{'wall s (pred.)':>14} {'all-pairs s':>11} {'this machine s':>14}")
ok = True
for n, r in sorted(rows.items()):
    p = r["tp"] / max(1, r["tp"] + r["fp"])
    rc = r["tp"] / max(1, r["tp"] + r["fn"])
    launches = sum(r["launches"]) / len(r["launches"])
    wall = sum(r["wall"]) / len(r["wall"])
    per = wall / launches
    allpairs = n - 1 + 2  # the pair rounds of every pair, plus alone and whole
    ok &= p >= 0.95 and rc >= 0.95
    print(f"{n:>6} {p:>9.3f} {rc:>7.3f} {launches:>8.1f} {launches / math.log2(n):>7.2f} {allpairs:>9} "
          f"{wall:>14.0f} {allpairs * per:>11.0f} {max(r['cpu']):>14.1f}")
print("(every busbw and wall time is PREDICTED by the sim backend; launches/log2 n staying flat "
      "means rounds grow as log n; all-pairs grows as n)")
print("targets: precision and recall >= 0.95 at every n:", "met" if ok else "NOT MET")
PY
