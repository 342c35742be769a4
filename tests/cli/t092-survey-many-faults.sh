#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `topotune survey --backend sim` where the faults are many: 4 of 8 and 4 of 16 nodes on
# half-speed NICs are each named link-slow (a class median falls between the two populations and
# once named nothing), in every seed, none in healthy.hostfile; a CPU-starved host (slow alone by
# 200x) is node-slow whatever its pairs say; in a class spread from 1x to 0.13x, too spread for its
# own median, each node below the model's band is named and the others are healthy; the halves of
# a failed launch (lighter load) are
# marked bisected and left out of the class's level; a node that stalls (a fixed time lost in each
# measurement alone: a first short one looks slow) is judged on its longer repeat, healthy when
# that is, node-slow when even that is slow. In a class of 3, one slow path (half of each of its
# nodes' two pairs) is the path, not a node's link, nor the class below its band; a NIC slow
# there (two slow partners) is still its link. In a class of 2 nothing tells a slow path from a
# slow link: the class is named below its band in pairs, not a path "fine with other partners".
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
cluster() { # cluster FILE COUNT FAULTS
    printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": %s}], "faults": %s}\n' \
        "$2" "$3" >"$1"
}
verdicts() {
    python3 -c 'import json, sys
print(";".join(sorted(" ".join(v["hosts"]) + " " + v["kind"] for v in json.load(open(sys.argv[1]))["verdicts"])))' "$1/survey.json"
}
slow_links() { # slow_links HOST... : a slow-link fault at 0.5 per host, as JSON
    local sep="" h
    printf '['
    for h in "$@"; do
        printf '%s{"kind": "slow-link", "hosts": ["%s"], "factor": 0.5}' "$sep" "$h"
        sep=", "
    done
    printf ']'
}
cluster half.json 8 "$(slow_links node0002 node0003 node0005 node0008)"
cluster quarter.json 16 "$(slow_links node0001 node0006 node0011 node0016)"
for seed in 1 2 3; do
    expect_exit 1 "4 of 8 slow, seed $seed: exit 1" -- "$TOPOTUNE" survey --backend sim \
        --cluster half.json --seed "$seed" --out "half-$seed"
    got=$(verdicts "half-$seed")
    check "4 of 8, seed $seed: each named link-slow (got: $got)" test "$got" = \
        "node0002 link-slow;node0003 link-slow;node0005 link-slow;node0008 link-slow"
    check "4 of 8, seed $seed: healthy.hostfile the 4 others" \
        test "$(tr '\n' ' ' <"half-$seed/healthy.hostfile")" = "node0001 node0004 node0006 node0007 "
    expect_exit 1 "4 of 16 slow, seed $seed: exit 1" -- "$TOPOTUNE" survey --backend sim \
        --cluster quarter.json --seed "$seed" --out "quarter-$seed"
    got=$(verdicts "quarter-$seed")
    check "4 of 16, seed $seed: each named (got: $got)" test "$got" = \
        "node0001 link-slow;node0006 link-slow;node0011 link-slow;node0016 link-slow"
done
check "survey.json valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/survey.schema.json" half-1/survey.json

# A CPU-starved host: slow alone by 200x, and so with every partner: the node, not its link.
cluster starved.json 8 '[{"kind": "slow-node", "hosts": ["node0004"], "factor": 0.005},
 {"kind": "slow-link", "hosts": ["node0002"], "factor": 0.3}, {"kind": "hang", "hosts": ["node0006"]}]'
expect_exit 1 "a CPU-starved host" -- "$TOPOTUNE" survey --backend sim --cluster starved.json --out starved
got=$(verdicts starved)
check "the starved host node-slow, the link link-slow, the hang node-fails (got: $got)" test "$got" = \
    "node0002 link-slow;node0004 node-slow;node0006 node-fails"

