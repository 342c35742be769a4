#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 23: the variables a file may set are an allow-list of exact names (util/env.c). The probe's
# variables that run a program or name an address, a directory or a mail recipient passed the old
# family policy (UCX_GDB_COMMAND with UCX_HANDLE_ERRORS=debug execs a program on a crash); they are
# refused in a space (vars, fixed, exclude), in predict --env and in a sweep's results read by gen,
# while tuning names the old substring rule refused (NCCL_P2P_DIRECT_DISABLE: "_DIR") are accepted.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
spec="$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
unset TOPOTUNE_ALLOW_VARS # the policy as shipped

# A space that sets NAME (in vars, fixed or exclude) is refused with exit 2, the name in the error.
for name in UCX_GDB_COMMAND UCX_HANDLE_ERRORS CUDA_HOME NCCL_COMM_ID UCX_ERROR_MAIL_TO \
    NCCL_TUNER_PLUGIN NCCL_NET_PLUGIN NCCL_ENV_PLUGIN LD_AUDIT NCCL_GRAPH_FILE UCX_MODULE_DIR \
    OMPI_MCA_orte_launch_agent OMPI_MCA_coll_tuned_dynamic_rules_filename NCCL_SOMETHING_NEW; do
    for where in vars fixed exclude; do
        case $where in
        vars) body="\"vars\": {\"$name\": [null, \"x\"]}" ;;
        fixed) body="\"vars\": {\"NCCL_ALGO\": [null, \"Ring\"]}, \"fixed\": {\"$name\": \"x\"}" ;;
        exclude) body="\"vars\": {\"NCCL_ALGO\": [null, \"Ring\"]}, \"exclude\": [{\"$name\": null}]" ;;
        esac
        printf '{"schema": "topotune/space/1", %s}\n' "$body" >"s-$name-$where.json"
        expect_exit 2 "$name in $where refused" -- "$TOPOTUNE" sweep --backend sim --topology "$spec" \
            --space "s-$name-$where.json" --out "out-$name-$where"
        expect_stderr_has "$name: a space may not set this variable" "$name in $where: named"
        expect_no_file "out-$name-$where" "$name in $where"
    done
    expect_exit 2 "predict --env $name=x refused" -- "$TOPOTUNE" predict --input "$spec" --env "$name=x"
    expect_stderr_has "$name cannot be set" "predict --env $name: named"
done
expect_stderr_has "not a variable topotune lets a file set" "an unknown name: the allow-list named"

# Tuning names of the allow-list pass, also those a substring rule refused.
printf '%s\n' '{"schema": "topotune/space/1", "sizes": {"min": "1M", "max": "4M", "factor": 4},
 "objective": {"min": "1M", "max": "4M"}, "vars": {"NCCL_P2P_DIRECT_DISABLE": [null, "1"]},
 "fixed": {"NCCL_IB_HCA": "mlx5_0", "NCCL_CROSS_NIC": "0"}, "repeat": 1, "iters": 2, "warmup": 1,
 "timeout_s": 5}' >good.json
expect_exit 0 "a space of allowed names sweeps" -- "$TOPOTUNE" -q sweep --backend sim \
    --topology "$spec" --space good.json --out good
expect_exit 0 "predict --env NCCL_P2P_DIRECT_DISABLE=1" -- "$TOPOTUNE" predict --input "$spec" \
    --env NCCL_P2P_DIRECT_DISABLE=1

# Slingshot's libfabric settings that CSCS documents for NCCL (docs/software/communication in
# eth-cscs/cscs-docs) are tuning, not paths: a space may sweep them; a cxi name not listed is not.
printf '%s\n' '{"schema": "topotune/space/1", "sizes": {"min": "1M", "max": "4M", "factor": 4},
 "objective": {"min": "1M", "max": "4M"}, "vars": {"FI_CXI_RX_MATCH_MODE": [null, "software"]},
 "fixed": {"FI_CXI_DEFAULT_CQ_SIZE": "131072", "FI_CXI_DEFAULT_TX_SIZE": "16384",
 "FI_CXI_DISABLE_HOST_REGISTER": "1", "FI_MR_CACHE_MONITOR": "userfaultfd",
 "FI_CXI_RDZV_PROTO": "alt_read", "FI_CXI_RDZV_EAGER_SIZE": "0", "FI_CXI_RDZV_GET_MIN": "0",
 "FI_CXI_RDZV_THRESHOLD": "0"}, "repeat": 1, "iters": 2, "warmup": 1, "timeout_s": 5}' >cxi.json
expect_exit 0 "a space of Slingshot's libfabric settings sweeps" -- "$TOPOTUNE" -q sweep \
    --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/gh200-4x-slingshot.json" --space cxi.json \
    --out cxi
expect_exit 2 "an unlisted cxi name refused" -- "$TOPOTUNE" predict --input "$spec" \
    --env FI_CXI_SOMETHING_NEW=1
expect_stderr_has "FI_CXI_SOMETHING_NEW cannot be set" "the unlisted cxi name named"

# A results line that claims to have set such a variable: gen refuses it, writes nothing.
for name in UCX_HANDLE_ERRORS NCCL_COMM_ID CUDA_HOME; do
    rm -rf "r-$name" && cp -r good "r-$name"
    python3 - "r-$name/results.jsonl" "$name" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
runs[-1]["env"][sys.argv[2]] = "debug"
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in runs))
PY
    expect_exit 2 "gen: a result setting $name refused" -- "$TOPOTUNE" gen --runs "r-$name" \
        --profiles "p-$name"
    expect_stderr_has "$name" "gen: $name named"
    check "gen: nothing written for $name" bash -c "! find 'p-$name' -name 'v*' 2>/dev/null | grep -q ."
done
finish
