#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sweeps across simulated hosts (tests/multinode/hosts.sh): the mpi space with real ranks on h1
# and h2 over TCP between namespaces, Open MPI's TCP pinned to the subnet the hosts' mapping shows
# (not the docker0 every host has); a sim sweep of the hosts' class (two HGX H100 nodes); hosts of
# two classes refused; a host killed mid-run, one cut off silently mid-run, and one whose firewall
# drops MPI's connections: the run is classified, the sweep goes on, nothing hangs or is left
# behind.
# shellcheck source=../cli/lib.sh
. "$(dirname "$0")/../cli/lib.sh"
# shellcheck source=hosts.sh
. "$(dirname "$0")/hosts.sh"
mn_guard 560 "$@"
spaces=$TOPOTUNE_SRC/profiles/spaces
mn_up 2 || { fail "the hosts did not come up"; finish; exit 1; }

# 1. The shipped mpi space's transports, one run per configuration, ranks on h1 and h2 (its
# collective algorithms are swept on one host by cli tests: across hosts they took a minute more).
python3 - "$spaces/mpi-default.json" "$TEST_TMP/transports.json" <<'PY'
import json, sys
space = json.load(open(sys.argv[1]))
space["vars"] = {k: v for k, v in space["vars"].items() if "coll_tuned" not in k}
space["exclude"] = [e for e in space["exclude"] if not any("coll_tuned" in k for k in e)]
json.dump(space, open(sys.argv[2], "w"))
PY
expect_exit 0 "mpi sweep across h1,h2" -- mn_head "$TOPOTUNE" sweep --backend mpi --launcher mpirun \
    --hosts h1,h2 --space "$TEST_TMP/transports.json" --repeat 1 --timeout 20 --out "$TEST_TMP/mpi"
# Open MPI 4.1's TCP wire-up between these namespaces has hung once in about a thousand runs
# here (once in CI, never reproduced in 600 runs at hand: stage and log printed below when it
# does). Such a run is classified (timeout) like any other; the check then needs that one
# configuration to run clean alone, so a configuration that cannot work still fails it.
check "every run on both hosts; shared memory alone cannot join them" python3 - "$TEST_TMP/mpi" \
    "$TEST_TMP/again.json" <<'PY'
import json, sys
d, again = sys.argv[1:3]
sweep = json.load(open(f"{d}/sweep.json"))
assert sweep["btl_tcp_if_include"] == "10.77.0.0/24", sweep["btl_tcp_if_include"]  # not 172.17.0.0/16
assert all(any(f["name"] == "docker0" for f in n["interfaces"]) for n in sweep["host_nodes"])
assert [n["host"] for n in sweep["host_nodes"]] == ["h1", "h2"]
assert sweep["np"] == 2 and sweep["hosts"] == "h1,h2"
runs = [json.loads(l) for l in open(f"{d}/results.jsonl")]
assert len(runs) == 5, len(runs)  # 3 transports x 2 single-copy, tcp without it
odd = []
for r in runs:
    btl = r["env"].get("OMPI_MCA_btl")
    if btl == "self,vader":  # no transport between hosts: MPI_Init fails
        assert r["outcome"] == "launch-failed", r
    elif r["outcome"] != "ok":
        odd.append(r)
    else:
        assert sorted(r["hosts"]) == ["h1", "h2"], r["hosts"]
        assert all(s["wrong"] == 0 for s in r["sizes"])
for r in odd:
    print("not ok:", r["env"], r["outcome"], "stage", r["stage"], "wall", r["wall_s"],
          "deadline", r["deadline_s"], "sizes", len(r["sizes"]), "stderr:", r["stderr_tail"][-400:])
    print("its log:", open(f"{d}/{r['log']}", errors="replace").read()[-1500:])
assert len(odd) <= 1 and all(r["outcome"] == "timeout" for r in odd), [r["outcome"] for r in odd]
if odd:  # that configuration alone, once more
    space = sweep["space"]
    space["vars"] = {k: [odd[0]["env"].get(k)] for k in space["vars"]}
    space.pop("exclude", None)
    json.dump(space, open(again, "w"))
PY
if [ -f "$TEST_TMP/again.json" ]; then
    expect_exit 0 "the configuration that hung, run again" -- mn_head "$TOPOTUNE" sweep --backend mpi \
        --launcher mpirun --hosts h1,h2 --space "$TEST_TMP/again.json" --repeat 1 --timeout 20 \
        --out "$TEST_TMP/again"
    check "run again alone (the defaults beside it), it is ok on both hosts" \
        python3 -c '
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
space = json.load(open(sys.argv[2]))
env = {k: v[0] for k, v in space["vars"].items() if v[0] is not None}
assert [r["env"] for r in runs].count(env) == 1, [r["env"] for r in runs]
for r in runs:
    assert r["outcome"] == "ok" and sorted(r["hosts"]) == ["h1", "h2"], (r["env"], r["outcome"])
