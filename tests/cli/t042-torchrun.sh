#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The generated torchrun template for real, with Debian's PyTorch (CPU, gloo): two local
# processes all_reduce a tensor and see the profile's variables in their environment.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
if ! command -v torchrun >/dev/null || ! torchrun --help >/dev/null 2>&1; then
    echo "skipped: torchrun not installed (tools/install-deps.sh installs python3-torch)"
    finish
    exit 0
fi
cat >"$TEST_TMP/space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "16M", "factor": 4},
 "vars": {"NCCL_P2P_DISABLE": [null, "1"]}, "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}
JSON
"$TOPOTUNE" -q sweep --topology "$TOPOTUNE_SRC/profiles/specs/rtx4090-8x-pcie.json" --space "$TEST_TMP/space.json" \
    --out "$TEST_TMP/sweep" || true
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs "$TEST_TMP/sweep" --profiles "$TEST_TMP/profiles"
profile=$(dirname "$(ls "$TEST_TMP"/profiles/*/latest/profile.json)")
cat >"$TEST_TMP/train.py" <<'PY'
import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
assert t.item() == world * (world + 1) / 2, t
assert os.environ["NCCL_P2P_DISABLE"] == "1"
assert "NCCL_CONF_FILE" not in os.environ  # NCCL would read it instead of ~/.nccl.conf
with open(os.path.join(os.environ["OUT_DIR"], f"rank{rank}"), "w") as f:
    f.write(f"{world} {t.item()} {os.environ['LOCAL_RANK']}\n")
dist.destroy_process_group()
PY
mkdir -p "$TEST_TMP/ranks"
expect_exit 0 "torchrun.sh, 2 processes" -- env OUT_DIR="$TEST_TMP/ranks" TOPOTUNE_TORCHRUN_ARGS="--redirects 1 --tee 1" \
    timeout 300 "$profile/launch/torchrun.sh" --nproc-per-node 2 -- "$TEST_TMP/train.py"
check "both ranks reduced and saw the profile" bash -c "grep -qx '2 3.0 0' '$TEST_TMP/ranks/rank0' && grep -qx '2 3.0 1' '$TEST_TMP/ranks/rank1'"
# One launcher per job: started inside another launcher's rank, the template refuses.
expect_exit 2 "refuses under another launcher" -- env RANK=0 "$profile/launch/torchrun.sh" -- "$TEST_TMP/train.py"
expect_stderr_has "one launcher per job" "says why"
finish
