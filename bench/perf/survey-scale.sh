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
# Then scenarios of the kinds a field cluster shows (SCENARIOS, default all of them): many faulty
# nodes (4 of 8 at half speed, 4 of 8 of mixed kinds, 4 of 16, 25 to 50% of 32), mild slowness
# (0.75 to 0.8; again with 4% noise), noise (5%, with a dead and a hanging node; and a clean
# cluster that must get no verdict), lost parts (nodes missing a GPU or a NIC: node-differs; 4 of
# 16 with 4 slow ones more), mixed fleets (H100 and A100 classes of 16 and 8, faults in both),
# CPU-starved hosts (slow alone by 200x), a slow path (--pairs all). Per scenario,
# across the seeds: precision, recall, and the faulty nodes written to healthy.hostfile (target
# 0), and the runs whose exit code is right (1 when something is injected, else 0).
# usage: bench/perf/survey-scale.sh [BUILD_DIR]     SEEDS (default 3), SIZES (default 16 ... 4096;
#        "" skips the scale runs), SCENARIOS (default: every name below; "" skips them)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
seeds=${SEEDS:-3}
tmp=$(mktemp -d)
# KEEP=1 keeps the clusters and surveys, and says where
if [ -n "${KEEP:-}" ]; then trap 'echo "kept in $tmp"' EXIT; else trap 'rm -rf "$tmp"' EXIT; fi
for n in ${SIZES-16 64 256 1024 4096}; do
    for seed in $(seq "$seeds"); do
        d=$tmp/$n-$seed
        mkdir -p "$d"
        python3 - "$n" "$seed" "$d/cluster.json" "$d/faults.json" <<'PY'
import json, random, sys, zlib
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
[ -n "${SIZES-x}" ] && python3 - "$tmp" <<'PY'
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
scenarios=${SCENARIOS-half-8 halfmix-8 quarter-16 many-32 mild-16 mildnoise-16 noise-32 clean-32 lost-16 lostmany-16 mixed-24 starved-8 path-16}
[ -n "$scenarios" ] || exit 0
for name in $scenarios; do
    for seed in $(seq "$seeds"); do
        d=$tmp/scenario-$name-$seed
        mkdir -p "$d"
        python3 - "$name" "$seed" "$d" <<'PY'
import json, random, sys, zlib
name, seed, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(zlib.crc32(name.encode()) % 1000 * 100 + seed)
H100 = {"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8, "fabric": "nvswitch",
        "nics": [{"model": "CX7-400G-IB", "count": 8, "per": "gpu"}], "cpu": {"vendor": "intel", "sockets": 2}}
def lost(part):  # the H100 node with one GPU or one NIC less
    spec = json.loads(json.dumps(H100))
    if part == "gpu":
        spec["count"] = 7
    else:
        spec["nics"][0]["count"] = 7
    json.dump(spec, open(f"{d}/h100-lost-{part}.json", "w"))
    return f"h100-lost-{part}.json"
n, noise, args, faults, nodes = 16, 0.02, [], [], None
def pick(k, pool):
    return rng.sample(pool, k)
def hosts(count, prefix="node"):
    return [f"{prefix}{i:04d}" for i in range(1, count + 1)]
def slow(h, kinds=("slow-node", "slow-link"), lo=0.3, hi=0.7):
    faults.append({"kind": rng.choice(kinds), "hosts": [h], "factor": round(rng.uniform(lo, hi), 2)})
if name == "half-8":
    n = 8
    for h in pick(4, hosts(n)):
        faults.append({"kind": "slow-link", "hosts": [h], "factor": 0.5})
elif name == "halfmix-8":
    n = 8
    for h in pick(4, hosts(n)):
        slow(h)
elif name == "mildnoise-16":
    noise = 0.04
    for h in pick(3, hosts(n)):
        slow(h, lo=0.75, hi=0.8)
elif name == "clean-32":
    n, noise = 32, 0.05
elif name == "lostmany-16":
    n = 12
    nodes = [{"spec": "hgx-h100.json", "count": n},
             {"spec": lost("gpu"), "count": 2, "prefix": "lostgpu"},
             {"spec": lost("nic"), "count": 2, "prefix": "lostnic"}]
    for h in pick(4, hosts(n)):
        slow(h)
elif name == "quarter-16":
    for h in pick(4, hosts(n)):
        faults.append({"kind": "slow-link", "hosts": [h], "factor": 0.5})
elif name == "many-32":
    n = 32
    for h in pick(rng.randint(8, 16), hosts(n)):
        slow(h)
elif name == "mild-16":
    for h in pick(3, hosts(n)):
        slow(h, lo=0.75, hi=0.8)