' "$TEST_TMP/again/results.jsonl" "$TEST_TMP/again.json"
fi

# 2. A sim sweep of the hosts' class: the topology comes from mapping them.
mn_down
export MN_TOPOLOGY_h1=$TOPOTUNE_SRC/profiles/specs/hgx-h100.json MN_TOPOLOGY_h2=$TOPOTUNE_SRC/profiles/specs/hgx-h100.json
export MN_TOPOLOGY_h3=$TOPOTUNE_SRC/profiles/specs/dgx-a100.json
mn_up 3 || { fail "the hosts did not come up again"; finish; exit 1; }
expect_exit 0 "sim sweep of the hosts' class" -- mn_head "$TOPOTUNE" sweep --backend sim --hosts h1,h2 \
    --space "$spaces/nccl-quick.json" --repeat 1 --out "$TEST_TMP/sim"
check "predicted for two H100 nodes" python3 - "$TEST_TMP/sim" <<'PY'
import json, sys
d = sys.argv[1]
sweep = json.load(open(f"{d}/sweep.json"))
assert sweep["class"].startswith("h100-"), sweep["class"]
assert sweep["nodes"] == 2 and sweep["predicted"] is True
# one process predicts the job, here: two on the hosts wrote one log at once and garbled it
assert sweep["launcher"] == "direct" and sweep["np"] == 1, (sweep["launcher"], sweep["np"])
json.load(open(f"{d}/topology.json"))
runs = [json.loads(l) for l in open(f"{d}/results.jsonl")]
assert runs and all(r["outcome"] == "ok" and r["predicted"] for r in runs), \
    [(r["outcome"], r["stage"], r["stderr_tail"][-300:]) for r in runs if r["outcome"] != "ok"]
PY
expect_exit 2 "hosts of two classes" -- mn_head "$TOPOTUNE" sweep --backend sim --hosts h1,h2,h3 \
    --space "$spaces/nccl-quick.json" --out "$TEST_TMP/mixed"
expect_stderr_has "h3 is a100-" "the odd host and its class named"
expect_no_file "$TEST_TMP/mixed" "nothing written for a refused sweep"

