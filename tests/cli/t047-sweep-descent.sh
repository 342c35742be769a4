#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --strategy descent on a known landscape (fake-bench.sh mode landscape): it reaches the best
# point, which needs two moves in order (A first, then B pays), does not move for a gain below
# cv_max (C), measures far fewer configurations than the grid, resumes without measuring again,
# and gen picks the point it reached. Then the default space on a multi-node NVSwitch class,
# thousands of configurations, in tens of runs.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
fake=$TEST_TMP/fake-bench
fake_bench "$fake" landscape
cat >space.json <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "objective": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_C": [null, "1"], "NCCL_FAKE_B": [null, "1", "2"], "NCCL_FAKE_A": [null, "1", "2", "3"]},
 "repeat": 2, "timeout_s": 5, "cv_max": 0.05}
JSON
sweep() { env TOPOTUNE_BENCH_PROGRAM="$fake" "$TOPOTUNE" sweep --space space.json --strategy descent "$@"; }
expect_exit 0 "descent" -- sweep --out d
check "it reached A=1 B=2, left C alone, and measured the ends repeat times" python3 - d/results.jsonl <<'PY'
import collections, json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
final = collections.Counter(json.dumps(r["env"], sort_keys=True) for r in runs if r["final"])
assert final == {"{}": 2, '{"NCCL_FAKE_A": "1", "NCCL_FAKE_B": "2"}': 2}, final
explored = [r for r in runs if not r["final"]]
assert all(r["rung"] == 1 and r["rep"] == 0 for r in explored), explored
# the grid measures 24 configurations twice; three passes over 3 variables try 13 of them once
assert len(explored) <= 13 and len(runs) <= 17, (len(explored), len(runs))
PY
expect_exit 0 "resume" -- sweep --out d --resume
check "nothing measured twice" python3 - d/results.jsonl <<'PY'
import collections, json, sys
runs = collections.Counter((r["config_id"], r["rep"], r["rung"]) for r in map(json.loads, open(sys.argv[1])))
assert max(runs.values()) == 1, runs
PY
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs d --profiles p
check "the profile sets what descent found" python3 - p <<'PY'
import glob, json, sys
p = json.load(open(glob.glob(sys.argv[1] + "/*/v1/profile.json")[0]))
assert {v["name"]: v["value"] for v in p["variables"]} == {"NCCL_FAKE_A": "1", "NCCL_FAKE_B": "2"}, p["variables"]
assert p["sweep"]["strategy"] == "descent", p["sweep"]
PY
check "sweep.json and results valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/sweep.schema.json" d/sweep.json
expect_exit 2 "an unknown strategy" -- sweep --strategy anneal --out x
expect_stderr_has "expected grid, halving or descent" "the strategies named"

spec=$TOPOTUNE_SRC/profiles/specs/hgx-h100-2nodes.json
expect_exit 0 "the default space on two HGX H100 nodes" -- "$TOPOTUNE" sweep --backend sim \
    --topology "$spec" --space "$TOPOTUNE_SRC/profiles/spaces/nccl-default.json" --strategy descent \
    --timeout 1 --out big
check "thousands of configurations, tens of runs" python3 - big <<'PY'
import json, sys
configs = len(json.load(open(sys.argv[1] + "/sweep.json"))["configs"])
runs = sum(1 for _ in open(sys.argv[1] + "/results.jsonl"))
assert configs > 5000 and runs < 80, (configs, runs)
PY
finish