# Nine nodes alone: two at 1x, the others from 0.75x down, 25% apart: no level that a third of
# them back, but the model knows the class: each node below the band a healthy node gives is
# named, the two at 1x are healthy (judged against the band, not the class's own spread).
python3 - >spread.json <<'PY'
import json
f = [0.75, 0.56, 0.42, 0.32, 0.24, 0.18, 0.13]
print(json.dumps({"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 9}],
                  "faults": [{"kind": "slow-node", "hosts": [f"node{i + 3:04d}"], "factor": x}
                             for i, x in enumerate(f)]}))
PY
expect_exit 1 "a class spread from 1x to 0.13x: exit 1" -- "$TOPOTUNE" survey --backend sim --cluster spread.json --out spread
check "the 7 below the band node-slow, predicted; the two at 1x healthy" python3 - spread <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/survey.json"))
slow = [v for v in s["verdicts"] if v["kind"] == "node-slow"]
assert [v["hosts"][0] for v in slow] == ["node%04d" % i for i in range(3, 10)], s["verdicts"]
assert len(s["verdicts"]) == 7, s["verdicts"]
for v in slow:
    e = v["evidence"]
    assert e["predicted"] and e["busbw"] < e["bound"] <= e["band_low"], e
assert open(d + "/healthy.hostfile").read().split() == ["node0001", "node0002"]
PY
check "survey.json valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/survey.schema.json" spread/survey.json

# The first pair round's launch failed and its halves, measured under a lighter load, came out
# 3x faster (recorded, then replayed by --resume): marked bisected, left out of the level.
cluster clean.json 8 '[]'
expect_exit 0 "a clean cluster" -- "$TOPOTUNE" survey --backend sim --cluster clean.json --out bis
level=$(python3 -c 'import json, sys; print(list(json.load(open(sys.argv[1]))["classes"].values())[0]["pair_median"])' bis/survey.json)
python3 - bis/launches.jsonl <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
i = next(k for k, l in enumerate(lines) if l["stage"] == "pairs")
r = lines[i]
g, b = r["groups"], r["busbw"]
h = len(g) // 2
halves = [dict(r, groups=g[:h], busbw=[3 * x for x in b[:h]]), dict(r, groups=g[h:], busbw=[3 * x for x in b[h:]])]
out = lines[:i] + [dict(r, ok=False, busbw=[], why="timeout (edited)")] + halves
open(sys.argv[1], "w").write("".join(json.dumps(l) + "\n" for l in out))
PY
"$TOPOTUNE" survey --backend sim --cluster clean.json --out bis --resume 2>bis.err
check "the halves marked bisected, the level unmoved, nothing named" python3 - bis/survey.json "$level" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
marked = [p for p in s["pairs"] if p.get("bisected")]
assert len(marked) == 4 and len({p["launch"] for p in marked}) == 2, s["pairs"]
level = list(s["classes"].values())[0]["pair_median"]
assert abs(level / float(sys.argv[2]) - 1) < 0.05, (level, sys.argv[2])
assert s["verdicts"] == [], s["verdicts"]
PY

# Stalls: node0003 keeps 0.2 of its busbw in a first measurement alone, 8/(8+4) = 0.67 in a repeat 8
# times longer, above the bound (0.5 of the level at --tolerance 0.5): healthy (the mean of the
# two short measurements named it). node0009 keeps 0.02, then 0.14: slow in both. node0012 is
# slow-node at 0.3.
cluster stalls.json 16 '[{"kind": "stalls", "hosts": ["node0003"], "factor": 0.2},
    {"kind": "stalls", "hosts": ["node0009"], "factor": 0.02},
    {"kind": "slow-node", "hosts": ["node0012"], "factor": 0.3}]'
for seed in 1 2 3; do
    expect_exit 1 "stalls, seed $seed: exit 1" -- "$TOPOTUNE" survey --backend sim --cluster stalls.json \
        --tolerance 0.5 --seed "$seed" --out "stalls-$seed"
    check "stalls, seed $seed: the stalls that pass in a longer repeat not named ($(verdicts "stalls-$seed"))" \
        test "$(verdicts "stalls-$seed")" = "node0009 node-slow;node0012 node-slow"