# 3. h2 dies in the middle of a run (after the run reported its first sizes): that run is
# classified, the rest fail to launch quickly, and the sweep finishes. The slow space makes runs
# long enough to be caught in the middle.
dies=$TEST_TMP/dies
(
    for _ in $(seq 600); do
        for f in "$dies"/logs/*-r1.jsonl; do # the second round: the first one ran whole
            if [ -f "$f" ] && grep -q '"event":"size"' "$f" && ! grep -q '"event":"end"' "$f"; then
                basename "$f" .jsonl >"$TEST_TMP/killed-during"
                mn_kill_host h2
                exit 0
            fi
        done
        sleep 0.1
    done
) &
killer=$!
MN_BACKGROUND=$killer
start=$(date +%s)
mn_head "$TOPOTUNE" sweep --backend mpi --hosts h1,h2 --space "$TOPOTUNE_FIXTURES/space-mpi-hosts.json" \
    --out "$dies" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
wait "$killer"
check "the sweep ended by itself (exit $rc)" test "$rc" -le 1
check "no hang: under 150 s" test $(($(date +%s) - start)) -lt 150
check "h2 was killed during a run" test -s "$TEST_TMP/killed-during"
check "the run in flight classified at its stage, later runs not ok" python3 - "$dies" "$(cat "$TEST_TMP/killed-during" 2>/dev/null)" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(f"{sys.argv[1]}/results.jsonl")]
killed = sys.argv[2]
print("outcomes in order:", " ".join(f'{r["config_id"][:4]}-r{r["rep"]}:{r["outcome"]}' for r in runs))
assert len(runs) == 8, len(runs)
hit = [r for r in runs if f'{r["config_id"]}-r{r["rep"]}' == killed]
assert len(hit) == 1, killed
assert hit[0]["outcome"] in ("error", "crash", "timeout"), hit[0]
assert hit[0]["stage"].startswith("after size:") or hit[0]["stage"] == "warmup", hit[0]["stage"]
print("killed run:", hit[0]["outcome"], hit[0]["stage"], hit[0]["stderr_tail"][-200:].replace("\n", " "))
after = runs[runs.index(hit[0]) + 1:]
assert after and all(r["outcome"] != "ok" for r in after), [r["outcome"] for r in after]
PY
check "no rank or daemon left in the hosts' namespaces" test -z "$(mn_strays)"

# 4. h2 goes silent in the middle of a run (its link down: no reset, packets dropped): the run
# in flight ends at its deadline, and the sweep still finishes.
mn_down
mn_up 2 || { fail "the hosts did not come up for the cut"; finish; exit 1; }
cut=$TEST_TMP/cut
(
    for _ in $(seq 600); do
        for f in "$cut"/logs/*-r0.jsonl; do
            if [ -f "$f" ] && grep -q '"event":"size"' "$f" && ! grep -q '"event":"end"' "$f"; then
                basename "$f" .jsonl >"$TEST_TMP/cut-during"
                mn_cut_host h2
                exit 0
            fi
        done
        sleep 0.1
    done
) &
MN_BACKGROUND=$!
start=$(date +%s)
# two configurations, not the space's four: each run after the cut waits out its whole deadline
# (a silent host drops the launch's packets), and one shows that the sweep goes on
python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); del s["vars"]["OMPI_MCA_coll_tuned_use_dynamic_rules"]
json.dump(s, open(sys.argv[2], "w"))' "$TOPOTUNE_FIXTURES/space-mpi-hosts.json" "$TEST_TMP/space-cut.json"
mn_head "$TOPOTUNE" sweep --backend mpi --hosts h1,h2 --space "$TEST_TMP/space-cut.json" \
    --repeat 1 --timeout 3 --out "$cut" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
wait "$MN_BACKGROUND"
check "the sweep ended by itself (exit $rc)" test "$rc" -le 1
check "bounded: under 120 s" test $(($(date +%s) - start)) -lt 120
check "the cut run timed out, the sweep went on" python3 - "$cut" "$(cat "$TEST_TMP/cut-during" 2>/dev/null)" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(f"{sys.argv[1]}/results.jsonl")]
print("outcomes in order:", " ".join(f'{r["config_id"][:4]}-r{r["rep"]}:{r["outcome"]}' for r in runs))
assert len(runs) == 2, len(runs)
hit = [r for r in runs if f'{r["config_id"]}-r{r["rep"]}' == sys.argv[2]]
assert len(hit) == 1, sys.argv[2]
assert runs.index(hit[0]) < len(runs) - 1, "the cut was in the last run: nothing shows the sweep went on"
assert hit[0]["outcome"] == "timeout", hit[0]
assert hit[0]["wall_s"] <= hit[0]["deadline_s"] + 5, (hit[0]["wall_s"], hit[0]["deadline_s"])
assert all(r["outcome"] != "ok" for r in runs[runs.index(hit[0]) + 1:])
PY
check "no rank or daemon left after the cut" test -z "$(mn_strays)"

# 5. A firewall that lets the launch in but not MPI's own connections (Open MPI's TCP pinned to
# ports 30000-30007, below Linux's ephemeral range, held back on h2's link): the ranks' first
# exchange hangs in connect(). Their watchdog ends the run at its -T deadline, naming stage init
# in its events, before the sweep's deadline for the whole run (-T times 1 + sizes / 4).
mn_down
mn_up 2 || { fail "the hosts did not come up for the firewall"; finish; exit 1; }
mn_block_ports h2 30000 0xfff8 || fail "tc could not filter h2's ports"
cat >"$TEST_TMP/ports.json" <<'EOF'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "4M", "factor": 2},
 "fixed": {"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_port_min_v4": "30000",
           "OMPI_MCA_btl_tcp_port_range_v4": "8"},
 "vars": {"OMPI_MCA_coll_tuned_use_dynamic_rules": [null]},
 "repeat": 1, "iters": 5, "warmup": 1, "timeout_s": 3}
EOF
mn_head "$TOPOTUNE" sweep --backend mpi --hosts h1,h2 --space "$TEST_TMP/ports.json" \
    --out "$TEST_TMP/ports" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
check "the sweep ended by itself (exit $rc)" test "$rc" -le 1
check "the hung first exchange ended by the ranks' watchdog, at stage init" python3 - "$TEST_TMP/ports" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(f"{sys.argv[1]}/results.jsonl")]
assert len(runs) == 1, len(runs)
r = runs[0]
print("outcome", r["outcome"], "stage", r["stage"], "wall", r["wall_s"], "of", r["deadline_s"])
assert r["outcome"] == "timeout" and r["stage"] == "init", (r["outcome"], r["stage"], r["stderr_tail"])
log = open(f"{sys.argv[1]}/{r['log']}", errors="replace").read()
assert "no progress for 3 s in stage init" in log, log[-2000:]
assert r["wall_s"] < r["deadline_s"], (r["wall_s"], r["deadline_s"])  # the ranks ended it
events = [json.loads(l) for l in open(f"{sys.argv[1]}/{r['log'][:-4]}.jsonl")]
assert events[-2]["event"] == "error" and events[-2]["stage"] == "init", events
assert events[-1]["event"] == "end" and events[-1]["outcome"] == "timeout", events
PY
check "no rank or daemon left after the firewall" test -z "$(mn_strays)"

mn_down
check "nothing left behind: $(mn_leftovers | head -3 | tr '\n' ' ')" test -z "$(mn_leftovers)"
finish
