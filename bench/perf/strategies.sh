#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A benchmark, not a test: successive halving and coordinate descent against the full grid on sim
# topologies. Per topology it runs the three strategies for each seed and prints the
# configurations, the benchmark time each spent (predicted: the sum over runs of the model's time
# for every operation, plus the deadline of every hang), the best objective found, and the
# strategy/grid ratios. Target: halving and descent within 2% of the grid's best for at least 90%
# of seeds, at most 25% of the grid's time.
# usage: bench/perf/strategies.sh [BUILD_DIR]
#   SEEDS (default 10), SPACE (default profiles/spaces/nccl-default.json: several hours, since
#   the RTX 4090's hangs cost TIMEOUT each and the 2-node H100 sweeps every interface for
#   NCCL_SOCKET_IFNAME; profiles/spaces/nccl-quick.json takes minutes), TIMEOUT (s, default 0.5)
#   TOPOS (default: dgx-a100 hgx-h100 rtx4090-8x-pcie hgx-h100-2nodes)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
seeds=${SEEDS:-10}
space=${SPACE:-profiles/spaces/nccl-default.json}
timeout=${TIMEOUT:-0.5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for topo in ${TOPOS:-dgx-a100 hgx-h100 rtx4090-8x-pcie hgx-h100-2nodes}; do
    for seed in $(seq "$seeds"); do
        for strategy in grid halving descent; do
            "$build/topotune" -q sweep --backend sim --topology "profiles/specs/$topo.json" --space "$space" \
                --strategy "$strategy" --seed "$seed" --timeout "$timeout" \
                --out "$tmp/$topo/$strategy-$seed" >/dev/null 2>&1 || true
        done
    done
done
python3 - "$tmp" "$seeds" <<'PY'
import json, os, statistics, sys
tmp, seeds = sys.argv[1], int(sys.argv[2])

def analyse(d):
    sweep = json.load(open(os.path.join(d, "sweep.json")))
    space = sweep["space"]
    omin, omax = (parse(space.get("objective", {}).get(k, v)) for k, v in (("min", "8"), ("max", "1G")))
    spent, per_config = 0.0, {}
    for line in open(os.path.join(d, "results.jsonl")):
        r = json.loads(line)
        ops = (r["iters"] + space.get("warmup", 5)) * 2 + 2  # out- and in-place, plus checks
        spent += sum(s["time_us"] for s in r["sizes"]) * ops / 1e6
        if r["outcome"] == "timeout":
            spent += sweep["timeout_s"]
        if r["final"] and r["outcome"] == "ok":
            objs = [s["busbw"] for s in r["sizes"] if omin <= s["size"] <= omax]
            per_config.setdefault(r["config_id"], []).append(sum(objs) / len(objs) if objs else 0)
    best = max((statistics.mean(v) for v in per_config.values()), default=0)
    return len(sweep["configs"]), spent, best

def parse(s):
    s = str(s)
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(float(s[:-1] if mult > 1 else s) * mult)

print(f"{'topology':<18} {'strategy':<8} {'configs':>7} {'grid s':>9} {'its s':>9} {'time ratio':>10} "
      f"{'grid best':>9} {'its best':>9} {'best ratio':>10} {'within 2%':>9}")
for topo in sorted(os.listdir(tmp)):
    for strategy in ("halving", "descent"):
        rows = []
        for seed in range(1, seeds + 1):
            g = os.path.join(tmp, topo, f"grid-{seed}")
            h = os.path.join(tmp, topo, f"{strategy}-{seed}")
            if os.path.exists(os.path.join(g, "results.jsonl")) and os.path.exists(os.path.join(h, "results.jsonl")):
                rows.append((analyse(g), analyse(h)))
        if not rows:
            continue
        n = rows[0][0][0]
        gs, hs = statistics.mean(r[0][1] for r in rows), statistics.mean(r[1][1] for r in rows)
        gb, hb = statistics.mean(r[0][2] for r in rows), statistics.mean(r[1][2] for r in rows)
        within = sum(1 for g, h in rows if g[2] == 0 or h[2] >= 0.98 * g[2]) / len(rows)
        print(f"{topo:<18} {strategy:<8} {n:>7} {gs:>9.2f} {hs:>9.2f} {hs / gs if gs else 0:>10.3f} "
              f"{gb:>9.2f} {hb:>9.2f} {hb / gb if gb else 0:>10.3f} {within * 100:>8.0f}%")
print("(times and busbw are PREDICTED by the sim backend; target: within 2% for >= 90% of seeds at <= 25% of the time)")
PY
