#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The per-size table (issue 17): gen writes tuner-table.txt in the plugin's format with rows only
# where a choice beat what runs without the table (the profile's configuration) beyond the noise,
# none when the defaults are best; ranges meet at geometric midpoints (issue 23); tuner.csv
# never leaves the example plugin on one channel; the sim backend applies the table as the plugin
# does; topotune verify prints per size the gains, each labelled predicted, or, with --backend
# nccl, measured by three configurations' runs through a launcher, the plugin named to NCCL.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
spec="$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "8", "max": "1G", "factor": 64},
 "objective": {"min": "1M", "max": "1G"}, "vars": {"NCCL_ALGO": [null, "Ring"], "NCCL_PROTO": [null, "LL128"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 10, "cv_max": 0.05}' >"$TEST_TMP/space.json"
"$TOPOTUNE" -q sweep --topology "$spec" --space "$TEST_TMP/space.json" --out "$TEST_TMP/plain" || true

# 1. The model picks NCCL's fastest pair per size: the defaults are best, so no row anywhere.
expect_exit 0 "gen: defaults best" -- "$TOPOTUNE" gen --runs "$TEST_TMP/plain" --profiles "$TEST_TMP/p1"
p1=$(echo "$TEST_TMP"/p1/*/latest)
check "tuner-table.txt written, magic first" test "$(head -n 1 "$p1/tuner-table.txt")" = "# topotune tuner table 1"
check "defaults best: no row in tuner-table.txt" bash -c "! grep -q '^allreduce' '$p1/tuner-table.txt'"
check "defaults best: no row in tuner.csv" bash -c "! grep -q 'allreduce' '$p1/tuner.csv'"
check "defaults best: profile.json has no tuner row" python3 -c 'import json,sys; p = json.load(open(sys.argv[1])); assert p["defaults_best"] and p["tuner"] == [], p["tuner"]' "$p1/profile.json"
check "tuner.csv points to topotune's plugin" grep -q "libnccl-tuner-topotune.so" "$p1/tuner.csv"

# 2. Results where Ring beats the defaults x3 at 128 MiB (it wins: the profile sets NCCL_ALGO=Ring),
# and Ring with LL128 beats Ring, the profile's configuration, x1.5 at 8 and 512 B and by 1%
# (within the noise) at 32 KiB: a row there only, judged where it applies (on top of Ring), its
# range ending at the geometric midpoint of 512 B and 32 KiB (4 KiB, not 16 KiB).
mkdir -p "$TEST_TMP/forced"
python3 - "$TEST_TMP/plain" "$TEST_TMP/forced" <<'PY'
import json, sys
src, dst = sys.argv[1:]
open(dst + "/sweep.json", "w").write(open(src + "/sweep.json").read())
runs = [json.loads(l) for l in open(src + "/results.jsonl")]
def busbw(env, r):
    for b in runs:
        if b["env"] == env and b["rep"] == r["rep"] and b["final"] == r["final"]:
            return {s["size"]: s["busbw"] for s in b["sizes"]}
with open(dst + "/results.jsonl", "w") as out:
    for r in runs:
        if r["env"] == {"NCCL_ALGO": "Ring"}:
            base = busbw({}, r)
            for s in r["sizes"]:
                if s["size"] >= 1 << 27:
                    s["busbw"] = base[s["size"]] * 3
        if r["env"] == {"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL128"}:
            ring = busbw({"NCCL_ALGO": "Ring"}, r)
            for s in r["sizes"]:
                f = 1.5 if s["size"] <= 512 else 1.01 if s["size"] == 32768 else 0
                if f:
                    s["busbw"] = ring[s["size"]] * f
        out.write(json.dumps(r) + "\n")
PY
expect_exit 0 "gen: per-size rows" -- "$TOPOTUNE" gen --runs "$TEST_TMP/forced" --profiles "$TEST_TMP/p2"
p2=$(echo "$TEST_TMP"/p2/*/latest)
check "a row only where Ring+LL128 beat Ring beyond the noise, merged, to the geometric midpoint" python3 - "$p2" <<'PY'
import json, re, sys
d = sys.argv[1]
p = json.load(open(d + "/profile.json"))
lines = open(d + "/tuner-table.txt").read().splitlines()
assert lines[0] == "# topotune tuner table 1", lines[0]
assert re.match(r"# digest=[0-9a-f]{16}$", lines[1]), lines[1]  # its own, checked by tuner.table
assert lines[2] == "# rows=1", lines[2]  # what the launch scripts count a copy's rows against
assert "# class=" + p["class"] in lines[3:6], lines[:6]
cols = "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels"
i = lines.index(cols)
assert all(re.match(r"# (digest|rows|class|nccl_min|nccl_max|gpus)=\S+$", l) for l in lines[1:i]), lines[:i]
assert "# gpus=8" in lines[1:i] and not any(l.startswith("# gpu_model=") for l in lines), lines[:i]
rows = [l.split(",") for l in lines[i + 1:] if l and not l.startswith("#")]
assert p["winner"]["env"] == {"NCCL_ALGO": "Ring"}, p["summary"]
assert rows == [["allreduce", "0", "4096", "1", "8", "ring", "ll128", "0"]], rows
t = p["tuner"]
assert [r["sizes"] for r in t] == [[8, 512]], t
for r in t:
    assert r["runs"] == 2 and r["gain_min"] > 0.4 and r["channels"] == 0 and r["evidence"], r
    assert r["defaults"] == "ring,ll" and "over the profile's configuration" in r["evidence"], r
PY
check "tuner.csv: no row left on one channel" python3 - "$p2/tuner.csv" <<'PY'
import sys
rows = [l for l in open(sys.argv[1]).read().splitlines() if "allreduce" in l]
assert len(rows) == 1 and all(l.startswith("#row ") for l in rows), rows
assert rows[-1].split(",")[2] == "4096", rows[-1]
PY
for sh in "$p2"/launch/*.sh; do
    check "shellcheck $(basename "$sh")" shellcheck "$sh"
done
# shellcheck disable=SC2016 # the script's own $profile_dir
check "torchrun.sh sets the table" grep -q 'export TOPOTUNE_TUNER_TABLE="$profile_dir/tuner-table.txt"' "$p2/launch/torchrun.sh"
check "mpirun.sh forwards the plugin's variables" grep -q "NCCL_TUNER_PLUGIN" "$p2/launch/mpirun.sh"
check "Dockerfile fragment ships the plugin" grep -q "^COPY libnccl-tuner-topotune.so " "$p2/launch/Dockerfile.fragment"
check "pytorchjob.yaml sets the plugin" python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); env = {e["name"] for e in d["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["env"]}; assert {"NCCL_TUNER_PLUGIN", "TOPOTUNE_TUNER_TABLE"} <= env and "TOPOTUNE_CLASS" not in env, env' "$p2/launch/pytorchjob.yaml"
# The launch script exports the plugin only where the file exists, and says so once otherwise.
cat >"$TEST_TMP/fake-torchrun" <<'SH'
#!/usr/bin/env bash
echo "NCCL_TUNER_PLUGIN=${NCCL_TUNER_PLUGIN:-unset} TOPOTUNE_TUNER_TABLE=$TOPOTUNE_TUNER_TABLE"
SH
chmod +x "$TEST_TMP/fake-torchrun"
mkdir -p "$TEST_TMP/bin" && cp "$TEST_TMP/fake-torchrun" "$TEST_TMP/bin/torchrun"
expect_exit 0 "torchrun.sh without the plugin" -- env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false \
    TOPOTUNE_TUNER_PLUGIN=/nonexistent/libnccl-tuner-topotune.so "$p2/launch/torchrun.sh" -- train.py
check "no plugin: NCCL_TUNER_PLUGIN unset" grep -q "NCCL_TUNER_PLUGIN=unset" "$TEST_TMP/out"
check "no plugin: said once" test "$(grep -c "tuner plugin" "$TEST_TMP/err")" -eq 1
touch "$TEST_TMP/libnccl-tuner-topotune.so"
expect_exit 0 "torchrun.sh with the plugin" -- env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false \
    TOPOTUNE_TUNER_PLUGIN="$TEST_TMP/libnccl-tuner-topotune.so" "$p2/launch/torchrun.sh" -- train.py
check "plugin exported" grep -q "NCCL_TUNER_PLUGIN=$TEST_TMP/libnccl-tuner-topotune.so" "$TEST_TMP/out"
# The table as the version's own file: NCCL's plugin reads it at every communicator's init, and a
# gen after the launch moves latest (the job's next communicator failed on the new table's
# digest); a relative TOPOTUNE_PROFILE would follow a rank into another working folder.
v=$(readlink "$p2")
check "launched through latest: the table by its version ($v)" \
    grep -q "TOPOTUNE_TUNER_TABLE=$(cd -P "$p2" && pwd -P)/tuner-table.txt\$" "$TEST_TMP/out"
# shellcheck disable=SC2016 # the inner shell's arguments
expect_exit 0 "torchrun.sh with a relative TOPOTUNE_PROFILE" -- \
    bash -c 'cd "$1/.." && env PATH="$2:$PATH" TOPOTUNE_PYTHON=false TOPOTUNE_PROFILE=latest latest/launch/torchrun.sh -- train.py' \
    _ "$p2" "$TEST_TMP/bin"
check "relative TOPOTUNE_PROFILE: the table's path absolute" \
    grep -q "TOPOTUNE_TUNER_TABLE=$(cd -P "$p2" && pwd -P)/tuner-table.txt\$" "$TEST_TMP/out"
# a CDPATH naming a folder with its own "latest" (cd took it, and the other profile's table); a
# root reached through a link keeps that path (a physical one may not exist on the other nodes)
mkdir -p "$TEST_TMP/decoy/latest"
# shellcheck disable=SC2016 # the inner shell's arguments
expect_exit 0 "torchrun.sh with CDPATH set" -- \
    bash -c 'cd "$1/.." && env CDPATH="$3" PATH="$2:$PATH" TOPOTUNE_PYTHON=false TOPOTUNE_PROFILE=latest latest/launch/torchrun.sh -- train.py' \
    _ "$p2" "$TEST_TMP/bin" "$TEST_TMP/decoy"
check "CDPATH ignored" grep -q "TOPOTUNE_TUNER_TABLE=$(cd -P "$p2" && pwd -P)/tuner-table.txt\$" "$TEST_TMP/out"
ln -s "$TEST_TMP/p2" "$TEST_TMP/p2-link"
linked=$TEST_TMP/p2-link/${p2#"$TEST_TMP/p2/"}
expect_exit 0 "torchrun.sh through a linked root" -- env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false \
    "$linked/launch/torchrun.sh" -- train.py
check "the linked root's path kept, latest resolved" grep -q "TOPOTUNE_TUNER_TABLE=${linked%/latest}/$v/tuner-table.txt\$" "$TEST_TMP/out"
expect_exit 2 "a TOPOTUNE_PROFILE that is not there" -- env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false \
    TOPOTUNE_PROFILE="$TEST_TMP/nowhere" "$p2/launch/torchrun.sh" -- train.py
expect_stderr_has "no profile at '$TEST_TMP/nowhere'" "said, with the fix"

# 3. The sim backend applies the table as the plugin does (the plugin's parser), only when a
# plugin is loaded.
bench_algo() {
    "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 512 -e 512 --json - 2>/dev/null |
        python3 -c 'import json, sys; print([e["algo"] + "/" + e["proto"] for e in map(json.loads, sys.stdin) if "algo" in e][0])'
}
check "sim without the plugin: Ring/LL at 512 B" test "$(bench_algo)" = RING/LL
check "sim with the plugin and table: the row's Ring/LL128" test "$(NCCL_TUNER_PLUGIN=x TOPOTUNE_TUNER_TABLE="$p2/tuner-table.txt" bench_algo)" = RING/LL128
check "sim with a table but no plugin: Ring/LL" test "$(TOPOTUNE_TUNER_TABLE="$p2/tuner-table.txt" bench_algo)" = RING/LL
# the job's table named (TOPOTUNE_TUNER_DIGEST): its own digest applies it; another's fails init
# (exit 3, NCCL's error), as the plugin fails the communicator's init
digest=$(sed -n 's/^# digest=//p' "$p2/tuner-table.txt")
check "sim, the job's table by its digest: the row's Ring/LL128" test "$(NCCL_TUNER_PLUGIN=x \
    TOPOTUNE_TUNER_TABLE="$p2/tuner-table.txt" TOPOTUNE_TUNER_DIGEST="$digest" bench_algo)" = RING/LL128
expect_exit 3 "sim, another table's digest: NCCL's error at init" -- env NCCL_TUNER_PLUGIN=x \
    TOPOTUNE_TUNER_TABLE="$p2/tuner-table.txt" TOPOTUNE_TUNER_DIGEST=0123456789abcdef \
    "$TOPOTUNE_BENCH" --backend sim --topology "$spec" -b 512 -e 512
expect_stderr_has "it is not the table the job was launched with" "says why"

# 4. verify: three configurations per size, every gain labelled predicted.
expect_exit 0 "verify" -- "$TOPOTUNE" verify "$p2" --topology "$spec"
check "verify: a line per size, gains predicted" test "$(grep -c '^ *predicted .*predicted .*%  *predicted .*%$' "$TEST_TMP/out")" -eq 14
check "verify: the row applies at 512 B" grep -qE "^ *predicted +512 .*RING/LL128\*" "$TEST_TMP/out"
check "verify: not beyond 4 KiB" grep -qE "^ *predicted +8192 .*RING/LL " "$TEST_TMP/out"
expect_exit 0 "verify --json" -- "$TOPOTUNE" verify "$p2" --topology "$spec" --json
check "verify --json" python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["predicted"] and d["table_rows"] == 1 and d["sizes"][0]["table_row"] and not d["sizes"][-1]["table_row"]' "$TEST_TMP/out"
mkdir -p "$TEST_TMP/bad" && printf 'not a table\n' >"$TEST_TMP/bad/tuner-table.txt"
cp "$p2/profile.json" "$TEST_TMP/bad/"
expect_exit 2 "verify: a malformed table is refused" -- "$TOPOTUNE" verify "$TEST_TMP/bad" --topology "$spec"
expect_stderr_has "tuner table" "the table is named"
# A damaged profile's variable that no sweep sets is refused by the prediction too, as by the
# measured verify (it printed a value's newline and escape sequence raw, a forged line, and
# modelled LD_PRELOAD as a tuning variable).
cp -rL "$p2" "$TEST_TMP/forged"
for var in '{"name": "NCCL_PROTO", "value": "Simple\n# forged\u001b[2J", "role": "system"}' \
    '{"name": "LD_PRELOAD", "value": "/tmp/evil.so", "role": "system"}'; do
    python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); p["variables"] = [json.loads(sys.argv[2])]
json.dump(p, open(sys.argv[1], "w"))' "$TEST_TMP/forged/profile.json" "$var"
    expect_exit 2 "verify: a profile setting $var" -- "$TOPOTUNE" verify "$TEST_TMP/forged" --topology "$spec"
    expect_stderr_has "which verify does not set" "refused, named"
    check "nothing printed" test ! -s "$TEST_TMP/out"
done

# 5. verify --backend nccl: measured, interleaved runs of each configuration through a launcher.
# fake-bench.sh (mode verify) stands in for topotune-bench on a GPU machine: busbw x1.5 when
# NCCL_TUNER_PLUGIN and TOPOTUNE_TUNER_TABLE name readable files, with the plugin's loaded line.
if [ ! -r "$TOPOTUNE_BIN/tuner/libnccl-tuner-topotune.so" ]; then
    echo "note: the tuner plugin is not built here (no NCCL headers): verify --backend nccl not run"
    finish
    exit
fi
export FAKE_PIDS=$TEST_TMP/fake
: >"$FAKE_PIDS.env"
for mode in verify unloaded; do
    fake_bench "$TEST_TMP/bench-$mode" verify "[ $mode = unloaded ] && unset TOPOTUNE_TUNER_TABLE"
done
measured() { env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-$1" "$TOPOTUNE" verify "$p2" --backend nccl \
    --launcher direct --np 1 --repeat 2 -b 8 -e 512 "${@:2}"; }
expect_exit 0 "verify --backend nccl" -- measured verify --out "$TEST_TMP/vm"
# the profile sets NCCL_ALGO: env-only x1.2 over the defaults, the table x1.5 over env-only
check "a line per size, every gain measured: +50% with the table, +80% over the defaults" \
    test "$(grep -c '^ *measured .* 10.00 GB/s .* 12.00 GB/s .* 18.00 GB/s .*measured  *+50.0%  *measured  *+80.0%$' "$TEST_TMP/out")" -eq 4
check "said measured, with the runs' directory" grep -q "^# MEASURED .*2 run(s) each" "$TEST_TMP/out"
check "6 runs, interleaved; the plugin and the table named only in the third configuration" python3 - \
    "$FAKE_PIDS.env" "$TOPOTUNE_BIN/tuner/libnccl-tuner-topotune.so" "$p2/tuner-table.txt" <<'PY'
import os, sys
runs = [dict(w.split("=", 1) for w in l.split()) for l in open(sys.argv[1])]
assert len(runs) == 6, runs
for i, r in enumerate(runs):
    assert r["NCCL_DEBUG"] == "INFO" and "TUNING" in r["NCCL_DEBUG_SUBSYS"], r
    if i % 3 == 2:
        assert os.path.realpath(r["NCCL_TUNER_PLUGIN"]) == os.path.realpath(sys.argv[2]), r
        assert r["TOPOTUNE_TUNER_TABLE"] == os.path.realpath(sys.argv[3]), r
    else:
        assert "NCCL_TUNER_PLUGIN" not in r and "TOPOTUNE_TUNER_TABLE" not in r, r
PY
check "the runs' events and NCCL's logs kept" bash -c "test -s '$TEST_TMP/vm/env-table-r1.jsonl' && cat '$TEST_TMP/vm/env-table-r0.'*.log.nccl.* | grep -q 'topotune tuner: loaded'"
# without --out the runs go into TMPDIR, as every temporary file does (it was /tmp, always)
mkdir -p "$TEST_TMP/tmpdir"
expect_exit 0 "verify without --out" -- env TMPDIR="$TEST_TMP/tmpdir" TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-verify" \
    "$TOPOTUNE" verify "$p2" --backend nccl --launcher direct --np 1 --repeat 1 -b 8 -e 8
check "its runs in TMPDIR" sh -c "ls -d '$TEST_TMP'/tmpdir/topotune-verify-* >/dev/null 2>&1"
# the shell's own NCCL_DEBUG_FILE does not hide NCCL's log from the check
export NCCL_DEBUG_FILE="$TEST_TMP/elsewhere.%p"
expect_exit 0 "verify with NCCL_DEBUG_FILE set in the shell" -- measured verify
unset NCCL_DEBUG_FILE
# a profile variable exported in the shell (its env file sourced) would make the reference run
# the profile's: cleared from every run, and said
: >"$FAKE_PIDS.env"
expect_exit 0 "verify with the profile's NCCL_ALGO in the shell" -- env NCCL_ALGO=Ring \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-verify" "$TOPOTUNE" verify "$p2" --backend nccl \
    --launcher direct --np 1 --repeat 1 -b 8 -e 8
check "cleared, and said" grep -q "^# cleared from this shell for every run: NCCL_ALGO" "$TEST_TMP/out"
check "the reference run without the shell's NCCL_ALGO" bash -c "head -n 1 '$FAKE_PIDS.env' | grep -vq NCCL_ALGO"
# a damaged profile setting a loader variable: refused, named (the name outlives its JSON)
cp -rL "$p2" "$TEST_TMP/hostile"
python3 -c 'import json, sys
p = json.load(open(sys.argv[1])); p["variables"].append({"name": "LD_PRELOAD", "value": "x"})
json.dump(p, open(sys.argv[1], "w"))' "$TEST_TMP/hostile/profile.json"
expect_exit 2 "a profile setting LD_PRELOAD" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-verify" \
    "$TOPOTUNE" verify "$TEST_TMP/hostile" --backend nccl --launcher direct --np 1 --repeat 1 -b 8 -e 8
expect_stderr_has "the profile sets LD_PRELOAD, which verify does not set" "named"
for var in NCCL_TUNER_PLUGIN TOPOTUNE_TUNER_TABLE NCCL_CONF_FILE; do # as the profile's image sets
    : >"$FAKE_PIDS.env"
    expect_exit 0 "verify with $var in the shell" -- env "$var=$TEST_TMP/x" \
        TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-verify" "$TOPOTUNE" verify "$p2" --backend nccl \
        --launcher direct --np 1 --repeat 1 -b 8 -e 8
    check "$var cleared from the reference run" bash -c "head -n 1 '$FAKE_PIDS.env' | grep -vq '$var=$TEST_TMP/x'"
done
expect_exit 0 "verify --backend nccl --json" -- measured verify --json
check "--json: measured, the plugin loaded, the gain per size" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["predicted"] is False and d["plugin_loaded"] and d["runs"] == 2, d
assert [s["size"] for s in d["sizes"]] == [8, 32, 128, 512] and d["sizes"][0]["gain_vs_env_pct"] == 50, d["sizes"]' "$TEST_TMP/out"
expect_exit 3 "a plugin that did not load is no verification" -- measured unloaded
expect_stderr_has "the table was not applied" "said why"
expect_exit 2 "--backend nccl needs --np" -- "$TOPOTUNE" verify "$p2" --backend nccl
expect_stderr_has "needs --np N" "--np asked for"
expect_exit 2 "--topology and --backend nccl" -- "$TOPOTUNE" verify "$p2" --backend nccl --np 2 --topology "$spec"
# An NVLink domain across nodes (a GB200 NVL72 rack: 18 hosts of 4 GPUs): NCCL counts the rack as
# one node, and passes that count to its tuner plugin, so the table's rows say 1 node, 72 ranks;
# the sim, which counts nodes as NCCL does, applies them.
nvl="$TOPOTUNE_SRC/profiles/specs/gb200-nvl72.json"
"$TOPOTUNE" -q sweep --topology "$nvl" --space "$TEST_TMP/space.json" --out "$TEST_TMP/rack" || true
mkdir -p "$TEST_TMP/rack-forced"
python3 - "$TEST_TMP/rack" "$TEST_TMP/rack-forced" <<'PY'
import json, sys
src, dst = sys.argv[1:]
open(dst + "/sweep.json", "w").write(open(src + "/sweep.json").read())
runs = [json.loads(l) for l in open(src + "/results.jsonl")]
assert {r["nodes"] for r in runs} == {18}, {r["nodes"] for r in runs}  # the rack's hosts
with open(dst + "/results.jsonl", "w") as out:
    for r in runs:
        if r["env"] == {"NCCL_PROTO": "LL128"}:  # LL128 20 times as fast at 512 B only
            for s in r["sizes"]:
                if s["size"] == 512:
                    s["busbw"] *= 20
        out.write(json.dumps(r) + "\n")
PY
expect_exit 0 "gen: the rack's table" -- "$TOPOTUNE" gen --runs "$TEST_TMP/rack-forced" --profiles "$TEST_TMP/p-rack"
p_rack=$(echo "$TEST_TMP"/p-rack/*/latest)
check "its row: 1 node (NCCL's count), 72 ranks" python3 - "$p_rack" <<'PY'
import sys
lines = open(sys.argv[1] + "/tuner-table.txt").read().splitlines()
rows = [l.split(",") for l in lines if l.startswith("allreduce,")]
assert rows and all(r[3:5] == ["1", "72"] for r in rows), rows
PY
expect_exit 0 "verify: the sim applies the rack's table" -- "$TOPOTUNE" verify "$p_rack" --topology "$nvl" -b 512 -e 512
check "its row fits the rack as NCCL counts it" grep -q "1 of its 1 all_reduce row(s) fit 1 node(s) x 72 rank(s)" "$TEST_TMP/out"
finish
