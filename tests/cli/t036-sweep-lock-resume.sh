#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One sweep per directory: a second sweep on a busy --out is refused naming the holder's pid
# (exit 3), and --resume refuses any planning parameter that changed, naming it and both values.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fake=$TEST_TMP/fake-bench
fake_bench "$fake" space
export TOPOTUNE_BENCH_PROGRAM=$fake FAKE_PIDS=$TEST_TMP/pids
cat >"$TEST_TMP/space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["slow"]}, "repeat": 1, "timeout_s": 10}
JSON

# A sweep in progress (its second run takes 2 s): a --resume on its directory is refused.
"$TOPOTUNE" -q sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/busy" 2>"$TEST_TMP/first.err" &
first=$!
for _ in $(seq 50); do [ -s "$TEST_TMP/busy/sweep.json" ] && break; sleep 0.1; done
expect_exit 3 "a second sweep on a busy directory" -- \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/busy" --resume
expect_stderr_has "in use by another sweep (pid $first)" "the holder is named"
wait "$first"
check "the first sweep ends well (exit $?)" test "$?" -eq 0
check "every run once" test "$(wc -l <"$TEST_TMP/busy/results.jsonl")" -eq 2
expect_exit 0 "the directory is free again" -- \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/busy" --resume
check "still every run once" test "$(wc -l <"$TEST_TMP/busy/results.jsonl")" -eq 2

# --resume with another planning parameter: refused before anything runs, naming it.
cat >"$TEST_TMP/quick.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": ["ok"]}, "repeat": 1, "timeout_s": 10}
JSON
expect_exit 0 "a sweep to resume" -- "$TOPOTUNE" -q sweep --space "$TEST_TMP/quick.json" \
    --out "$TEST_TMP/plan" --repeat 1
check "sweep.json records the plan" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
want = {"strategy": "grid", "launcher": "direct", "hosts": None, "np": 1, "repeat": 1,
        "timeout_s": 10, "seed": 1, "sizes": {"min": 8, "max": 8, "factor": 2}, "iters": 20}
assert all(m[k] == v for k, v in want.items()), {k: m.get(k) for k in want}' \
    "$TEST_TMP/plan/sweep.json"
resume() { "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" --out "$TEST_TMP/plan" --resume "$@"; }
expect_exit 2 "--repeat changed" -- resume --repeat 2
expect_stderr_has "it was swept with repeat 1, this sweep asks for 2" "--repeat named"
expect_exit 2 "--strategy changed" -- resume --strategy halving --repeat 1
expect_stderr_has "strategy grid, this sweep asks for halving" "--strategy named"
expect_exit 2 "--timeout changed" -- resume --timeout 3
expect_stderr_has "timeout_s 10" "--timeout named"
expect_exit 2 "--seed changed" -- resume --seed 7
expect_stderr_has "seed 1, this sweep asks for 7" "--seed named"
if command -v mpirun >/dev/null; then
    expect_exit 2 "--launcher changed" -- resume --launcher mpirun
    expect_stderr_has "launcher direct, this sweep asks for mpirun" "--launcher named"
fi
check "nothing ran again" test "$(wc -l <"$TEST_TMP/plan/results.jsonl")" -eq 2
expect_exit 0 "the same plan resumes" -- resume --timeout 10.0
# Lines a resume would take for done that gen ignores or refuses stop it (exit 2), each named:
# a line flipped to "final": false (gen then found no defaults and chose otherwise), one of
# another class, one twice, a workload's line in a sweep of none. And a directory with
# results.jsonl but no sweep.json is no new sweep (its runs passed for the new one's).
for edit in final class twice collective; do
    rm -rf "$TEST_TMP/edited"
    cp -r "$TEST_TMP/plan" "$TEST_TMP/edited"
    rm -f "$TEST_TMP/edited/.lock"
    python3 - "$TEST_TMP/edited/results.jsonl" "$edit" <<'PY'
import json, sys
path, edit = sys.argv[1:]
lines = [json.loads(l) for l in open(path)]
if edit == "final":
    lines[0]["final"] = False
elif edit == "class":
    lines[0]["class"] = "another-class-12345678"
elif edit == "twice":
    lines.append(lines[0])
else:
    lines[0]["collective"] = "all_reduce"
