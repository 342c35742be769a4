#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU check: on a machine with one or more NVIDIA GPUs, build topotune if needed, run the
# nccl backend from 8 B to 1 GiB on all GPUs (one process, -g N; then one rank per GPU under
# mpirun), assert wrong == 0 and busbw = algbw x 2(n-1)/n on every size, check that NCCL's log
# proves a forced NCCL_ALGO was applied, and print a short table. Results go to $OUT (or a
# temporary directory). Exits 77 (CTest's skip) where no GPU is visible.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

ngpus=0
if command -v nvidia-smi >/dev/null 2>&1; then
    ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ "$ngpus" -eq 0 ]; then
    echo "skipped: no GPU visible (nvidia-smi lists none)"
    exit 77
fi

bin=${TOPOTUNE_BIN:-$root/build}
[ -x "$bin/topotune-bench" ] || { tools/build.sh plain >/dev/null; bin=$root/build; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "GPUs: $ngpus; results in $out"
"$bin/topotune" topo --json "$out/topology.json" || true
"$bin/topotune" topo > "$out/topology.txt" || true
# doctor on real GPUs: with two or more, its P2P copy test (topotune-p2p-copy) runs for real
"$bin/topotune" doctor --json "$out/doctor.json" || true
"$bin/topotune" doctor > "$out/doctor.txt" || true
if [ "$ngpus" -gt 1 ] && [ -x "$bin/topotune-p2p-copy" ]; then
    "$bin/topotune-p2p-copy" > "$out/p2p-copy.txt" 2>&1 || echo "topotune-p2p-copy exited $?" >> "$out/p2p-copy.txt"
fi

run() { # NAME ARGS...: one benchmark, its table to NAME.txt and events to NAME.jsonl
    local name=$1
    shift
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$out/$name.nccl.%h.%p.log" \
        "$@" --json "$out/$name.jsonl" -b 8 -e 1G -f 2 -n 20 -w 5 -T 120 | tee "$out/$name.txt"
}

run single "$bin/topotune-bench" --backend nccl -g "$ngpus"
NCCL_ALGO=Ring run ring "$bin/topotune-bench" --backend nccl -g "$ngpus"
if [ "$ngpus" -gt 1 ] && command -v mpirun >/dev/null; then
    root_flag=()
    [ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)
    run mpi mpirun -np "$ngpus" "${root_flag[@]}" "$bin/topotune-bench" --backend nccl
fi

python3 - "$out" "$ngpus" <<'PY'
import glob, json, os, sys
out, n = sys.argv[1], int(sys.argv[2])
factor = 2 * (n - 1) / n
failures = 0
for path in sorted(glob.glob(os.path.join(out, "*.jsonl"))):
    events = [json.loads(l) for l in open(path)]
    sizes = [e for e in events if e["event"] == "size"]
    end = events[-1]
    name = os.path.basename(path)
    print(f"\n{name}: outcome {end['outcome']}, {len(sizes)} sizes, effective_env {end.get('effective_env')}")
    print(f"{'size':>12} {'time_us':>10} {'algbw':>8} {'busbw':>8} {'wrong':>6} algo/proto")
    for e in sizes:
        ok = e["wrong"] == 0 and e["in_place"]["wrong"] == 0
        ok &= abs(e["busbw"] - e["algbw"] * factor) <= 1e-9 * max(1, e["busbw"])
        ok &= abs(e["algbw"] - e["size"] / (e["time_us"] * 1e-6) / 1e9) <= 1e-9 * max(1, e["algbw"])
        failures += not ok
        if e["size"] in (8, 1 << 10, 1 << 20, 1 << 25, 1 << 30) or not ok:
            print(f"{e['size']:>12} {e['time_us']:>10.1f} {e['algbw']:>8.2f} {e['busbw']:>8.2f} "
                  f"{e['wrong']:>6} {e.get('algo')}/{e.get('proto')}{'' if ok else '  <-- FAILED'}")
    if end["outcome"] != "ok" or len(sizes) != 28:
        print(f"{name}: expected outcome ok and 28 sizes (8 B to 1 GiB)")
        failures += 1
    if name.startswith("ring"):
        env = end.get("effective_env") or {}
        if env.get("NCCL_ALGO", "").lower() != "ring":
            print(f"{name}: NCCL's log does not show NCCL_ALGO=Ring applied: {env}")
            failures += 1
print(f"\n{'all GPU checks passed' if failures == 0 else f'{failures} GPU checks FAILED'}")
sys.exit(1 if failures else 0)
PY