elif name == "noise-32":
    n, noise = 32, 0.05
    bad = pick(6, hosts(n))
    for h in bad[:4]:
        slow(h)
    faults.append({"kind": "dead", "hosts": [bad[4]]})
    faults.append({"kind": "hang", "hosts": [bad[5]]})
elif name == "lost-16":
    n = 14
    nodes = [{"spec": "hgx-h100.json", "count": n},
             {"spec": lost("gpu"), "count": 1, "prefix": "lostgpu"},
             {"spec": lost("nic"), "count": rng.randint(1, 2), "prefix": "lostnic"}]
    for h in pick(1, hosts(n)):
        slow(h, kinds=("slow-link",))
elif name == "mixed-24":
    nodes = [{"spec": "hgx-h100.json", "count": 16}, {"spec": "dgx-a100.json", "count": 8, "prefix": "a"}]
    for h in pick(2, hosts(16)) + pick(2, hosts(8, "a")):
        slow(h)
elif name == "starved-8":
    n = 8
    a, b, c = pick(3, hosts(n))
    faults.append({"kind": "slow-node", "hosts": [a], "factor": 0.005})
    faults.append({"kind": "slow-link", "hosts": [b], "factor": 0.3})
    faults.append({"kind": "hang", "hosts": [c]})
elif name == "path-16":
    args = ["--pairs", "all"]
    a, b, c = pick(3, hosts(n))
    faults.append({"kind": "slow-path", "hosts": [a, b], "factor": 0.4})
    slow(c, kinds=("slow-link",))
else:
    sys.exit(f"unknown scenario {name}")
nodes = nodes or [{"spec": "hgx-h100.json", "count": n}]
json.dump({"schema": "topotune/sim-cluster/1", "nodes": nodes, "faults": faults, "noise": noise},
          open(f"{d}/cluster.json", "w"))
truth = [{"hosts": f["hosts"], "kind": f["kind"]} for f in faults]
truth += [{"hosts": [f"{e['prefix']}{i:04d}"], "kind": "lost-part"}
          for e in nodes if e["spec"].startswith("h100-lost") for i in range(1, e["count"] + 1)]
json.dump({"truth": truth, "args": args}, open(f"{d}/truth.json", "w"))
PY
        mapfile -t extra < <(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["args"]))' "$d/truth.json" | sed '/^$/d')
        rc=0
        "$build/topotune" -q survey --backend sim --cluster "$d/cluster.json" --seed "$seed" \
            "${extra[@]}" --out "$d/out" || rc=$?
        echo "$rc" >"$d/rc"
    done
done
python3 - "$tmp" "$scenarios" <<'PY'
import json, os, sys
tmp, names = sys.argv[1], sys.argv[2].split()
want = {"slow-node": "node-slow", "slow-link": "link-slow", "dead": "node-unreachable",
        "hang": "node-fails", "slow-path": "path-slow", "lost-part": "node-differs"}
print(f"\n{'scenario':<12} {'runs':>4} {'precision':>9} {'recall':>7} {'faulty in healthy':>17} {'exit ok':>7}")
ok = True
for name in names:
    tp = fp = fn = leaked = runs = exit1 = 0
    for d in sorted(x for x in os.listdir(tmp) if x.startswith(f"scenario-{name}-")):
        t = json.load(open(f"{tmp}/{d}/truth.json"))["truth"]
        s = json.load(open(f"{tmp}/{d}/out/survey.json"))
        truth = {(tuple(sorted(f["hosts"])), want[f["kind"]]) for f in t}
        named = {(tuple(sorted(v["hosts"])), v["kind"]) for v in s["verdicts"]}
        tp += len(truth & named)
        fp += len(named - truth)
        fn += len(truth - named)
        healthy = set(open(f"{tmp}/{d}/out/healthy.hostfile").read().split())
        leaked += len({f["hosts"][0] for f in t if f["kind"] != "slow-path"} & healthy)
        runs += 1
        exit1 += open(f"{tmp}/{d}/rc").read().strip() == ("1" if t else "0")
    p, r = tp / (tp + fp) if tp + fp else 1, tp / (tp + fn) if tp + fn else 1
    ok &= p >= 0.95 and r >= 0.95 and leaked == 0 and exit1 == runs
    print(f"{name:<12} {runs:>4} {p:>9.3f} {r:>7.3f} {leaked:>17} {exit1:>7}")
print("targets: precision and recall >= 0.95, no faulty node in healthy.hostfile, the exit code right "
      "(1 when something is injected, else 0) in every run:", "met" if ok else "NOT MET")
PY
