#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune sweep --backend mpi: real ranks through mpirun on this machine, each configuration's
# Open MPI variables passed with -x.
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
expect_exit 0 "mpi sweep, 2 ranks" -- "$TOPOTUNE" sweep --backend mpi --np 2 --space "$TEST_TMP/space.json" \
    --out "$TEST_TMP/mpi"
check "real ranks, every run ok" python3 - "$TEST_TMP/mpi/results.jsonl" <<'PY'
import collections, json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
assert len(runs) == 6 * 2, len(runs)
assert all(r["outcome"] == "ok" and r["ranks"] == 2 and r["predicted"] is False for r in runs), \
    [(r["env"], r["outcome"], r["stderr_tail"][-200:]) for r in runs if r["outcome"] != "ok"]
assert all(len(r["sizes"]) == 5 and all(s["wrong"] == 0 for s in r["sizes"]) for r in runs)
PY
check "the launcher passed the configuration with -x" grep -q "OMPI_MCA_btl" "$TEST_TMP/mpi/results.jsonl"
finish
