#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune sweep --backend mpi: real ranks through mpirun on this machine, each configuration's
# Open MPI variables reaching every rank intact (commas included), as the ranks themselves saw them.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cat >"$TEST_TMP/space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "64K", "factor": 8},
 "objective": {"min": "4K", "max": "64K"},
 "vars": {"OMPI_MCA_btl": [null, "self,vader", "self,tcp"],
          "OMPI_MCA_coll_tuned_use_dynamic_rules": [null, "1"],
          "OMPI_MCA_coll_tuned_allreduce_algorithm": [null, "4"]},
 "exclude": [{"OMPI_MCA_coll_tuned_use_dynamic_rules": null, "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"},
             {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": null}],
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 30}
JSON
# Each rank writes what it was given before it becomes the benchmark.
cat >"$TEST_TMP/bench-wrapper.sh" <<EOF
#!/bin/sh
echo "\$OMPI_COMM_WORLD_RANK \${OMPI_MCA_btl:-unset} \${OMPI_MCA_coll_tuned_allreduce_algorithm:-unset}" >>"$TEST_TMP/seen"
exec "$TOPOTUNE_BIN/topotune-bench" "\$@"
EOF
chmod +x "$TEST_TMP/bench-wrapper.sh"
expect_exit 0 "mpi sweep, 2 ranks" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-wrapper.sh" "$TOPOTUNE" sweep --backend mpi --np 2 --space "$TEST_TMP/space.json" \
    --out "$TEST_TMP/mpi"
expect_stderr_has "(MPI defaults) r0" "the run without a variable set is MPI's defaults"
check "and not NCCL's" test "$(grep -c "NCCL defaults" "$TEST_TMP/err")" = 0
check "real ranks, every run ok" python3 - "$TEST_TMP/mpi/results.jsonl" <<'PY'
import collections, json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert len(runs) == 6 * 2, len(runs)
assert all(r["outcome"] == "ok" and r["ranks"] == 2 and r["predicted"] is False for r in runs), \
    [(r["env"], r["outcome"], r["stderr_tail"][-200:]) for r in runs if r["outcome"] != "ok"]
assert all(len(r["sizes"]) == 5 and all(s["wrong"] == 0 for s in r["sizes"]) for r in runs)
PY
check "every rank saw each configuration's values, commas intact" python3 - "$TEST_TMP/seen" <<'PY'
import collections, sys
seen = collections.Counter(tuple(l.split()) for l in open(sys.argv[1]))
for rank in ("0", "1"):
    assert seen[(rank, "self,vader", "unset")] == 2, seen    # 2 repeats
    assert seen[(rank, "self,tcp", "unset")] == 2, seen
    assert seen[(rank, "unset", "4")] == 2, seen
    assert seen[(rank, "self,vader", "4")] == 2, seen
PY
finish
