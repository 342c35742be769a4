#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `topotune survey` keeps in --out between runs. A new survey removes the previous one's
# files first (a link among them removed, not followed), so one that fails leaves nothing that
# looks current. --resume replays DIR/launches.jsonl only when it was measured with this survey's
# settings (backend, size, seed, pairs, launcher, ppn, iters...) and every line holds fields of
# the right type, range and length; otherwise it is refused naming the file and line, exit 2.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
mkdir bin
ln -s "$TOPOTUNE_SRC/tests/cli/fake-mpirun.py" bin/mpirun
export PATH="$TEST_TMP/bin:$PATH"
printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 8}], "faults": [{"kind": "slow-node", "hosts": ["node0003"], "factor": 0.5}]}\n' >c.json

# A survey, then a new one into the same --out that fails (every launch refused): none of the
# first survey's files is left to be taken for the second's.
expect_exit 1 "a first survey" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out o
echo "keep me" >victim
ln -sf ../victim o/report.html
expect_exit 2 "a new survey that fails" -- env FAKE_BENCH=usage "$TOPOTUNE" survey --backend mpi \
    --hosts h1,h2 --iters 2 --out o
expect_stderr_has "refused the launch's options" "said why"
for f in survey.json healthy.hostfile excluded.txt report.txt report.md report.html launches.jsonl; do
    expect_no_file "o/$f" "the first survey's $f removed"
done
check "the link removed, not followed" test "$(cat victim)" = "keep me"
# ... nor what its launches and its hand-over to Slurm and Kubernetes left: its launch logs,
# Slurm's node states as read, scontrol's and kubectl's output
expect_exit 1 "a survey that drains" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out d --drain
check "it read Slurm's node states" test -e d/slurm-nodes.log
mkdir -p d/logs && echo x >d/logs/launch-1-1.jsonl && echo x >d/scontrol.log.1 && echo x >d/kubectl.log.1
expect_exit 1 "a new survey into it" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out d
for f in slurm-nodes.txt slurm-nodes.log scontrol.log.1 kubectl.log.1 logs/launch-1-1.jsonl; do
    expect_no_file "d/$f" "the first survey's $f removed"
done

# --resume with other settings: refused, the setting named, nothing measured or removed.
expect_exit 1 "a sim survey" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out s
cp s/launches.jsonl s.jsonl
resume_refused() { # resume_refused WHAT EXPECTED-TEXT OPTIONS...
    local what=$1 text=$2
    shift 2
    expect_exit 2 "resume with $what refused" -- "$TOPOTUNE" survey --resume "$@"
    expect_stderr_has "$text" "$what: the setting named"
}
resume_refused "another seed" "'s/launches.jsonl': line 1: measured with --seed 1, this survey has 2" \
    --backend sim --cluster c.json --out s --seed 2
# each value as the operator typed it (it read 0.14999999999999999, "matchings" and null)
resume_refused "--pairs all" "measured with --pairs matchings, this survey has all" --backend sim \
    --cluster c.json --out s --pairs all
resume_refused "another tolerance" "measured with --tolerance 0.15, this survey has 0.3" \
    --backend sim --cluster c.json --out s --tolerance 0.3
resume_refused "a --groups-per-launch" "measured with --groups-per-launch (its default), this survey has 2" \
    --backend sim --cluster c.json --out s --groups-per-launch 2
check "the record untouched" cmp -s s.jsonl s/launches.jsonl
check "the survey's files kept" test -s s/survey.json

# Real launches (the fake mpirun): --iters, --ppn and the launcher are recorded and checked.
expect_exit 0 "an mpi survey" -- env FAKE_LOG="$TEST_TMP/log" "$TOPOTUNE" survey --backend mpi \
    --hosts h1,h2 --iters 2 --out r
launches=$(grep -c -- --split log)
resume_refused "another --iters" "line 1: measured with --iters 2, this survey has 3" \
    --backend mpi --hosts h1,h2 --iters 3 --out r
resume_refused "another --ppn" "measured with --ppn 2, this survey has 1" --backend mpi \
    --hosts h1,h2 --iters 2 --ppn 1 --out r
expect_exit 0 "resume with the same options" -- env FAKE_LOG="$TEST_TMP/log" "$TOPOTUNE" survey \
    --backend mpi --hosts h1,h2 --iters 2 --out r --resume
check "nothing launched again" test "$(grep -c -- --split log)" = "$launches"

# Every field of every line checked: each damage refused with the file and line, exit 2.
damage() { # damage WHAT PYTHON-EXPRESSION-ON-l EXPECTED-TEXT
    python3 - s.jsonl s/launches.jsonl "$2" <<'PY'
import json, sys
ls = [json.loads(x) for x in open(sys.argv[1])]
l = ls[1]
exec(sys.argv[3])
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in ls))
PY
    expect_exit 2 "$1 refused" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out s --resume
    expect_stderr_has "'s/launches.jsonl': line 2: $3" "$1: the line and field named"
}
damage "busbw as strings" 'l["busbw"] = [str(x) for x in l["busbw"]]' '"busbw"[0]'
damage "a short busbw array" 'l["busbw"] = []' '"busbw": 4 numbers expected'
damage "a negative busbw" 'l["busbw"][0] = -5' '"busbw"[0]'
damage "ok as a number" 'l["ok"] = 1' '"ok": true or false'
damage "groups as a string" 'l["groups"] = "node0001"' '"groups"'
damage "a group of numbers" 'l["groups"] = [[1]]' '"groups"[0][0]: a host name'
damage "size as a string" 'l["size"] = "32M"' '"size"'
damage "wall_s as a string" 'l["wall_s"] = "10"' '"wall_s"'
damage "longer out of range" 'l["longer"] = 64' '"longer": a whole number from 1 to 8'
damage "a stage that is no name" 'l["stage"] = "\u001b[2J"' '"stage"'
damage "no settings" 'del l["settings"]' 'no "settings"'
damage "an unknown setting" 'l["settings"]["mode"] = 1' '"settings": one this topotune does not know'
damage "a line that is no object" 'ls[1] = [1, 2]' 'not a JSON object'

# Whole numbers where the survey wrote reals (jq writes 244.0 as 244) are the same numbers: the
# replay once read them as 0, a failure, and named every node failed.
python3 - s.jsonl s/launches.jsonl <<'PY'
import json, sys
ls = [json.loads(x) for x in open(sys.argv[1])]
whole = lambda x: int(round(x)) if isinstance(x, float) else x
for l in ls:
    if isinstance(l.get("busbw"), list):
        l["busbw"] = [whole(x) for x in l["busbw"]]
    l["wall_s"] = whole(l.get("wall_s"))
open(sys.argv[2], "w").write("".join(json.dumps(x) + "\n" for x in ls))
PY
expect_exit 1 "resume of whole numbers" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out s \
    --resume
check "whole numbers: the slow node named, nothing else" python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))["verdicts"]
assert [(x["kind"], x["hosts"]) for x in v] == [("node-slow", ["node0003"])], v' s/survey.json
finish
