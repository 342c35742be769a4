#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey --backend sim` on inputs nobody scripted: a shipped spec whose defaults the
# model predicts to hang is refused with that outcome; two nodes make one pair, measured once;
# --pairs all on more nodes than it can take is refused before anything is written. report.html
# is a report an operator reads at a glance: the verdicts in a table, each class's nodes alone,
# the pair heatmap with host names on its axes, a colour scale and every value in its tooltip.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
cluster() { # cluster FILE SPEC COUNT [FAULTS JSON]
    printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "%s", "count": %s}], "faults": %s}\n' \
        "$2" "$3" "${4:-[]}" >"$1"
}

# The shipped RTX 4090 spec: P2P over PCIe hangs at NCCL's defaults; said so, not "no GPU".
cluster rtx.json rtx4090-8x-pcie.json 4
expect_exit 2 "RTX 4090 nodes refused" -- "$TOPOTUNE" survey --backend sim --cluster rtx.json --out rtx
expect_stderr_has "every launch on 'rtx4090-8x-pcie.json' hangs at init with NCCL's defaults" \
    "the predicted outcome said"
check "not 'no GPU'" test "$(grep -c "no GPU" "$TEST_TMP/err")" = 0
expect_no_file rtx "nothing written"

# Two nodes: one pair, one pair round (three matchings of two nodes are the same pair).
cluster two.json hgx-h100.json 2
expect_exit 0 "two nodes" -- "$TOPOTUNE" survey --backend sim --cluster two.json --out two
check "the pair measured once" python3 - two <<'PY'
import json, sys
stages = [json.loads(l)["stage"] for l in open(sys.argv[1] + "/launches.jsonl")]
assert stages.count("pairs") == 1, stages
assert len(json.load(open(sys.argv[1] + "/survey.json"))["pairs"]) == 1
PY
expect_stderr_has "[launch 1 of ~3]" "the plan counts one pair round"
# Three nodes have three pairs: three rounds, each pair once.
cluster three.json hgx-h100.json 3
expect_exit 0 "three nodes" -- "$TOPOTUNE" survey --backend sim --cluster three.json --out three
check "three pairs, each once" python3 - three/survey.json <<'PY'
import json, sys
pairs = sorted(tuple(sorted(p["hosts"])) for p in json.load(open(sys.argv[1]))["pairs"])
assert pairs == [("node0001", "node0002"), ("node0001", "node0003"), ("node0002", "node0003")], pairs
PY

# --pairs all on 65,536 nodes wrote gigabytes: above 512 nodes it is refused, nothing written.
cluster huge.json hgx-h100.json 65536
expect_exit 2 "--pairs all on 65,536 nodes refused" -- timeout 120 "$TOPOTUNE" survey --backend sim \
    --cluster huge.json --pairs all --out huge
expect_stderr_has "--pairs all: 65536 nodes would make 2147450880 pairs" "the size said"
expect_no_file huge "nothing written"
cluster max.json hgx-h100.json 513
expect_exit 2 "--pairs all on 513 nodes refused" -- timeout 120 "$TOPOTUNE" survey --backend sim \
    --cluster max.json --pairs all --out max

# report.html: parsed, its parts found where an operator looks for them.
cluster link.json hgx-h100.json 6 '[{"kind": "slow-link", "hosts": ["node0003"], "factor": 0.5}]'
expect_exit 1 "a slow link" -- "$TOPOTUNE" survey --backend sim --cluster link.json --out link
check "report.html: verdict table, nodes alone, named heatmap, scale, tooltips" python3 - link <<'PY'
import json, re, sys
from html.parser import HTMLParser
d = sys.argv[1]
s = json.load(open(d + "/survey.json"))
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.tables, self.texts, self.titles, self.scale = [], [], [], [], 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append([])
        if tag == "tr" and self.tables:
            self.tables[-1].append([])
        if tag in ("td", "th"):
            self.tables[-1][-1].append("")
        if a.get("class") == "scale":
            self.scale += 1
        self.stack.append(tag)
    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass
    def handle_data(self, data):
        where = self.stack[-1] if self.stack else ""
        if where in ("td", "th") or (where in ("br", "code") and "td" in self.stack):
            self.tables[-1][-1][-1] += data
        if where == "text":
            self.texts.append(data)
        if where == "title":
            self.titles.append(data)
