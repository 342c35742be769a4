#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey` under a launcher that does not keep --hosts' order (tests/cli/fake-mpirun.py
# plays mpirun, the nodes and the benchmark): each map report is the node's it names, so the slow
# node is named, and healthy.hostfile lists the others, whatever order the reports come back in;
# names with a domain match by their first label. --allocation counts the nodes it mapped. A
# signal during the per-host map ends it, host by host. Names the nodes give (markup, terminal
# escapes, a newline) reach no file or terminal as they are: cleaned, and escaped per format. A long host list with a host twice is
# refused at once.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
mkdir bin
ln -s "$TOPOTUNE_SRC/tests/cli/fake-mpirun.py" bin/mpirun
export PATH="$TEST_TMP/bin:$PATH"
verdicts() {
    python3 -c 'import json, sys
print(";".join(sorted(" ".join(v["hosts"]) + " " + v["kind"] for v in json.load(open(sys.argv[1]))["verdicts"])))' "$1/survey.json"
}

# The launcher places h4 first: the reports come back h4, h3, h2, h1.
expect_exit 1 "reports in reverse order: the slow node named" -- env FAKE_SLOW=h2 FAKE_ORDER=reverse \
    "$TOPOTUNE" survey --backend mpi --hosts h1,h2,h3,h4 --iters 2 --out rev
check "h2 named, no other ($(verdicts rev))" test "$(verdicts rev)" = "h2 node-slow"
check "healthy.hostfile: the three others" test "$(tr '\n' ' ' <rev/healthy.hostfile)" = "h1 h3 h4 "
check "each node's map is its own" python3 - rev/survey.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
alone = {n["host"]: n["alone_busbw"] for n in s["nodes"]}
assert alone == {"h1": 10.0, "h2": 5.0, "h3": 10.0, "h4": 10.0}, alone
PY

# A node whose every launch reports 0 GB/s (the benchmark ended ok but moved nothing): a failure,
# not a healthy node nor a value dropped from its class's level; the launches keep what it said.
expect_exit 1 "a node that reports 0 GB/s" -- env FAKE_ZERO=h3 \
    "$TOPOTUNE" survey --backend mpi --hosts h1,h2,h3,h4,h5,h6 --iters 2 --out zero
check "h3 named as failing, no other ($(verdicts zero))" test "$(verdicts zero)" = "h3 node-fails"
check "h3 not in healthy.hostfile" test "$(tr '\n' ' ' <zero/healthy.hostfile)" = "h1 h2 h4 h5 h6 "
check "launches.jsonl keeps the 0 the benchmark reported" python3 -c 'import json, sys
first = json.loads(open(sys.argv[1]).readline())
assert first["stage"] == "alone" and first["busbw"][2] == 0.0 and first["ok"], first' zero/launches.jsonl

# The nodes call themselves n1.cluster.local...: matched by their first label, in any order.
names=n1=n1.cluster.local,n2=n2.cluster.local,n3=n3.cluster.local,n4=n4.cluster.local
expect_exit 1 "names with a domain" -- env FAKE_NAMES="$names" FAKE_SLOW=n3.cluster.local \
    "$TOPOTUNE" survey --backend mpi --hosts n1,n2,n3,n4 --iters 2 --out dom
check "n3 named ($(verdicts dom))" test "$(verdicts dom)" = "n3 node-slow"
check "no warning about the order: every name matched" test "$(grep -c "launcher's order" "$TEST_TMP/err")" = 0

# --allocation: the nodes are those the map found, and the count says so.
expect_exit 0 "--allocation" -- env SLURM_JOB_ID=1 FAKE_ALLOC=a1,a2,a3 "$TOPOTUNE" survey \
    --backend mpi --allocation --iters 2 --out alloc
expect_stderr_has "3 node(s) answered" "the allocation's nodes counted"
check "never '0 node(s)'" test "$(grep -c "surveying 0 node" "$TEST_TMP/err")" = 0
check "the three nodes surveyed" python3 - alloc/survey.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert sorted(n["host"] for n in s["nodes"]) == ["a1", "a2", "a3"], s["nodes"]
assert all(n["alone_busbw"] == 10.0 for n in s["nodes"]), s["nodes"]
PY