open(path, "w").write("".join(json.dumps(l) + "\n" for l in lines))
PY
    expect_exit 2 "resume of a results.jsonl edited: $edit" -- "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" \
        --out "$TEST_TMP/edited" --resume
    case $edit in
    final) expect_stderr_has '"final": false, and this sweep plans it final' "$edit: said" ;;
    class) expect_stderr_has "line 1: class 'another-class-12345678' is not this sweep's" "$edit: said" ;;
    twice) expect_stderr_has "line 3: the same run as an earlier line" "$edit: said" ;;
    collective) expect_stderr_has "line 1: a workload's line (a collective), and this sweep runs no workload" "$edit: said" ;;
    esac
done
rm "$TEST_TMP/edited/sweep.json"
expect_exit 2 "results.jsonl without sweep.json" -- "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" --out "$TEST_TMP/edited"
expect_stderr_has "holds results.jsonl but no sweep.json" "said"
# A link or FIFO there is refused before sweep.json is written: it was refused after, and the
# folder then read as a sweep's (a second run, the link removed, wanted --resume).
for kind in link fifo; do
    rm -rf "$TEST_TMP/planted" && mkdir "$TEST_TMP/planted"
    if [ $kind = link ]; then ln -s /etc/hostname "$TEST_TMP/planted/results.jsonl"; else mkfifo "$TEST_TMP/planted/results.jsonl"; fi
    expect_exit 2 "a $kind for results.jsonl" -- timeout 20 "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" --out "$TEST_TMP/planted"
    check "$kind: no sweep.json written" test ! -e "$TEST_TMP/planted/sweep.json"
    rm "$TEST_TMP/planted/results.jsonl"
    expect_exit 0 "$kind removed: the sweep runs" -- "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" --out "$TEST_TMP/planted"
done
# A directory planted where a run's events go (logs/NAME.jsonl): the run is not recorded, the
# folder named (it ran, read no events, and was recorded an error at init, never run again).
rm -rf "$TEST_TMP/edited"
cp -r "$TEST_TMP/plan" "$TEST_TMP/edited"
second=$(python3 -c 'import json, sys; r = [json.loads(l) for l in open(sys.argv[1])][1]; print("%s-r%d" % (r["config_id"], r["rep"]))' "$TEST_TMP/edited/results.jsonl")
head -n 1 "$TEST_TMP/plan/results.jsonl" >"$TEST_TMP/edited/results.jsonl"
rm -f "$TEST_TMP/edited/logs/$second".*
mkdir "$TEST_TMP/edited/logs/$second.jsonl"
expect_exit 1 "a directory planted at a run's events" -- "$TOPOTUNE" sweep --space "$TEST_TMP/quick.json" --out "$TEST_TMP/edited" --resume
expect_stderr_has "cannot write its events '$TEST_TMP/edited/logs/$second.jsonl': Is a directory" "the path named, not the configuration"
check "the run not recorded" test "$(wc -l <"$TEST_TMP/edited/results.jsonl")" -eq 1
# A sweep.json whose topology does not load: gen refuses it (it said so, exit 0, and skipped the
# check of configurations that break others, which needs it).
rm -rf "$TEST_TMP/edited"
cp -r "$TEST_TMP/plan" "$TEST_TMP/edited"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["topology"]["gpus"] = "x"; json.dump(d, open(sys.argv[1], "w"))' \
    "$TEST_TMP/edited/sweep.json"
expect_exit 2 "gen of a sweep.json whose topology does not load" -- "$TOPOTUNE" gen --runs "$TEST_TMP/edited" --profiles "$TEST_TMP/prof"
expect_stderr_has "topology: expected the topology the sweep measured" "said"
expect_no_file "$TEST_TMP/prof" "no profile written"
# An empty --out names no directory: refused before anything is written (it made /logs).
expect_exit 2 "an empty --out" -- "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out ''
expect_stderr_has "an empty directory name" "said why"
# A name too long for the launch lines that name files under it: every run was cut to
# "error, results-missing", blaming a filesystem the hosts do not share.
long=$TEST_TMP/$(printf 'd%.0s' $(seq 950))
expect_exit 2 "--out of 950 bytes and more" -- "$TOPOTUNE" sweep --space "$TOPOTUNE_SRC/profiles/spaces/mpi-default.json" --out "$long"
expect_stderr_has "more than 900: give a shorter path" "said why"
expect_no_file "$long" "nothing made"
finish