h = open(d + "/report.html").read()
p = P()
p.feed(h)
assert "<pre>" not in h.split("Doctor and the whole cluster")[0], "the text report in a <pre>"
verdicts = p.tables[0]
assert verdicts[0] == ["host", "verdict", "evidence"], verdicts[0]
assert [r[:2] for r in verdicts[1:]] == [["node0003", "link-slow"]], verdicts
partners = re.search(r'"partners": (\d+)', verdicts[1][2])
assert partners and int(partners.group(1)) >= 2, verdicts[1]
alone = {r[0]: r for r in p.tables[1][1:]}
assert sorted(alone) == ["node000%d" % i for i in range(1, 7)], alone
for n in s["nodes"]:
    assert alone[n["host"]][1] == "%.2f" % n["alone_busbw"], (n, alone[n["host"]])
assert alone["node0003"][3] == "link-slow", alone["node0003"]
# the axes: every host twice (rows and columns)
assert sorted(p.texts) == sorted(["node000%d" % i for i in range(1, 7)] * 2), p.texts
# a tooltip per measured pair with its value, in GB/s and against the median
for q in s["pairs"]:
    a, b = q["hosts"]
    want = "%.2f GB/s" % q["busbw"]
    assert any(t.startswith(a + " - " + b + ": ") and want in t for t in p.titles), (q, want)
assert p.scale == 1 and "not measured" in h and "100%" in h, "a colour scale"
PY

# SIGTERM ends a sim survey at its next launch: it was seen only once every launch had run (a
# survey of 65,536 nodes and 4,096 hung ones, 40,964 launches, went on for 48 s). This one makes
# 10,244 launches; the signal comes once the first is recorded.
python3 -c 'import json, sys
hang = [{"kind": "hang", "hosts": ["node%04d" % i]} for i in range(7, 16385, 16)]
json.dump({"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 16384}],
           "faults": hang}, open(sys.argv[1], "w"))' hangs.json
"$TOPOTUNE" survey -q --backend sim --cluster hangs.json --out hangs 2>hangs.err &
pid=$!
for _ in $(seq "$(scaled 600)"); do [ -s hangs/launches.jsonl ] && break; sleep 0.1; done
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
check "SIGTERM: exit 143 (exit $rc)" test "$rc" = 143
check "it says how to go on" grep -q -- "--resume' continues" hangs.err
check "it stopped at the next launch ($(wc -l <hangs/launches.jsonl) of 10244 recorded)" \
    test "$(wc -l <hangs/launches.jsonl)" -lt 5000
# A fault's host in another case is the same host (host names ignore case, as the prefixes do:
# "GPU-0003" was refused as not in the cluster). Two faults of one kind on one host compound:
# the second replaced the first (0.5 then 0.95 measured 0.95, named nothing).
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4, "prefix": "gpu-"}],
 "faults": [{"kind": "slow-node", "hosts": ["GPU-0003"], "factor": 0.5}], "noise": 0}' >case.json
expect_exit 1 "a fault host in upper case" -- "$TOPOTUNE" survey --backend sim --cluster case.json --out case
check "names gpu-0003" grep -q "^gpu-0003	node-slow" case/excluded.txt
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}],
 "faults": [{"kind": "slow-node", "hosts": ["node0002"], "factor": 0.5},
            {"kind": "slow-node", "hosts": ["node0002"], "factor": 0.95}], "noise": 0}' >dup.json
expect_exit 1 "two slow-node faults on one host" -- "$TOPOTUNE" survey --backend sim --cluster dup.json --out dup
check "compound: node0002 alone at 0.475 of its class" python3 - dup/survey.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
alone = {n["host"]: n["alone_busbw"] for n in s["nodes"]}
r = alone["node0002"] / alone["node0001"]
assert abs(r - 0.475) < 0.01, (r, alone)
PY

# Two nodes at 1 MiB, one at half speed: the band's low edge there is under half the prediction,
# and two values gave the class a spread of their gap, so nothing was named (exit 0). The faster
# is the reference: the slower, again slow in its repeat beside the faster's, is named. Two
# healthy nodes at 10% noise name nothing.
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 2}],
 "faults": [{"kind": "slow-node", "hosts": ["node0002"], "factor": 0.5}]}' >two-half.json
expect_exit 1 "two nodes at 1 MiB, one at half speed" -- "$TOPOTUNE" survey --backend sim \
    --cluster two-half.json --size 1M --out two-half
