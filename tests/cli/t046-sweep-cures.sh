#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Defaults that fail before the first collective: the sweep goes after the known cures (P2P
# off, then SHM off), says so, records them in sweep.json and carries on, so that every shipped
# NCCL space ends with a working profile on every example spec (sim backend, 1 s deadlines). The
# default and collectives spaces run with descent: on the NVSwitch specs they have thousands of
# configurations, which the grid and halving would all measure.
# The mpi space is Open MPI's: nothing of NCCL to cure, and the sim backend does not model it.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
for space in "$TOPOTUNE_SRC"/profiles/spaces/nccl-*.json; do
    for spec in "$TOPOTUNE_SRC"/profiles/specs/*.json; do
        name=$(basename "$space" .json)-$(basename "$spec" .json)
        strategy=grid
        case "$(basename "$space")" in nccl-default.json | nccl-collectives.json) strategy=descent ;; esac
        "$TOPOTUNE" sweep --backend sim --topology "$spec" --space "$space" --strategy "$strategy" \
            --timeout 1 --out "$name" >/dev/null 2>"$name.err"
        check "$name: the sweep ends 0 (a cured sweep did its work)" test $? -eq 0
        expect_exit 0 "$name: gen" -- "$TOPOTUNE" gen --runs "$name" --profiles "profiles-$name"
        check "$name: a working profile" python3 - "profiles-$name" "$name" <<'PY'
import glob, json, sys
p = json.load(open(glob.glob(sys.argv[1] + "/*/v1/profile.json")[0]))
assert p["defaults_best"] or p["variables"], (sys.argv[2], p["summary"])
if "rtx4090" in sys.argv[2]:  # broken PCIe P2P: the defaults hang there
    v = {x["name"]: x for x in p["variables"]}
    assert v["NCCL_P2P_DISABLE"]["value"] == "1" and v["NCCL_P2P_DISABLE"]["role"] == "system", p["variables"]
if "container" in sys.argv[2]:  # and a 64 MB /dev/shm: SHM off too
    assert {x["name"]: x["value"] for x in p["variables"]}.get("NCCL_SHM_DISABLE") == "1", p["variables"]
PY
    done
done
check "the sweep said it applied a cure" grep -q "every configuration now runs with the cure" nccl-quick-rtx4090-8x-pcie.err
check "sweep.json records the cure and its evidence" python3 - nccl-quick-rtx4090-8x-pcie/sweep.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["cures"][0]["vars"] == {"NCCL_P2P_DISABLE": "1"}, m.get("cures")
assert "timeout" in m["cures"][0]["evidence"], m["cures"]
assert all(c["env"].get("NCCL_P2P_DISABLE") == "1" for c in m["configs"][1:]), m["configs"]
PY
check "sweep.json still valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/sweep.schema.json" nccl-quick-rtx4090-8x-pcie/sweep.json
# A resume of a cured sweep measures nothing again and keeps the cure.
expect_exit 0 "resume a cured sweep" -- "$TOPOTUNE" sweep --backend sim --topology "$TOPOTUNE_SRC/profiles/specs/rtx4090-8x-pcie.json" \
    --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" --timeout 1 --out nccl-quick-rtx4090-8x-pcie --resume
check "nothing measured twice" python3 - nccl-quick-rtx4090-8x-pcie/results.jsonl <<'PY'
import collections, json, sys
runs = collections.Counter((r["config_id"], r["rep"], r["rung"]) for r in map(json.loads, open(sys.argv[1])))
assert max(runs.values()) == 1, runs
PY
finish