# An allocation whose nodes give names that are no host names: each a node-unreachable verdict,
# and its name in no file as it came (a forged line in excluded.txt, markup in report.md, an
# escape in report.txt, a tag in report.html, on the terminal).
evil="a1,a2,$(printf 'x\033[2Jy'),*b*|<i>,$(printf 'e\nFORGED')"
expect_exit 1 "names that are no host names" -- env SLURM_JOB_ID=1 FAKE_ALLOC="$evil" \
    "$TOPOTUNE" survey --backend mpi --allocation --iters 2 --out evil
check "no escape on the terminal or in a file" test "$(cat "$TEST_TMP/err" evil/* | grep -c $'\e')" = 0
check "no forged line" test "$(grep -c '^FORGED' evil/excluded.txt evil/report.txt evil/report.md | grep -vc ':0$')" = 0
check "excluded.txt: three lines, one per node" test "$(wc -l <evil/excluded.txt)" = 3
check "Markdown: the name escaped" grep -qF '\*b\*\|\<i\>' evil/report.md
check "HTML: the name escaped" grep -qF '*b*|&lt;i&gt;' evil/report.html
check "HTML: no tag from a name" test "$(grep -c '<i>' evil/report.html)" = 0
expect_exit 2 "--hosts: a name that is no host name refused" -- "$TOPOTUNE" survey --backend mpi \
    --hosts "$(printf 'a\033[31m,b')" --out esc
expect_stderr_has "host 1 is not a host name" "said which"
# Host names ignore case, and a DNS name has at most 255 characters: survey.json's schema says so.
expect_exit 2 "--hosts h1,H1: one host twice" -- "$TOPOTUNE" survey --backend mpi --hosts h1,H1,h3 --out case
expect_stderr_has "hosts 'h1' and 'H1' are one host" "said so"
expect_exit 2 "--hosts: a name of 256 characters" -- "$TOPOTUNE" survey --backend mpi \
    --hosts "h1,$(printf 'a%.0s' $(seq 256)),h3" --out long
expect_stderr_has "host 2 is not a host name" "said which"
# Two hosts that answer the map with one name (one machine under two names, or clones): said.
expect_exit 0 "h1 and h1.cluster.local, one machine" -- env FAKE_NAMES=h1.cluster.local=h1 \
    "$TOPOTUNE" survey --backend mpi --hosts h1,h1.cluster.local,h3,h4 --iters 2 --out twice
expect_stderr_has "hosts 'h1' and 'h1.cluster.local' both answer the map as 'h1'" "the two named"

# The gather of every host fails, so each is mapped alone once both halves fail (1 s each):
# SIGTERM after the first ends the map there, not after the 20 hosts (every later gather
# started and killed at once).
hosts=$(seq -f 'h%g' 1 20 | paste -sd,)
FAKE_MAP=fail "$TOPOTUNE" survey --backend mpi --hosts "$hosts" --out term 2>term.err &
pid=$!
for _ in $(seq 600); do
    grep -q "mapping h1 alone" term.err && break
    sleep 0.1
done
kill -TERM "$pid"
wait "$pid"
check "interrupted: exit 143" test $? -eq 143
check "the map stopped at the signal ($(grep -c 'mapping h[0-9]* alone' term.err) hosts mapped)" \
    test "$(grep -c 'mapping h[0-9]* alone' term.err)" -le 2

# A host down among 16 fails the whole map (as Open MPI's launch does): the map splits the hosts
# in halves down to that one, in at most 9 launches in all (each alone: 17), names it, and
# surveys the others.
FAKE_DEAD=h7 FAKE_LOG="$TEST_TMP/dead.log" "$TOPOTUNE" survey --backend mpi \
    --hosts "$(seq -f 'h%g' 1 16 | paste -sd,)" --iters 2 --out dead >/dev/null 2>dead.err
check "h7 named unreachable, no other ($(verdicts dead))" test "$(verdicts dead)" = "h7 node-unreachable"
check "the map took $(grep -c "topotune-node topo" dead.log) launches, at most 9" test "$(grep -c "topotune-node topo" dead.log)" -le 9
check "the others surveyed" test "$(wc -l <dead/healthy.hostfile)" = 15
# Every host failing (no ssh at all): after both halves fail, each host alone: 1 + 2 + 6
# launches for 6 hosts (halving on took 2n - 1, 11).
FAKE_MAP=fail FAKE_LOG="$TEST_TMP/allfail.log" "$TOPOTUNE" survey --backend mpi \
    --hosts h1,h2,h3,h4,h5,h6 --iters 2 --out allfail >/dev/null 2>allfail.err
