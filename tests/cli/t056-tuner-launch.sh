#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The launch files name topotune's tuner plugin only when the table has rows, keep the tuner the
# job had as the next one in the plugin's chain (TOPOTUNE_NEXT_TUNER), and no longer copy the
# profile's class into TOPOTUNE_CLASS (the plugin checks the node it runs on, through the table's
# gpus= header).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
spec="$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "8", "max": "1G", "factor": 64},
 "objective": {"min": "1M", "max": "4M"}, "vars": {"NCCL_ALGO": [null, "Tree"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 10, "cv_max": 0.05}' >"$TEST_TMP/space.json"
"$TOPOTUNE" -q sweep --topology "$spec" --space "$TEST_TMP/space.json" --out "$TEST_TMP/plain" || true
# The defaults are best everywhere: no row. Then Tree made x3 faster at the largest size, outside
# the objective (so the defaults stay the profile and the table carries Tree there): rows.
expect_exit 0 "gen: no row" -- "$TOPOTUNE" gen --runs "$TEST_TMP/plain" --profiles "$TEST_TMP/p1"
mkdir -p "$TEST_TMP/forced"
python3 - "$TEST_TMP/plain" "$TEST_TMP/forced" <<'PY'
import json, sys
src, dst = sys.argv[1:]
open(dst + "/sweep.json", "w").write(open(src + "/sweep.json").read())
rows = [json.loads(l) for l in open(src + "/results.jsonl")]
with open(dst + "/results.jsonl", "w") as out:
    for r in rows:
        if r["env"].get("NCCL_ALGO") == "Tree":
            base = [b for b in rows if not b["env"] and b["rep"] == r["rep"] and b["final"] == r["final"]]
            base = {s["size"]: s["busbw"] for s in base[0]["sizes"]} if base else {}
            for s in r["sizes"]:
                if s["size"] >= 1 << 27 and s["size"] in base:
                    s["busbw"] = base[s["size"]] * 3
        out.write(json.dumps(r) + "\n")
PY
expect_exit 0 "gen: rows" -- "$TOPOTUNE" gen --runs "$TEST_TMP/forced" --profiles "$TEST_TMP/p2"
p1=$(echo "$TEST_TMP"/p1/*/latest)
p2=$(echo "$TEST_TMP"/p2/*/latest)
check "the table names the kind of node: 8 GPUs (no model: predicted)" \
    bash -c "grep -qx '# gpus=8' '$p2/tuner-table.txt' && ! grep -q '^# gpu_model=' '$p2/tuner-table.txt'"

mkdir -p "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/torchrun" <<'SH'
#!/usr/bin/env bash
echo "NCCL_TUNER_PLUGIN=${NCCL_TUNER_PLUGIN:-unset} TOPOTUNE_NEXT_TUNER=${TOPOTUNE_NEXT_TUNER:-unset} TOPOTUNE_CLASS=${TOPOTUNE_CLASS:-unset}"
SH
chmod +x "$TEST_TMP/bin/torchrun"
plugin="$TEST_TMP/lib/libnccl-tuner-topotune.so"
mkdir -p "$TEST_TMP/lib" && touch "$plugin"
run() { env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false TOPOTUNE_TUNER_PLUGIN="$plugin" "$@" -- train.py; }

# 1. No row: the plugin is not named; the job's own tuner stays NCCL's choice.
expect_exit 0 "torchrun.sh, no row" -- run env -u NCCL_TUNER_PLUGIN "$p1/launch/torchrun.sh"
check "no row: NCCL_TUNER_PLUGIN not set" grep -q "^NCCL_TUNER_PLUGIN=unset " "$TEST_TMP/out"
expect_stderr_has "has no row" "no row: said"
expect_exit 0 "torchrun.sh, no row, the job's tuner" -- run env NCCL_TUNER_PLUGIN=/opt/aws/libnccl-net.so \
    "$p1/launch/torchrun.sh"
check "no row: the job's tuner kept" grep -q "^NCCL_TUNER_PLUGIN=/opt/aws/libnccl-net.so " "$TEST_TMP/out"
check "no row: nothing in the pytorchjob" bash -c "! grep -q NCCL_TUNER_PLUGIN '$p1/launch/pytorchjob.yaml'"
check "no row: nothing in the Dockerfile" bash -c "! grep -q '^ENV NCCL_TUNER_PLUGIN' '$p1/launch/Dockerfile.fragment'"
# an image built with an earlier fragment names ours: the tuner before it comes back
expect_exit 0 "torchrun.sh, no row, ours from an image" -- run env \
    NCCL_TUNER_PLUGIN=/opt/topotune/lib/libnccl-tuner-topotune.so TOPOTUNE_NEXT_TUNER=ofi "$p1/launch/torchrun.sh"
check "no row: the image's next tuner named again" grep -q "^NCCL_TUNER_PLUGIN=ofi " "$TEST_TMP/out"
# an image whose base named none saved auto: no tuner is named, NCCL searches as it would
expect_exit 0 "torchrun.sh, no row, ours from an image over no tuner" -- run env \
    NCCL_TUNER_PLUGIN=/opt/topotune/lib/libnccl-tuner-topotune.so TOPOTUNE_NEXT_TUNER=auto "$p1/launch/torchrun.sh"
check "no row: auto names no tuner" grep -q "^NCCL_TUNER_PLUGIN=unset " "$TEST_TMP/out"
# an image built before auto saved our own plugin as next: not named back either
expect_exit 0 "torchrun.sh, no row, ours saved as next" -- run env \
    NCCL_TUNER_PLUGIN=/opt/topotune/lib/libnccl-tuner-topotune.so \
    TOPOTUNE_NEXT_TUNER=/opt/topotune/lib/libnccl-tuner-topotune.so "$p1/launch/torchrun.sh"
check "no row: ours as next names no tuner" grep -q "^NCCL_TUNER_PLUGIN=unset " "$TEST_TMP/out"

# 2. Rows: ours named, the job's tuner saved as the next one, no TOPOTUNE_CLASS copied.
expect_exit 0 "torchrun.sh, rows, the job's tuner" -- run env NCCL_TUNER_PLUGIN=/opt/aws/libnccl-net.so \
    "$p2/launch/torchrun.sh"
check "rows: ours named, the job's tuner next, no class" \
    grep -qx "NCCL_TUNER_PLUGIN=$plugin TOPOTUNE_NEXT_TUNER=/opt/aws/libnccl-net.so TOPOTUNE_CLASS=unset" "$TEST_TMP/out"
# an image's ENV saved its base's tuner as the next one; the job names its own: the job's wins
expect_exit 0 "torchrun.sh, rows, the job's tuner over the image's" -- run env \
    TOPOTUNE_NEXT_TUNER=/opt/base/libnccl-tuner-base.so NCCL_TUNER_PLUGIN=/opt/job/libnccl-tuner-mine.so \
    "$p2/launch/torchrun.sh"
check "rows: the tuner the job named is the next one" \
    grep -qx "NCCL_TUNER_PLUGIN=$plugin TOPOTUNE_NEXT_TUNER=/opt/job/libnccl-tuner-mine.so TOPOTUNE_CLASS=unset" "$TEST_TMP/out"
expect_exit 0 "torchrun.sh, rows, no tuner" -- run env -u NCCL_TUNER_PLUGIN "$p2/launch/torchrun.sh"
check "rows: ours named, next left to the plugin's search" \
    grep -qx "NCCL_TUNER_PLUGIN=$plugin TOPOTUNE_NEXT_TUNER=unset TOPOTUNE_CLASS=unset" "$TEST_TMP/out"
# named as tuner.h allows, by name alone (the loader finds it): it was dropped, the table unused
for name in topotune libnccl-tuner-topotune.so; do
    expect_exit 0 "torchrun.sh, rows, NCCL_TUNER_PLUGIN=$name" -- env PATH="$TEST_TMP/bin:$PATH" \
        TOPOTUNE_PYTHON=false NCCL_TUNER_PLUGIN=$name "$p2/launch/torchrun.sh" -- train.py
    check "ours by name kept: $name" grep -qx "NCCL_TUNER_PLUGIN=$name TOPOTUNE_NEXT_TUNER=unset TOPOTUNE_CLASS=unset" \
        "$TEST_TMP/out"
done
expect_exit 0 "torchrun.sh, rows, TOPOTUNE_TUNER_PLUGIN=none" -- env PATH="$TEST_TMP/bin:$PATH" \
    TOPOTUNE_PYTHON=false TOPOTUNE_TUNER_PLUGIN=none NCCL_TUNER_PLUGIN=/opt/aws/libnccl-net.so \
    "$p2/launch/torchrun.sh" -- train.py
check "none: the job's tuner untouched" grep -q "^NCCL_TUNER_PLUGIN=/opt/aws/libnccl-net.so " "$TEST_TMP/out"
check "mpirun.sh forwards TOPOTUNE_NEXT_TUNER" grep -q "TOPOTUNE_NEXT_TUNER" "$p2/launch/mpirun.sh"
check "Dockerfile: the base image's tuner saved before ours" python3 - "$p2/launch/Dockerfile.fragment" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
i = lines.index("ENV TOPOTUNE_NEXT_TUNER=${TOPOTUNE_NEXT_TUNER:-${NCCL_TUNER_PLUGIN:-auto}}")
assert lines[i + 1].startswith("ENV NCCL_TUNER_PLUGIN="), lines[i + 1]
assert not any(l.startswith("ENV TOPOTUNE_CLASS") for l in lines), lines
PY
check "pytorchjob: the plugin, no class" python3 -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
env = {e["name"] for e in d["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["env"]}
assert "NCCL_TUNER_PLUGIN" in env and "TOPOTUNE_CLASS" not in env, env' "$p2/launch/pytorchjob.yaml"
# 3. The table's digest goes with the plugin (every rank applies this very table, or its init
# fails): what the plugin reads (tuner/tuner.h: what decides calls, not the bytes), written in the
# table, passed by the launch scripts and the image; with no row, none (and none left from
# outside).
mkdir -p "$TEST_TMP/bin2"
cat >"$TEST_TMP/bin2/torchrun" <<'SH'
#!/usr/bin/env bash
echo "DIGEST=${TOPOTUNE_TUNER_DIGEST:-unset}"
SH
chmod +x "$TEST_TMP/bin2/torchrun"
want=$(python3 - "$p2/tuner-table.txt" <<'PY'
import sys
colls = ["broadcast", "reduce", "allgather", "reducescatter", "allreduce"]
algos = ["tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"]
protos = ["ll", "ll128", "simple"]
head = {"class": "", "gpu_model": "", "gpus": "0"}
code = lambda v: (lambda a, b, c: a * 10000 + b * 100 + c)(*map(int, v.split(".")))
vers, rows, seen = [0, 0], [], False
for line in open(sys.argv[1]).read().splitlines():
    if not seen and line.startswith("# ") and "=" in line:
        k, v = (x.strip() for x in line[2:].split("=", 1))
        if k in head:
            head[k] = v
        elif k in ("nccl_min", "nccl_max"):
            vers[k == "nccl_max"] = code(v)
    elif line.startswith("collective,"):
        seen = True
    elif seen and line.strip() and not line.startswith("#"):
        f = [x.strip() for x in line.split(",")] + [""]
        mx = 2**64 - 1 if f[2] == "inf" else int(f[2])
        n = lambda x: 0 if x == "*" else int(x)
        rows.append("%d,%d,%d,%d,%d,%d,%d,%d\n" % (colls.index(f[0].lower()), int(f[1]), mx, n(f[3]),
                    n(f[4]), algos.index(f[5].lower()), protos.index(f[6].lower()), int(f[7] or 0)))
text = "class=%s\ngpu_model=%s\ngpus=%s\nnccl=%d-%d\n" % (head["class"], head["gpu_model"], head["gpus"],
                                                        vers[0], vers[1]) + "".join(rows)
h = 14695981039346656037
for b in text.encode():
    h = ((h ^ b) * 1099511628211) % 2**64
print("%016x" % h)
PY
)
expect_exit 0 "torchrun.sh, rows: the digest" -- env PATH="$TEST_TMP/bin2:$PATH" TOPOTUNE_PYTHON=false \
    TOPOTUNE_TUNER_PLUGIN="$plugin" "$p2/launch/torchrun.sh" -- train.py
check "rows: the table's digest exported ($want)" grep -qx "DIGEST=$want" "$TEST_TMP/out"
# A copy with CRLF line ends (git's autocrlf, a Windows share), which the plugin reads alike:
# the same digest (it was lost, and with it the check that every rank applies one table).
cp -rL "$p2" "$TEST_TMP/crlf"
sed -i 's/$/\r/' "$TEST_TMP/crlf/tuner-table.txt"
expect_exit 0 "torchrun.sh, a CRLF copy of the table" -- env PATH="$TEST_TMP/bin2:$PATH" TOPOTUNE_PYTHON=false \
    TOPOTUNE_TUNER_PLUGIN="$plugin" TOPOTUNE_PROFILE="$TEST_TMP/crlf" "$TEST_TMP/crlf/launch/torchrun.sh" -- train.py
check "CRLF: the same digest exported" grep -qx "DIGEST=$want" "$TEST_TMP/out"
check "mpirun.sh forwards TOPOTUNE_TUNER_DIGEST" grep -q "TOPOTUNE_TUNER_DIGEST" "$p2/launch/mpirun.sh"
check "the table carries it (the launch scripts read it there)" grep -qx "# digest=$want" "$p2/tuner-table.txt"
check "image and pod: none (one image holds one table: a digest pasted from another version would fail every pod)" \
    bash -c "! grep -q TOPOTUNE_TUNER_DIGEST '$p2/launch/pytorchjob.yaml' '$p2/launch/Dockerfile.fragment'"
# TOPOTUNE_PROFILE names another profile: its table's digest goes with its table
cp -rL "$p2" "$TEST_TMP/other"
sed -i 's/^allreduce,\(.*\),0$/allreduce,\1,4/' "$TEST_TMP/other/tuner-table.txt"
sed -i "s/^# digest=.*/# digest=0123456789abcdef/" "$TEST_TMP/other/tuner-table.txt"
expect_exit 0 "torchrun.sh of one profile, TOPOTUNE_PROFILE another" -- env PATH="$TEST_TMP/bin2:$PATH" \
    TOPOTUNE_PYTHON=false TOPOTUNE_TUNER_PLUGIN="$plugin" TOPOTUNE_PROFILE="$TEST_TMP/other" \
    "$p2/launch/torchrun.sh" -- train.py
check "the other profile's digest" grep -qx "DIGEST=0123456789abcdef" "$TEST_TMP/out"
# a node whose copy of the table is cut before its rows, empty or missing: stopped there, not
# left to NCCL while the other nodes apply the rows; TOPOTUNE_TUNER_PLUGIN=none still launches
other() { env PATH="$TEST_TMP/bin2:$PATH" TOPOTUNE_PYTHON=false TOPOTUNE_PROFILE="$TEST_TMP/other" "$@" \
    "$p2/launch/torchrun.sh" -- train.py; }
sed -i '/^allreduce,/,$d' "$TEST_TMP/other/tuner-table.txt"
expect_exit 2 "torchrun.sh, the table cut before its rows" -- other TOPOTUNE_TUNER_PLUGIN="$plugin"
expect_stderr_has "is missing, empty or cut short (0 of 1 rows)" "says so"
: >"$TEST_TMP/other/tuner-table.txt"
expect_exit 2 "torchrun.sh, the table empty" -- other TOPOTUNE_TUNER_PLUGIN="$plugin"
rm "$TEST_TMP/other/tuner-table.txt"
expect_exit 2 "torchrun.sh, the table missing" -- other TOPOTUNE_TUNER_PLUGIN="$plugin"
expect_stderr_has "is missing, empty or cut short" "says so"
expect_exit 0 "torchrun.sh, the table missing, the plugin off" -- other TOPOTUNE_TUNER_PLUGIN=none
check "off: no digest, no plugin" grep -qx "DIGEST=unset" "$TEST_TMP/out"
# a profile without rows never stops for its table (every node leaves the calls to NCCL alike)
cp -rL "$p1" "$TEST_TMP/norows" && rm "$TEST_TMP/norows/tuner-table.txt"
expect_exit 0 "torchrun.sh of a profile without rows, its table missing" -- env PATH="$TEST_TMP/bin2:$PATH" \
    TOPOTUNE_PYTHON=false TOPOTUNE_PROFILE="$TEST_TMP/norows" TOPOTUNE_TUNER_PLUGIN="$plugin" \
    "$p1/launch/torchrun.sh" -- train.py
expect_exit 0 "torchrun.sh, no row, a digest from outside" -- env PATH="$TEST_TMP/bin2:$PATH" \
    TOPOTUNE_PYTHON=false TOPOTUNE_TUNER_PLUGIN="$plugin" TOPOTUNE_TUNER_DIGEST=0123456789abcdef \
    "$p1/launch/torchrun.sh" -- train.py
check "no row: no digest left" grep -qx "DIGEST=unset" "$TEST_TMP/out"
check "no row: none in the image" bash -c "! grep -q TOPOTUNE_TUNER_DIGEST '$p1/launch/Dockerfile.fragment'"

for sh in "$p1"/launch/*.sh "$p2"/launch/*.sh; do
    check "shellcheck $sh" shellcheck "$sh"
done
finish
