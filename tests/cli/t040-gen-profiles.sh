#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune gen and profiles: two classes from sim sweeps, system variables where the defaults
# failed, versions only on content changes, diff, validated output checked by real tools.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs="$TOPOTUNE_SRC/profiles/specs"
space() { printf '%s\n' "$2" >"$TEST_TMP/$1.json"; }
space rtx-a '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_P2P_DISABLE": ["1"], "NCCL_SHM_DISABLE": ["1"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}'
space rtx-b '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_P2P_DISABLE": [null, "1"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}'
"$TOPOTUNE" -q sweep --topology "$specs/hgx-h100.json" --backend sim --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" \
    --out "$TEST_TMP/h100" || true
"$TOPOTUNE" -q sweep --no-cures --topology "$specs/rtx4090-8x-pcie.json" --space "$TEST_TMP/rtx-a.json" --out "$TEST_TMP/rtx-a" || true
"$TOPOTUNE" -q sweep --topology "$specs/rtx4090-8x-pcie.json" --space "$TEST_TMP/rtx-b.json" --out "$TEST_TMP/rtx-b" || true
root=$TEST_TMP/profiles

expect_exit 0 "gen: two classes" -- "$TOPOTUNE" gen --runs "$TEST_TMP/h100" "$TEST_TMP/rtx-a" --profiles "$root"
check "two classes, v1 each" python3 - "$root" <<'PY'
import json, sys
index = json.load(open(sys.argv[1] + "/index.json"))
assert len(index["classes"]) == 2 and all(c["latest"] == 1 for c in index["classes"].values()), index
PY
rtx=$(python3 -c 'import json,sys; print([c for c in json.load(open(sys.argv[1]))["classes"] if c.startswith("rtx")][0])' "$root/index.json")
check "the 4090 profile disables P2P as a system variable: P2P hung there" python3 - "$root/$rtx/latest/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in p["variables"]}
assert v["NCCL_P2P_DISABLE"]["value"] == "1" and v["NCCL_P2P_DISABLE"]["role"] == "system", v
assert "timeout" in v["NCCL_P2P_DISABLE"]["evidence"], v
assert p["predicted"] is True and p["version"] == 1 and p["content_hash"]
PY
check "nccl.env carries it" grep -q "^export NCCL_P2P_DISABLE='1'" "$root/$rtx/latest/nccl.env"
check "nccl.conf carries it" grep -q '^NCCL_P2P_DISABLE=1$' "$root/$rtx/latest/nccl.conf"

# Same results again: no new version.
expect_exit 0 "gen again" -- "$TOPOTUNE" gen --runs "$TEST_TMP/h100" "$TEST_TMP/rtx-a" --profiles "$root"
check "unchanged" grep -q "unchanged, v1" "$TEST_TMP/out"
check "still one version" test ! -e "$root/$rtx/v2"

# Results that change the winner (P2P off alone beats P2P and SHM off): v2, and diff shows it.
expect_exit 0 "gen with more results" -- "$TOPOTUNE" gen --runs "$TEST_TMP/rtx-a" "$TEST_TMP/rtx-b" --profiles "$root"
check "v2 written" test -d "$root/$rtx/v2" -a "$(readlink "$root/$rtx/latest")" = v2
expect_exit 0 "profiles diff" -- "$TOPOTUNE" profiles --profiles "$root" diff "$rtx"
check "diff names the dropped variable" grep -q -- "- NCCL_SHM_DISABLE=1" "$TEST_TMP/out"
check "diff: each predicted objective with its band" grep -qE \
    "objective: predicted [0-9.]+ \[band [0-9.]+-[0-9.]+\] -> predicted [0-9.]+ \[band [0-9.]+-[0-9.]+\]" "$TEST_TMP/out"
check "the profile: a predicted objective's band around it, by the schema" python3 - "$root/$rtx/v2/profile.json" "$TOPOTUNE_SRC" <<'PY'
import json, subprocess, sys
p = json.load(open(sys.argv[1]))
for o in (p["winner"], p["baseline"]):
    if o and o["objective"] > 0:
        lo, hi = o["objective_band"]
        assert 0 < lo < o["objective"] < hi, o
subprocess.run([sys.executable, sys.argv[2] + "/tests/cli/validate-schema.py",
                sys.argv[2] + "/docs/schemas/profile.schema.json", sys.argv[1]], check=True)
PY
expect_exit 0 "profiles list" -- "$TOPOTUNE" profiles --profiles "$root" list
check "list shows both classes" test "$(grep -c . "$TEST_TMP/out")" -eq 2
expect_exit 0 "profiles show" -- "$TOPOTUNE" profiles --profiles "$root" show "$rtx" v1
check "show explains the variables" grep -q "NCCL_SHM_DISABLE=1  \[system\]" "$TEST_TMP/out"

# Everything generated passes real tools.
for dir in "$root"/*/v*; do
    for sh in "$dir"/launch/*.sh; do
        check "bash -n $(basename "$sh")" bash -n "$sh"
        check "shellcheck $(basename "$sh")" shellcheck "$sh"
    done
    check "nccl.env sources" bash -c "set -eu; . '$dir/nccl.env'"
    check "shellcheck nccl.env" shellcheck "$dir/nccl.env"
    check "pytorchjob.yaml parses" python3 -c 'import sys, yaml; docs = list(yaml.safe_load_all(open(sys.argv[1]))); assert docs[0]["kind"] == "PyTorchJob"' "$dir/launch/pytorchjob.yaml"
done

# A value that was never validated is refused, and nothing is written.
mkdir -p "$TEST_TMP/evil"
python3 - "$TEST_TMP/rtx-b" "$TEST_TMP/evil" <<'PY'
import json, sys
src, dst = sys.argv[1:]
sweep = json.load(open(src + "/sweep.json"))
for c in sweep["configs"]:
    if c["env"]:
        c["env"]["NCCL_P2P_DISABLE"] = "1;touch /tmp/pwned"
open(dst + "/sweep.json", "w").write(json.dumps(sweep))
with open(dst + "/results.jsonl", "w") as out:
    for line in open(src + "/results.jsonl"):
        r = json.loads(line)
        if r["env"]:
            r["env"]["NCCL_P2P_DISABLE"] = "1;touch /tmp/pwned"
        out.write(json.dumps(r) + "\n")
PY
expect_exit 2 "a value needing quotes is refused" -- "$TOPOTUNE" gen --runs "$TEST_TMP/evil" --profiles "$TEST_TMP/evil-profiles"
expect_stderr_has "value of NCCL_P2P_DISABLE" "the field is named"
check "no version written from it" bash -c "! ls '$TEST_TMP'/evil-profiles/*/v1 >/dev/null 2>&1"
finish