done
check "the repeat timed 8 times more operations, and said so" python3 - stalls-1 <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1] + "/launches.jsonl")]
rep = [l for l in lines if l["stage"] == "alone-repeat"]
assert rep and all(l["longer"] == 8 for l in rep), rep
assert all(l["longer"] == 1 for l in lines if l["stage"] != "alone-repeat"), lines
v = [v for v in json.load(open(sys.argv[1] + "/survey.json"))["verdicts"] if v["hosts"] == ["node0009"]][0]
assert "longer measurement" in v["text"], v
PY
check "the stalls cluster valid" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/sim-cluster.schema.json" stalls.json

cluster path3.json 3 '[{"kind": "slow-path", "hosts": ["node0001", "node0002"], "factor": 0.6}]'
cluster link3.json 3 "$(slow_links node0002)"
for seed in 1 2; do
    expect_exit 1 "3 nodes, a slow path, seed $seed" -- "$TOPOTUNE" survey --backend sim \
        --cluster path3.json --pairs all --seed "$seed" --out "path3-$seed"
    got=$(verdicts "path3-$seed")
    check "3 nodes, seed $seed: the path named, nothing else (got: $got)" test "$got" = "node0001 node0002 path-slow"
    expect_exit 1 "3 nodes, a slow NIC, seed $seed" -- "$TOPOTUNE" survey --backend sim \
        --cluster link3.json --pairs all --seed "$seed" --out "link3-$seed"
    got=$(verdicts "link3-$seed")
    check "3 nodes, seed $seed: the NIC's node named link-slow (got: $got)" test "$got" = "node0002 link-slow"
done
# Two faults in a class of 4: a slow path (node1-node2) and a slow NIC (node3), the slowest named
# first so that its pairs count against no partner: the NIC's node and the path, no other node,
# and not the class (its median pair, without node3's, is fine).
cluster pl4.json 4 '[{"kind": "slow-path", "hosts": ["node0001", "node0002"], "factor": 0.6},
  {"kind": "slow-link", "hosts": ["node0003"], "factor": 0.5}]'
for seed in 1 2; do
    expect_exit 1 "4 nodes, a path and a NIC, seed $seed" -- "$TOPOTUNE" survey --backend sim \
        --cluster pl4.json --pairs all --seed "$seed" --out "pl4-$seed"
    got=$(verdicts "pl4-$seed")
    check "4 nodes, seed $seed: the NIC and the path (got: $got)" test "$got" = \
        "node0001 node0002 path-slow;node0003 link-slow"
done
# A class measuring above the band (real clusters may: the band's top is 1.29x): a path 30% slower
# than the class, though within the band, is still a path (the sim's numbers scaled by 1.25).
cluster hi.json 8 '[{"kind": "slow-path", "hosts": ["node0001", "node0002"], "factor": 0.7}]'
expect_exit 1 "8 nodes, a slow path" -- "$TOPOTUNE" survey --backend sim --cluster hi.json --pairs all --out hi
python3 - hi/launches.jsonl <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for r in runs:
    r["busbw"] = [x * 1.25 for x in r["busbw"]]
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in runs))
PY
expect_exit 1 "the same, 1.25x the band" -- "$TOPOTUNE" survey --backend sim --cluster hi.json --pairs all --out hi --resume
got=$(verdicts hi)
check "above the band: the path named (got: $got)" test "$got" = "node0001 node0002 path-slow"
cluster path2.json 2 '[{"kind": "slow-path", "hosts": ["node0001", "node0002"], "factor": 0.6}]'
expect_exit 1 "2 nodes, a slow path" -- "$TOPOTUNE" survey --backend sim --cluster path2.json --pairs all --out path2
got=$(verdicts path2)
check "2 nodes: the class below its band, no path (got: $got)" test "$got" = "node0001 node0002 class-below-expected"
# one pair cannot tell the network from a NIC of either node: the verdict says both, not "not a node"
check "2 nodes: the network or either node's link" grep -q "or either node's own link" path2/report.txt
check "and not 'not a node'" test "$(grep -c "not a node" path2/report.txt)" = 0
finish