check "node0002 named slow alone, node0001 healthy" python3 - two-half <<'PY'
import sys
lines = [l.split("\t")[:2] for l in open(sys.argv[1] + "/excluded.txt")]
assert lines == [["node0002", "node-slow"]], lines
assert open(sys.argv[1] + "/healthy.hostfile").read().split() == ["node0001"]
PY
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 2}], "noise": 0.1}' >two-noisy.json
for seed in 1 2 3 4 5 6 7 8; do
    expect_exit 0 "two healthy nodes at 10% noise, seed $seed" -- "$TOPOTUNE" survey --backend sim \
        --cluster two-noisy.json --size 1M --seed "$seed" --out "two-noisy-$seed"
done

# Every node at 0.6 (a shared fault): the whole-cluster line points at the class's verdict. It
# blamed "a fault the pair rounds did not localize" and advised --pairs all even under --pairs all.
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 6}],
 "faults": [' "$(for i in 1 2 3 4 5 6; do printf '{"kind": "slow-node", "hosts": ["node000%d"], "factor": 0.6}%s' \
    "$i" "$([ "$i" = 6 ] || echo ,)"; done)" ']}' >all60.json
expect_exit 1 "every node at 0.6, --pairs all" -- "$TOPOTUNE" survey --backend sim --cluster all60.json \
    --pairs all --out all60
check "the whole-cluster line names the class's verdict, not the pair rounds" python3 - all60/report.txt <<'PY'
import re, sys
text = re.sub(r"\s+", " ", open(sys.argv[1]).read())
whole = text[text.index("The whole cluster at once"):]
assert "the class is below its expectation, as named above" in whole, whole
assert "--pairs all" not in whole and "did not localize" not in whole, whole
PY

# One matching of an odd class leaves a node out: a focus round gives it a partner. Its NIC at
# half speed went unjudged and the node stayed in healthy.hostfile (3 seeds of 8).
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 5}],
 "faults": [{"kind": "slow-link", "hosts": ["node0004"], "factor": 0.5}]}' >odd.json
for seed in 1 5 8; do
    expect_exit 1 "5 nodes, --matchings 1, seed $seed" -- "$TOPOTUNE" survey --backend sim --cluster odd.json \
        --matchings 1 --seed "$seed" --out "odd-$seed"
    check "seed $seed: node0004 link-slow, not healthy" bash -c "grep -q '^node0004	link-slow' odd-$seed/excluded.txt &&
        ! grep -qx node0004 odd-$seed/healthy.hostfile"
done

# A class of one node has no pair: its report line says so (it read "1 nodes ... pairs: median
# 0.00 GB/s, spread 0%", a measurement of nothing).
printf '%s\n' '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4},
 {"spec": "dgx-a100.json", "count": 1, "prefix": "a"}]}' >lone.json
expect_exit 0 "a class of one node" -- "$TOPOTUNE" survey --backend sim --cluster lone.json --out lone
check "its line: 1 node, pairs none measured" python3 - lone <<'PY'
import re, sys
text = re.sub(r"\s+", " ", open(sys.argv[1] + "/report.txt").read())
line = re.search(r"Class a100[^:]*: (.*?)Class|Class a100[^:]*: (.*)", text).group(0)
assert "1 node (PREDICTED)" in line and "pairs: none measured" in line and "0.00 GB/s" not in line, line
html = open(sys.argv[1] + "/report.html").read()
assert "<p>1 node (predicted). Alone: median" in html and "Pairs: none measured." in html
PY

# A cluster file that is empty ("line: -1: wrong arguments"), a dead node given a factor of 7
# (the schema's range is (0, 1], taken), a host named by a number ("not in the cluster"): each
# refused, saying what is wrong.
: >empty.json
printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}], "faults": [{"kind": "dead", "hosts": ["node0001"], "factor": 7}]}\n' >dead7.json
printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}], "faults": [{"kind": "dead", "hosts": [1]}]}\n' >host1.json
for f in "empty.json:file: empty" "dead7.json:faults[0].factor: a number in (0, 1]" "host1.json:host names are text"; do
    expect_exit 2 "${f%%:*} refused" -- "$TOPOTUNE" survey --backend sim --cluster "${f%%:*}" --out refused
    expect_stderr_has "${f#*:}" "${f%%:*}: said what"
done
finish