check "every host failing: $(grep -c "topotune-node topo" allfail.log) launches, 9" test "$(grep -c "topotune-node topo" allfail.log)" = 9

# 100,000 hosts, the first listed again last: refused at once (it was quadratic: minutes).
seq -f 'host%g' 1 100000 >many.txt
echo host1 >>many.txt
expect_exit 2 "a host twice among 100,000" -- timeout 60 "$TOPOTUNE" survey --backend mpi \
    --hostfile many.txt --out many
expect_stderr_has "host 'host1' is listed twice" "the host named"

# nccl, a rank per GPU: mpirun's ppr is one count for every node of a launch, so a node that lost
# a GPU (7 of 8) in the others' launches put them all on 7 GPUs. Each class launches on its own.
expect_exit 0 "nccl: nodes of 8 GPUs and one of 7" -- env FAKE_GPUS=h1=8,h2=8,h3=8,h4=8,h5=7 \
    FAKE_LOG="$TEST_TMP/ppn.log" "$TOPOTUNE" survey --backend nccl --hosts h1,h2,h3,h4,h5 --iters 2 --out ppn
check "a rank per GPU of each node in every launch" python3 - "$TEST_TMP/ppn.log" <<'PY'
import sys
launches = 0
for line in open(sys.argv[1]):
    a = line.split()
    if not any(w.endswith("topotune-bench") for w in a):
        continue
    hosts, ppr = a[a.index("--host") + 1].split(","), a[a.index("--map-by") + 1]
    want = "ppr:7:node" if "h5" in hosts else "ppr:8:node"
    assert ppr == want and ("h5" not in hosts or hosts == ["h5"]), line
    launches += 1
assert launches >= 4, launches
PY

# nccl, a rank per GPU: each class predicted from its map (the model's band for that hardware).
# Every node at a tenth of it: the class is below expectation, alone and in pairs, for what they
# share (no node is named, or drained, on its own for it); at the prediction, nothing is named.
"$TOPOTUNE" topo --input "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json" --json >h100.json
expect_exit 1 "nccl: a whole class far below its expectation" -- env FAKE_TOPOLOGY=h100.json \
    FAKE_BW=1 "$TOPOTUNE" survey --backend nccl --hosts h1,h2,h3,h4 --iters 2 --out below
check "class-below-expected, no node on its own ($(verdicts below))" test "$(verdicts below)" = \
    "h1 h2 h3 h4 class-below-expected;h1 h2 h3 h4 class-below-expected"
