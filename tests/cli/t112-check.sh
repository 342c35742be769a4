#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune check, this node's health for Slurm and NHC: a healthy sim run passes (one OK line,
# exit 0); a slow configuration fails with one line per size below the model's band (exit 1),
# its --drain command, its JSON (schema) and metrics (promtool); a 64 MB /dev/shm (a mount
# namespace) fails doctor's check; real MPI ranks are judged against a profile's band with the
# profile's variables in their environment; bad input is refused; a kept folder only on failure.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# 8 H100 on NVSwitch, no RDMA NIC: nothing of doctor's depends on this machine's locked memory
echo '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8}' >h100.json
h100=$TEST_TMP/h100.json
slow=(NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=2)
export TMPDIR=$TEST_TMP/tmp
mkdir -p "$TMPDIR"

# 1. Healthy: one OK line; the temporary folder is gone.
expect_exit 0 "a healthy (predicted) node" -- "$TOPOTUNE" check --backend sim --input "$h100"
check "one OK line" test "$(wc -l <"$TEST_TMP/out")" = 1
check "it says OK" grep -q '^OK ' "$TEST_TMP/out"
check "nothing left in TMPDIR" test -z "$(ls -A "$TMPDIR")"

# 2. A slow configuration: a line per size below its band, the drain, JSON and metrics.
expect_exit 1 "a slow configuration fails" -- env "${slow[@]}" "$TOPOTUNE" check --backend sim \
    --input "$h100" --drain --metrics check.prom
check "4 sizes below the band, one line each" test "$(grep -c '^FAIL busbw: all_reduce at [0-9]* B: .* predicted, below the band' "$TEST_TMP/out")" = 4
check "the drain of this node, each check named once" grep -q \
    "^scontrol update nodename=.* state=drain 'reason=topotune: check-fails checks=busbw (predicted)'$" "$TEST_TMP/out"
check "promtool check metrics" promtool check metrics <check.prom
check "ok 0, 4 failures, the band per size" sh -c "grep -q '^topotune_check_ok{.*} 0$' check.prom &&
    grep -q '^topotune_check_failures{.*} 4$' check.prom &&
    test \$(grep -c '^topotune_expected_busbw_bytes_per_second{' check.prom) = 12"
check "the failing check's folder is kept, and said" grep -q "kept in '$TMPDIR/topotune-check" "$TEST_TMP/err"
env "${slow[@]}" "$TOPOTUNE" check --backend sim --input "$h100" --json --out kept >check.json
check "--json: the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/check.schema.json" check.json
check "--json: not ok, 4 sizes below, predicted" python3 - check.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False and r["source"] == "predicted" and r["reference"]["kind"] == "predicted", r
assert [s["below"] for s in r["sizes"]] == [True] * 4 and len(r["failures"]) == 4, r["sizes"]
assert r["bench"]["exit_code"] == 0 and r["bench"]["outcome"] == "ok", r["bench"]
PY
check "--out keeps the run's events" test -s kept/check-bench.jsonl

# 3. doctor's failure for real: 64 MB of /dev/shm for 8 GPUs (needs root and mount namespaces).
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    expect_exit 1 "small /dev/shm" -- unshare -m sh -c "mount -t tmpfs -o size=64m tmpfs /dev/shm &&
        '$TOPOTUNE' check --backend sim --input '$h100'"
    check "one line: doctor-shm, with its fix" grep -q '^FAIL doctor-shm: .*(fix: .*--shm-size' "$TEST_TMP/out"
    check "and nothing else failed" test "$(grep -c '^FAIL' "$TEST_TMP/out")" = 1
else
    echo "skipped: the /dev/shm check needs root and mount namespaces"
fi

# 4. Real MPI ranks against a profile's band; the profile's variables reach them.
mkdir -p p
profile() { # profile BUSBW: a profile whose runs measured BUSBW GB/s at 64K..256K
    cat >p/profile.json <<EOF
{"schema": "topotune/profile/1", "class": "c1", "predicted": false, "version": 3,
 "sweep": {"nodes": 1, "ranks": 2}, "winner": null,
 "variables": [{"name": "NCCL_ALGO", "value": "Ring", "role": "tuning", "evidence": {}},
               {"name": "LD_PRELOAD", "value": "/nonexistent/x.so", "role": "system", "evidence": {}}],
 "baseline": {"cv": 0.01, "per_size": [{"size": 65536, "busbw": $1}, {"size": 131072, "busbw": $1},
                                       {"size": 262144, "busbw": $1}]}}
EOF
}
profile 0.000001
expect_exit 0 "2 MPI ranks above a profile's band pass" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --no-doctor --profile p -b 64K -e 256K -n 2 --out mpi --metrics mpi.prom
check "the profile's allowed variable reached the ranks, the refused one did not" python3 - mpi/check-bench.jsonl <<'PY'
import json, sys
start = [json.loads(l) for l in open(sys.argv[1])][0]
assert start["event"] == "start" and start["env"].get("NCCL_ALGO") == "Ring", start["env"]
assert "LD_PRELOAD" not in start["env"], start["env"]
PY
check "its version in the metrics" grep -q '^topotune_profile_info{class="[^"]*",version="v3"} 1$' mpi.prom
profile 1000000
expect_exit 1 "2 MPI ranks far below a profile's band fail" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --no-doctor --profile p -b 64K -e 256K -n 2
check "3 sizes below the profile's measured band" test "$(grep -c '^FAIL busbw: .* measured, below the band .*(measured by the profile)$' "$TEST_TMP/out")" = 3

# 5. Refusals.
expect_exit 2 "--backend sim without --input" -- "$TOPOTUNE" check --backend sim
expect_exit 2 "--apply without --drain" -- "$TOPOTUNE" check --backend sim --input "$h100" --apply
expect_exit 2 "a hardware file that is not there" -- "$TOPOTUNE" check --backend sim --input nosuch.json
expect_exit 2 "a profile that is not there" -- "$TOPOTUNE" check --backend sim --input "$h100" --profile nosuch
finish
