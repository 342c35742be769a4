#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A sweep directory is untrusted input to gen and compare. Each attack the review reproduced is
# replayed on a copy of a real sweep: gen refuses with exit 2 naming the field and writes nothing,
# or (a torn last line) writes files byte-identical to the clean directory's. No command runs, no
# file outside --profiles is touched, results.jsonl is never written by a reader.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_P2P_DISABLE": [null, "1"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}' >space.json
"$TOPOTUNE" -q sweep --topology "$TOPOTUNE_SRC/profiles/specs/rtx4090-8x-pcie.json" --space space.json \
    --out clean || true
expect_exit 0 "gen on the clean sweep" -- "$TOPOTUNE" gen --runs clean --profiles out-profiles
mv out-profiles clean-profiles # the torn sweep's profiles go to the same place: same locations
class=$(python3 -c 'import json; print(json.load(open("clean/sweep.json"))["class"])')

# attack NAME FIELD-IN-MESSAGE PYTHON: a copy of the clean sweep edited by PYTHON (meta: sweep.json,
# runs: the results lines), then gen: exit 2, the field named, nothing written, no command run.
attack() {
    local name=$1 field=$2 edit=$3
    rm -rf "$name" && cp -r clean "$name"
    python3 - "$name" "$edit" <<'PY' || { fail "$name: could not build the attack"; return; }
import json, sys
d, edit = sys.argv[1], sys.argv[2]
meta = json.load(open(d + "/sweep.json"))
runs = [json.loads(l) for l in open(d + "/results.jsonl")]
exec(edit)
open(d + "/sweep.json", "w").write(json.dumps(meta))
open(d + "/results.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in runs))
PY
    expect_exit 2 "$name: refused" -- "$TOPOTUNE" gen --runs "$name" --profiles "$name-profiles"
    expect_stderr_has "$field" "$name: the message names $field"
    check "$name: nothing written" bash -c "! find '$name-profiles' -name 'v*' 2>/dev/null | grep -q ."
    check "$name: no command ran" test ! -e pwned -a ! -e /tmp/topotune-pwned
}

# 1. a class id that was a shell command inside system("rm -rf '...'")
attack class-shell "class" "meta['class'] = \"x'; touch pwned; echo '\""
attack class-shell-results "class" "[r.__setitem__('class', \"x'; touch pwned; echo '\") for r in runs]"
# 2. fields that reached the generated files: a quote in versions.nccl (torchrun.sh's check),
#    newlines in versions.cuda and a config id, a second YAML document in the driver version
attack nccl-quote "versions" "meta['versions']['nccl'] = '2.21.5\"; touch /tmp/topotune-pwned; \"'"
attack cuda-newline "versions.cuda" "meta['versions']['cuda'] = '12.4\nexport LD_PRELOAD=/tmp/x.so'"
attack config-newline "config_id" "[r.__setitem__('config_id', r['config_id'] + '\nLD_PRELOAD=/x') for r in runs]"
attack driver-yaml "versions.driver" "meta['versions']['driver'] = '550\n---\nkind: Pod\nspec: {hostPID: true}'"
# 3. path traversal and the root itself
attack class-traversal "class" "meta['class'] = '../../../../x'; [r.__setitem__('class', '../../../../x') for r in runs]"
attack class-empty "class" "meta['class'] = ''; [r.__setitem__('class', '') for r in runs]"
attack class-dot "class" "meta['class'] = '.'; [r.__setitem__('class', '.') for r in runs]"
check "nothing escaped the profiles root" test ! -e "$TEST_TMP/../x" -a ! -e /x
# 4. variables outside the policy, in a configuration and in a result
attack ld-preload "LD_PRELOAD" "meta['configs'][1]['env']['LD_PRELOAD'] = '/tmp/x.so'"
attack bash-env "BASH_ENV" "[r['env'].__setitem__('BASH_ENV', '/tmp/x') for r in runs if r['env']]"
# a value past NCCL's 4096-byte nccl.conf line, its configuration's id made again (sweep's
# FNV-1a of its NAME=VALUE lines): the rest of the line would be read as a variable of its own
# shellcheck disable=SC2016 # Python
attack long-value "at most 255 characters" '
def cid(env):
    h = 1469598103934665603
    for line in ("%s=%s\n" % (k, env[k]) for k in sorted(env)):
        for b in line.encode():
            h = ((h ^ b) * 1099511628211) % 2**64
    return "%012x" % (h >> 16)
c = meta["configs"][1]
old = c["id"]
c["env"]["NCCL_P2P_DISABLE"] = "x" * 4087 + "NCCL_NET_PLUGIN=/tmp/x.so"
c["id"] = cid(c["env"])
for r in runs:
    if r["config_id"] == old:
        r["env"], r["config_id"] = dict(c["env"]), c["id"]'
# 8. results lines missing the fields gen keys on (a segfault before), sweep.json without class
attack no-class "class" "[r.pop('class') for r in runs]"
attack no-config "config_id" "runs[0].pop('config_id')"
attack no-outcome "outcome" "runs[-1].pop('outcome')"
attack meta-no-class "class" "meta.pop('class')"
attack two-baselines "baseline" "meta['configs'].append({'id': 'aaaaaaaaaaaa', 'env': {}})"
attack config-twice "listed twice" "meta['configs'].append(dict(meta['configs'][1]))"
attack bad-size "busbw" "[r for r in runs if r['sizes']][0]['sizes'][0]['busbw'] = 'fast'"
# 9. the profile root's own file as a class; variables credited to a configuration that never ran
#    them (its id is its variables' hash: in sweep.json, or in a result line)
attack class-index "class" "meta['class'] = 'index.json'; [r.__setitem__('class', 'index.json') for r in runs]"
check "class-index: no index.json folder made" test ! -d class-index-profiles/index.json
attack config-env "is not the id of its env" "meta['configs'][1]['env']['NCCL_PROTO'] = 'LL'"
attack result-env "is not the id of the env it ran with" "[r['env'].__setitem__('NCCL_PROTO', 'LL') for r in runs if r['env']]"
# 10. sweeps judged by other rules (objective sizes, cv_max, repeat) make no profile together: merged,
#     the first one's would decide, and the profile would depend on the order given
rm -rf other-rules && cp -r clean other-rules
python3 - other-rules/sweep.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["objective_min"] = 8
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 2 "sweeps of other objective sizes" -- "$TOPOTUNE" gen --runs clean other-rules --profiles mixed-rules
expect_stderr_has "judged by different rules" "the difference named"
rm -rf other-source && cp -r clean other-source
python3 - other-source/sweep.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["predicted"] = False
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 2 "a sim sweep that says its numbers were measured" -- "$TOPOTUNE" gen --runs clean other-source --profiles mixed-source
expect_stderr_has "predicted: expected true" "the lie named"
expect_no_file mixed-source "no profile labelled measured"
expect_exit 2 "the same sweep alone" -- "$TOPOTUNE" gen --runs other-source --profiles lone-source
expect_no_file lone-source "no profile labelled measured from it"

# 6. one damaged line in the middle is an error naming it; the file is left as it was
cp -r clean damaged
sed -i '2s/.*/{"config_id": "x", "outc/' damaged/results.jsonl
sum=$(md5sum <damaged/results.jsonl)
expect_exit 2 "a damaged middle line: refused" -- "$TOPOTUNE" gen --runs damaged --profiles damaged-profiles
expect_stderr_has "line 2 is damaged" "the damaged line is named"
check "readers never write: results.jsonl unchanged" test "$(md5sum <damaged/results.jsonl)" = "$sum"
check "no profile from a damaged sweep" test ! -e damaged-profiles/index.json
expect_exit 2 "compare refuses it too" -- "$TOPOTUNE" compare damaged

# a torn last line (a sweep killed mid-append) is left out, not cut, and changes nothing
# (the copy keeps the name "clean", in another folder: the profile records its sweep's path)
mkdir torn && cp -r clean torn/clean
printf '{"config_id": "14650fb0739d", "outcome": "o' >>torn/clean/results.jsonl
sum=$(md5sum <torn/clean/results.jsonl)
expect_exit 0 "a torn last line: gen goes on" -- bash -c "cd torn && '$TOPOTUNE' gen --runs clean --profiles ../out-profiles"
mv out-profiles torn-profiles
expect_stderr_has "leaving out a torn last line" "says so"
check "the torn line is not cut by a reader" test "$(md5sum <torn/clean/results.jsonl)" = "$sum"
check "files identical to the clean directory's" bash -c "
    for f in nccl.env nccl.conf tuner.csv launch/torchrun.sh launch/sbatch.sh launch/mpirun.sh \
             launch/pytorchjob.yaml launch/Dockerfile.fragment; do
        diff <(grep -v '^# created' 'clean-profiles/$class/v1/'\$f) <(grep -v '^# created' 'torn-profiles/$class/v1/'\$f) || exit 1
    done"

# no file is read through a symbolic link it did not create; the target stays as it was
cp -r clean linked
echo "precious" >precious.txt
rm linked/results.jsonl && ln -s ../precious.txt linked/results.jsonl
expect_exit 2 "a symlinked results.jsonl is refused" -- "$TOPOTUNE" gen --runs linked --profiles linked-profiles
expect_stderr_has "symbolic link" "says why"
check "the link's target is untouched" test "$(cat precious.txt)" = precious
mkfifo fifo-sweep && mkdir fifo && ln -s ../fifo-sweep fifo/x && mkfifo fifo/sweep.json
expect_exit 2 "a FIFO for sweep.json is refused, not waited on" -- timeout 10 "$TOPOTUNE" gen --runs fifo --profiles fifo-profiles
expect_stderr_has "not a regular file" "says why"

# A node of mixed GPU models is described as such, not as GPU0's kind.
cp -r clean mixed
python3 - mixed/sweep.json <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
meta["topology"]["gpus"][-1]["model"] = "NVIDIA L40S"
json.dump(meta, open(sys.argv[1], "w"))
PY
expect_exit 0 "gen on a mixed node" -- "$TOPOTUNE" gen --runs mixed --profiles mixed-profiles
check "the profile names both models" python3 - mixed-profiles <<'PY'
import glob, json, sys
p = json.load(open(glob.glob(sys.argv[1] + "/*/v1/profile.json")[0]))
assert p["hardware"]["gpu_model"] == "7 x NVIDIA GeForce RTX 4090, 1 x NVIDIA L40S", p["hardware"]["gpu_model"]
PY

# A damaged store: every reader checks each field it uses (profiles diff crashed on a variable
# without a name), prints a stored text without its control characters, and does not follow a
# profile.json planted as a link.
mkdir -p store/c1/v1 store/c1/v2 && ln -s v2 store/c1/latest
echo '{"class": "c1", "version": 1, "variables": [{"name": "NCCL_ALGO", "value": "Ring", "role": "tuning"}]}' >store/c1/v1/profile.json
echo '{"class": "c1", "version": 2, "variables": [{"value": "Tree"}]}' >store/c1/v2/profile.json
expect_exit 2 "profiles diff: a variable without a name" -- "$TOPOTUNE" profiles --profiles store diff c1
expect_stderr_has 'variables[0] has no "name"' "it names the field"
for bad in '[1, 2]' '[{"name": "A", "value": 3}]' '[{"name": "A", "value": "x", "role": 1}]' \
    '[{"name": "1A", "value": "x"}]' '{"A": "x"}'; do
    printf '{"class": "c1", "version": 2, "variables": %s}\n' "$bad" >store/c1/v2/profile.json
    expect_exit 2 "profiles show: variables $bad" -- "$TOPOTUNE" profiles --profiles store show c1
done
# the sim backend's profile said measured: shown without its PREDICTED note (and check, expect
# and compare read it as measured)
echo '{"class": "c1", "version": 2, "backend": "sim", "predicted": false, "variables": []}' >store/c1/v2/profile.json
expect_exit 2 "profiles show: a sim profile said measured" -- "$TOPOTUNE" profiles --profiles store show c1
expect_stderr_has '"backend" is sim but "predicted" is not true' "it says why"
echo '{"class": "c1", "version": "v9"}' >store/c1/v2/profile.json
expect_exit 2 "profiles show: a version that is no number" -- "$TOPOTUNE" profiles --profiles store show c1
python3 - store/c1/v2/profile.json <<'PY'
import json, sys
json.dump({"class": "c1", "version": 2, "summary": "s\u001b]0;pwned\u0007\u001b[2J",
           "created": "x\r\nFAKE LINE", "variables": [
               {"name": "NCCL_ALGO", "value": "Tree\u001b[31m", "role": "tuning"}]},
          open(sys.argv[1], "w"))
PY
expect_exit 0 "profiles show: control characters in its texts" -- "$TOPOTUNE" profiles --profiles store show c1
check "shown without them, no forged line" python3 - "$TEST_TMP/out" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
assert not any(b in data for b in (b"\x1b", b"\x07", b"\r")), data
assert not any(l.startswith(b"FAKE") for l in data.splitlines()), data
PY
echo '{"class": "c1", "version": 3}' >outside.json
mkdir -p store/c1/v3 && ln -s ../../../outside.json store/c1/v3/profile.json
expect_exit 2 "profiles show: a profile.json planted as a link" -- "$TOPOTUNE" profiles --profiles store show c1 v3
# a version folder planted as a link to another store: shown under a version it is not
mkdir -p elsewhere/v9 && cp store/c1/v1/profile.json elsewhere/v9/profile.json
ln -s ../../elsewhere/v9 store/c1/v4
expect_exit 2 "profiles show: a version folder planted as a link" -- "$TOPOTUNE" profiles --profiles store show c1 v4
expect_stderr_has "store/c1/v4' is not a folder gen wrote" "it names the folder"
ln -sfn v4 store/c1/latest
expect_exit 2 "profiles show: latest naming it" -- "$TOPOTUNE" profiles --profiles store show c1
# ... nor by a reader given CLASS/latest (check, doctor and env read it so): it followed the link
expect_exit 2 "doctor --profile CLASS/latest naming it" -- "$TOPOTUNE" doctor --profile store/c1/latest
expect_stderr_has "store/c1/v4' is not a folder gen wrote" "the folder named"
expect_exit 2 "compare CLASS/latest naming it" -- "$TOPOTUNE" compare store/c1/latest
expect_stderr_has "store/c1/v4' is not a folder gen wrote" "the folder named"
expect_stderr_has "store/c1/v4' is not a folder gen wrote" "it names the folder"
ln -sfn v2 store/c1/latest
# a damaged store of 20,000 table rows a side: diff formatted every row again for each row of the
# other side (4,000 took 35 s); one pass each, sorted. The bound is far above that pass's time.
python3 - <<'PY'
import json, os
for v, algo in ((1, "ring"), (2, "tree")):
    os.makedirs("rows/c2/v%d" % v, exist_ok=True)
    rows = [{"collective": "allreduce", "min_bytes": i, "max_bytes": i + 1, "nodes": 1, "ranks": 8,
             "algorithm": algo if i == 7 else "ring", "protocol": "simple"} for i in range(20000)]
    json.dump({"class": "c2", "version": v, "variables": [], "tuner": rows},
              open("rows/c2/v%d/profile.json" % v, "w"))
os.symlink("v2", "rows/c2/latest")
PY
python3 -c 'import json; json.dump({"class": "c3", "version": 1, "variables": [{"name": "V%d" % i, "value": "1"} for i in range(1025)]}, open("v3.json", "w"))'
mkdir -p rows/c3/v1 && mv v3.json rows/c3/v1/profile.json && ln -s v1 rows/c3/latest
expect_exit 2 "profiles show: 1,025 variables" -- "$TOPOTUNE" profiles --profiles rows show c3
expect_stderr_has '"variables" holds more than 1024 entries' "said"
expect_exit 0 "profiles diff: 20,000 rows a side" -- timeout 60 "$TOPOTUNE" profiles --profiles rows diff c2
check "the one row changed, each side" sh -c "grep -qx '  - row allreduce 7..8 B, 1 node(s) x 8 ranks: ring/simple' '$TEST_TMP/out' &&
    grep -qx '  + row allreduce 7..8 B, 1 node(s) x 8 ranks: tree/simple' '$TEST_TMP/out' &&
    test \$(grep -c ' row allreduce' '$TEST_TMP/out') = 2"
# words past what a subcommand takes were dropped: v2 went unshown
expect_exit 2 "profiles show CLASS v1 v2" -- "$TOPOTUNE" profiles --profiles store show c1 v1 v2
expect_exit 2 "profiles list extra" -- "$TOPOTUNE" profiles --profiles store list extra
expect_exit 2 "profiles show without a class" -- "$TOPOTUNE" profiles --profiles store show
expect_stderr_has "needs a class: 'topotune profiles --profiles store list'" "says how to find one"
expect_exit 2 "profiles show of a class not stored" -- "$TOPOTUNE" profiles --profiles store show nosuch
expect_stderr_has "no class 'nosuch' in 'store'" "names the class and the root"
# list trusted index.json: [] listed nothing beside a stored class (exit 0), and a class id of
# words forged a line of its own. A damaged index is said, and gen writes it again.
expect_exit 0 "profiles list of a store gen wrote" -- "$TOPOTUNE" profiles --profiles clean-profiles list
cp clean-profiles/index.json index.keep
for bad in '[]' '{"schema": "nope", "classes": {}}' \
    '{"schema": "topotune/profiles-index/1", "classes": {"../../etc  v7 (3 versions)": {"latest": 1, "versions": []}}}' \
    '{"schema": "topotune/profiles-index/1", "classes": {"c1": {"latest": "x", "versions": 7}}}' \
    '{"schema": "topotune/profiles-index/1", "classes": {"c1": {"latest": 1, "versions": [{"version": -1}]}}}'; do
    printf '%s\n' "$bad" >clean-profiles/index.json
    expect_exit 2 "profiles list: index $bad" -- "$TOPOTUNE" profiles --profiles clean-profiles list
    expect_stderr_has "clean-profiles/index.json' is damaged" "said, with what fixes it"
    check "no line listed" test ! -s "$TEST_TMP/out"
done
cp index.keep clean-profiles/index.json
# a class folder copied by hand under a name gen never writes is no class: gen's index left it
# out, or every list refused the index gen wrote
cls_dir=$(find clean-profiles -mindepth 1 -maxdepth 1 -type d | head -1)
cp -r "$cls_dir" "$cls_dir (old)"
expect_exit 0 "gen beside a copied class folder" -- "$TOPOTUNE" gen --runs clean --profiles clean-profiles
expect_exit 0 "profiles list then" -- "$TOPOTUNE" profiles --profiles clean-profiles list
check "the copy not listed" test -z "$(grep '(old)' "$TEST_TMP/out")"
# a version whose summary is no text (or that has none) is indexed with null: it made every list
# refuse the index, and one without a summary dropped out of it
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["summary"] = {"text": "x"}; del p["created"]
json.dump(p, open(sys.argv[1], "w"))' "$cls_dir/v1/profile.json"
expect_exit 0 "gen over a version of an odd summary" -- "$TOPOTUNE" gen --runs clean --profiles clean-profiles
expect_exit 0 "profiles list then" -- "$TOPOTUNE" profiles --profiles clean-profiles list
check "v1 indexed, its summary null" python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["classes"][sys.argv[2]]
v = [x for x in c["versions"] if x["version"] == 1]
assert v and v[0]["summary"] is None and v[0]["created"] is None, c' clean-profiles/index.json "${cls_dir##*/}"
finish