expected=$(python3 -c 'import json, sys
c, = json.load(open(sys.argv[1]))["classes"].values()
assert c["alone_expected_low"] < c["alone_expected"] < c["alone_expected_high"], c
print(c["alone_expected"])' below/survey.json)
check "the expectation is the model's for the spec (${expected} GB/s)" test -n "$expected"
expect_exit 0 "nccl: the class at its expectation" -- env FAKE_TOPOLOGY=h100.json \
    FAKE_BW="$expected" "$TOPOTUNE" survey --backend nccl --hosts h1,h2,h3,h4 --iters 2 --out at
check "nothing named ($(verdicts at))" test -z "$(verdicts at)"
# The whole class at once 15% under its prediction, inside the band (0.818 of it above 4 MiB)
# though past a 5% tolerance: the model's error, not a fault.
whole=$(python3 -c 'import json, sys
w, = json.load(open(sys.argv[1]))["whole"]
print(w["predicted_busbw"] * 0.85)' at/survey.json)
expect_exit 0 "nccl: the whole class inside its band" -- env FAKE_TOPOLOGY=h100.json \
    FAKE_BW="$expected" FAKE_WHOLE_BW="$whole" "$TOPOTUNE" survey --backend nccl --hosts h1,h2,h3,h4 \
    --iters 2 --tolerance 0.05 --out wholeband
check "the whole run not called below its prediction" test "$(grep -c 'below the prediction' wholeband/report.txt)" = 0
# Measured numbers judged against a prediction keep the model's error as their margin: a class
# between the band's low edge and the prediction is not called slow.
low=$(python3 -c 'import json, sys
c, = json.load(open(sys.argv[1]))["classes"].values()
print((c["alone_expected_low"] + c["alone_expected"]) / 2)' below/survey.json)
expect_exit 0 "nccl: the class inside its band" -- env FAKE_TOPOLOGY=h100.json \
    FAKE_BW="$low" "$TOPOTUNE" survey --backend nccl --hosts h1,h2,h3,h4 --iters 2 --out inband
check "nothing named inside the band ($(verdicts inband))" test -z "$(verdicts inband)"
# Every pair below the two-node band, each a little off the others (up to 3%): the class is named
# in pairs, and no pair is a path: the noise margin still applies below the band's edge.
pair=$(python3 -c 'import json, sys
c, = json.load(open(sys.argv[1]))["classes"].values()
print(c["pair_expected"] * 0.6)' at/survey.json)
expect_exit 1 "nccl: every pair below its band" -- env FAKE_TOPOLOGY=h100.json FAKE_BW="$expected" \
    FAKE_PAIR_BW="$pair" FAKE_JITTER=0.03 "$TOPOTUNE" survey --backend nccl --hosts h1,h2,h3,h4,h5,h6 \
    --iters 2 --pairs all --out pairsbelow
check "only the class in pairs ($(verdicts pairsbelow))" test "$(verdicts pairsbelow)" = \
    "h1 h2 h3 h4 h5 h6 class-below-expected"

# A map is untrusted: one whose class id is not its hardware's sets no expectation for the class.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["class"]["id"] = "a100-liar-00000000"
json.dump(d, open("liar.json", "w"))' h100.json
expect_exit 0 "nccl: a map that lies about its class" -- env FAKE_TOPOLOGY=liar.json FAKE_BW=1 \
    "$TOPOTUNE" survey --backend nccl --hosts h1,h2 --iters 2 --out liar
expect_stderr_has "no model prediction: the map of h1 describes class h100-80gb" "the lie said"
check "no expectation for the class" python3 -c 'import json, sys
c, = json.load(open(sys.argv[1]))["classes"].values()
assert "alone_expected" not in c, c' liar/survey.json

# The mpi backend's CPU ranks are not what the model predicts: no expectation.
expect_exit 0 "mpi: no expectation" -- env FAKE_TOPOLOGY=h100.json FAKE_BW=1 "$TOPOTUNE" survey \
    --backend mpi --hosts h1,h2,h3,h4 --iters 2 --out mpi
check "mpi: no class expectation" python3 -c 'import json, sys
c, = json.load(open(sys.argv[1]))["classes"].values()
assert "alone_expected" not in c, c' mpi/survey.json

# A hostfile as editors and schedulers write them: CRLF line ends, indented names, mpirun's slots,
# comments, a last line of blanks without a newline.
printf 'h1 slots=8\r\n  h2\r\n\t# a comment\r\n\th3 # the third\n   ' >crlf.txt
expect_exit 0 "a hostfile with CRLF, indents and slots" -- "$TOPOTUNE" survey --backend mpi \
    --hostfile crlf.txt --iters 2 --out crlf
check "its three hosts" python3 -c 'import json, sys
assert [n["host"] for n in json.load(open(sys.argv[1]))["nodes"]] == ["h1", "h2", "h3"]' crlf/survey.json
# A hostfile the user names through a link is read (the scheduler's file, linked): it was refused
# as "a symbolic link", where every other named input follows one.
ln -s crlf.txt hosts-link.txt
expect_exit 0 "a hostfile named through a link" -- "$TOPOTUNE" survey --backend mpi \
    --hostfile hosts-link.txt --iters 2 --out linked
# A planted logs link in --out took every launch's files elsewhere; refused, as the sweep does.
mkdir -p planted elsewhere
ln -s ../elsewhere planted/logs
expect_exit 2 "a planted logs link" -- "$TOPOTUNE" survey --backend mpi --hosts h1,h2,h3,h4 --iters 2 \
    --out planted
expect_stderr_has "'planted/logs' is not the survey's own folder (a link, or a file)" "said"
check "nothing written through it" test -z "$(ls elsewhere)"
finish
