#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sweep records only what gen reads back (issue 23): a benchmark whose events carry a busbw,
# algbw or time gen's check refuses (above 10^9 GB/s, above 10^15 us) or node and rank counts
# past its limits wrote them to results.jsonl, and gen then refused the whole sweep as damaged.
# Such a run, or one with a size event of the wrong types, is an error at stage results-invalid,
# its value left out; gen takes the sweep. Likewise sweep.json: a space whose configurations would
# not fit the 64 MiB its readers take is refused before one is built (--max-configs 10000000 took
# 4 GB before the first run), and --max-configs stops at 1,000,000.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
fake=$TEST_TMP/nonsense-bench
cat >"$fake" <<'SH'
#!/usr/bin/env bash
json=
for arg in "$@"; do
    case "$arg" in --json=*) json=${arg#--json=} ;; esac
done
bw=10 algbw=10 time=1.0 nodes=1 ranks=2 size=8
case "${NCCL_FAKE_VALUE:-}" in
busbw) bw=2e9 ;;
busbw-huge) bw=1e300 ;;
algbw) algbw=5e12 ;;
time) time=1e16 ;;
nodes) nodes=2000000 ;;
ranks) ranks=20000000 ;;
types) size='"8"' ;;
negative) bw=-1 ;;
esac
{
    printf '{"event":"start","backend":"mpi","ranks":%s,"nodes":%s,"hosts":["fake"],"predicted":false}\n' "$ranks" "$nodes"
    printf '{"event":"size","size":%s,"count":2,"time_us":%s,"algbw":%s,"busbw":%s,"wrong":0}\n' "$size" "$time" "$algbw" "$bw"
    printf '{"event":"end","outcome":"ok","exit_code":0}\n'
} >"$json"
SH
chmod +x "$fake"
cat >space.json <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_VALUE": [null, "busbw", "busbw-huge", "algbw", "time", "nodes", "ranks", "types",
   "negative"]},
 "repeat": 1, "timeout_s": 10}
JSON

expect_exit 0 "a sweep of a benchmark that writes nonsense" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space space.json --out sweep
check "each nonsense run is an error at results-invalid, no value of it recorded" python3 - sweep/results.jsonl <<'PY'
import json, sys
runs = {r["env"].get("NCCL_FAKE_VALUE"): r for r in map(json.loads, open(sys.argv[1]))}
assert runs[None]["outcome"] == "ok" and runs[None]["sizes"][0]["busbw"] == 10, runs[None]
for k in ("busbw", "busbw-huge", "algbw", "time", "types", "negative"):
    r = runs[k]
    assert (r["outcome"], r["stage"], r["sizes"]) == ("error", "results-invalid", []), (k, r)
for k in ("nodes", "ranks"):  # a start event past the limits: the run never started, as far as it says
    assert runs[k]["outcome"] == "error" and "nodes" not in runs[k], (k, runs[k])
PY
check "results match their schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/result.schema.json" sweep/results.jsonl --lines
expect_exit 0 "gen takes the sweep back" -- "$TOPOTUNE" gen --runs sweep --profiles profiles
expect_exit 0 "compare takes it too" -- "$TOPOTUNE" compare sweep
expect_exit 0 "--resume reads every line back" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space space.json --out sweep --resume
expect_stderr_has "9 runs already in" "nothing run again"

# sweep.json lists every configuration: 300,000 of them (about 70 MiB) would be unreadable.
python3 - >big.json <<'PY'
import json
vals = lambda n: [str(v) for v in range(1, n + 1)]
names = ["NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_NTHREADS", "NCCL_BUFFSIZE",
         "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL"]
print(json.dumps({"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
                  "vars": {n: vals(3 if n == "NCCL_P2P_LEVEL" else 10) for n in names},
                  "repeat": 1, "timeout_s": 5}))
PY
expect_exit 2 "300,000 configurations: refused before any is built" -- timeout 60 env \
    TOPOTUNE_BENCH_PROGRAM="$fake" "$TOPOTUNE" sweep --space big.json --out big --max-configs 1000000
expect_stderr_has "MiB of sweep.json, above the 48 MiB its readers take" "the size named"
check "nothing written" test ! -e big/sweep.json
expect_exit 2 "--max-configs 10000000 refused" -- timeout 60 env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space big.json --out big --max-configs 10000000
expect_stderr_has "--max-configs" "the option named"
finish
