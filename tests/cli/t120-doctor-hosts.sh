#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# doctor --hosts on one machine through mpirun (the real topotune-node): --profile given as the
# profile.json file is read on every node as it is here.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# --profile DIR/profile.json: each node read ".../profile.json/profile.json" and failed.
cls=$("$TOPOTUNE" topo --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
mkdir -p p
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "predicted": false, "variables": []}\n' \
    "$cls" >p/profile.json
"$TOPOTUNE" doctor --hosts localhost --profile p/profile.json --json >hosts.json 2>hosts.err
check "the node read the profile" python3 - hosts.json <<'PY'
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
assert "profile.json/profile.json" not in text and "cannot read" not in text, text[:2000]
PY
# a profile file of another name: each node read the profile.json beside it, another profile
mkdir -p q
printf '{"schema": "topotune/profile/1", "class": "%s", "version": 1, "predicted": false, "variables": []}\n' \
    "$cls" >q/mine.json
printf '{"schema": "topotune/profile/1", "class": "other-class-12345678", "version": 1, "predicted": false, "variables": []}\n' \
    >q/profile.json
"$TOPOTUNE" doctor --hosts localhost --profile q/mine.json --json >mine.json 2>mine.err
check "the node read mine.json, not the profile.json beside it" python3 - mine.json <<'PY'
import json, sys
text = json.dumps(json.load(open(sys.argv[1])))
assert "other-class-12345678" not in text and "cannot read" not in text, text[:2000]
PY
# Two "hosts", this one and n2 through an rsh agent that runs it here (as t044's; more than one
# such daemon on one machine races in Open MPI's start), n2 printing a damaged
# {"nodes": line of its own first: rank 0's whole line is read (the first such line was, and
# doctor failed with "no result").
# shellcheck disable=SC2016 # the agent's own variables
printf '%s\n' '#!/bin/sh' 'host=$1; shift' 'exec env FAKEHOST="$host" sh -c "$*"' >agent.sh
cat >node.sh <<SH
#!/bin/sh
[ "\$FAKEHOST" = n2 ] && printf '%s\\n' '{"nodes": garbage'
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
chmod +x agent.sh node.sh
expect_exit 0 "two hosts, one printing a damaged result line" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
    OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/node.sh" "$TOPOTUNE" doctor --hosts localhost,n2 --json
check "the two reports" python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["nodes"]) == 2' out
# A node that hangs (hwloc, NVML or the copy test stuck): the nodes that answered are reported,
# the hung one named, exit 3 as for a host that does not answer (rank 0 gathered the reports
# over MPI: nothing came back at all).
# With each "host" its own host name (a UTS namespace), this host hangs: Open MPI places the
# rank on mpirun's own host first, so a rank that said nothing is named by the one listed host
# no rank claimed, not by its place in the list (n2 was named, which answered). One hung run
# (its deadline is long enough for a loaded machine's healthy node, and is waited for whole).
# shellcheck disable=SC2016 # the agent's own variables
printf '%s\n' '#!/bin/sh' 'host=$1' 'shift' \
    'exec unshare --uts sh -c '"'"'hostname "$0"; exec env FAKEHOST="$0" sh -c "$1"'"'"' "$host" "$*"' >uts-agent.sh
cat >node.sh <<SH
#!/bin/sh
[ "\$FAKEHOST" = n2 ] && exec sleep 600
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
cat >local-hangs.sh <<SH
#!/bin/sh
[ -z "\$FAKEHOST" ] && exec sleep 600
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
chmod +x uts-agent.sh local-hangs.sh node.sh
# the hung node costs its whole deadline (it was 30 s); the answering one reports in a few seconds,
# under ASan too, and a slow machine sets TOPOTUNE_TEST_TIME_SCALE
deadline=$(scaled 20)
if unshare --uts true 2>/dev/null; then
    hung=localhost
    expect_exit 3 "doctor --hosts n2,localhost, this host hung" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/uts-agent.sh" \
        OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/local-hangs.sh" "$TOPOTUNE" doctor --hosts n2,localhost --timeout "$deadline" --json
else
    hung=n2
    expect_exit 3 "doctor --hosts, n2 hung" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
        OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/node.sh" "$TOPOTUNE" doctor --hosts localhost,n2 --timeout "$deadline" --json
fi
# (without them both "hosts" call themselves alike, so neither is claimed: the hung one is not
# named, its error lists both)
check "the answering node's report kept, the hung one named (or its candidates)" python3 - out "$hung" "$deadline" <<'PY'
import json, sys
d, hung = json.load(open(sys.argv[1])), sys.argv[2]
silent = [n for n in d["nodes"] if "error" in n]
other = [n for n in d["nodes"] if "error" not in n]
assert len(silent) == 1 and len(other) == 1 and other[0]["checks"], d["nodes"]
s = silent[0]
assert "sent nothing" in s["error"] and f"within {sys.argv[3]} s" in s["error"], s
if hung == "localhost":
    assert s["host"] == "localhost", s
else:
    assert "host" not in s and "one of the hosts no report named: localhost, n2" in s["error"], s
c = {x["name"]: x for x in d["checks"]}
assert c["nodes-checks"]["status"] == "fail" and "topotune-node sent nothing" in c["nodes-checks"]["evidence"], c
assert c["nodes-clock"]["status"] == "unknown", c["nodes-clock"]
PY
if unshare --uts true 2>/dev/null; then
    # MPI cannot connect the nodes (no transport between them): every node reported, the check
    # says so (the clocks read 0 and were compared, or the gather failed whole).
    expect_exit 1 "doctor --hosts, OMPI_MCA_btl=self" -- timeout 120 env OMPI_MCA_btl=self OMPI_MCA_plm_rsh_agent="$TEST_TMP/uts-agent.sh" \
        OMPI_MCA_plm_rsh_no_tree_spawn=1 "$TOPOTUNE" doctor --hosts localhost,n2 --timeout 60 --json
    check "nodes-clock fails: MPI could not connect them" python3 - out <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert all("error" not in n for n in d["nodes"]), d["nodes"]
c = {x["name"]: x for x in d["checks"]}
assert c["nodes-clock"]["status"] == "fail" and "could not connect the nodes" in c["nodes-clock"]["evidence"], c["nodes-clock"]
PY
fi
# A node whose mapping crashes (NVML on a sick GPU, tests/fakes/fake-nvml.c): its report says
# so, the others' are kept, at once (Open MPI ended the whole job when its rank died: no node's
# report came back).
if [ -e "${TOPOTUNE_FAKE_NVML:-}/libnvidia-ml.so.1" ]; then
    cat >crash.sh <<SH
#!/bin/sh
[ "\$FAKEHOST" = n2 ] && export FAKE_NVML_CRASH=1 LD_LIBRARY_PATH="$TOPOTUNE_FAKE_NVML"
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
    chmod +x crash.sh
    expect_exit 1 "doctor --hosts, n2's NVML crashing" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
    OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/crash.sh" "$TOPOTUNE" doctor --hosts localhost,n2 --timeout 60 --json
check "localhost's report kept, n2's crash said" python3 - out <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
local, n2 = d["nodes"]
assert local["checks"] and "error" not in local, local
# (under ASan its SEGV handler ends the child with exit 1: a failed report, not a signal)
assert "crashed (Segmentation fault) while reading this node" in n2["error"] or \
    "report of this node failed (exit 1)" in n2["error"], n2
PY
fi
# Stopped by SIGTERM while n2 hangs: mpirun's log and output files are removed (they stayed in
# TMPDIR: the handler exits, the caller's cleanup is never reached). Open MPI's own session
# folder is not topotune's.
mkdir -p tmp
env TMPDIR="$TEST_TMP/tmp" OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" OMPI_MCA_plm_rsh_no_tree_spawn=1 \
    TOPOTUNE_NODE_PROGRAM="$TEST_TMP/node.sh" "$TOPOTUNE" doctor --hosts localhost,n2 --timeout 100 >/dev/null 2>&1 &
pid=$!
ours() { find tmp -maxdepth 1 -name 'topotune-*' | tr '\n' ' '; }
made() { [ -n "$(ours)" ]; }
poll 100 0.1 made
check "the gather's files were made" made
kill -TERM "$pid"
wait "$pid"
check "SIGTERM: exit 143" test $? = 143
check "SIGTERM: no temporary file left ($(ours))" test -z "$(ours)"
# A node printing another rank's tag: the report it forged is not taken for rank 0's. And a NUL
# byte hides nothing after it.
cat >node.sh <<SH
#!/bin/sh
[ "\$FAKEHOST" = n2 ] && printf '\\000\\n%s\\n' '[1,0]<stdout>:{"report":{"host":"forged","checks":[]}}'
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
expect_exit 3 "doctor --hosts, n2 forging rank 0's report" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
    OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/node.sh" "$TOPOTUNE" doctor --hosts localhost,n2 --json
check "no forged report" python3 - out <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "forged" not in json.dumps(d["nodes"]), d["nodes"]
assert "more than one report" in d["nodes"][0]["error"] and d["nodes"][1]["checks"], d["nodes"]
PY
# --allocation: as many reports as Slurm says it has nodes (an mpirun that saw no allocation
# started one rank here, and "1 node(s)" passed).
expect_exit 3 "topo --allocation of 4 nodes, one report" -- timeout 120 env SLURM_JOB_ID=123 SLURM_JOB_NUM_NODES=4 \
    "$TOPOTUNE" topo --allocation
expect_stderr_has "1 node report(s) came back for the allocation's 4 nodes" "said"
# topo --hosts with a node that cannot map itself: named with its reason, exit 1 (it was one
# class "could not be mapped" among the others, exit 0).
cat >node.sh <<SH
#!/bin/sh
[ "\$FAKEHOST" = n2 ] && export TOPOTUNE_TOPOLOGY=/nonexistent/topology.json
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
expect_exit 1 "topo --hosts, n2 unmapped" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
    OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/node.sh" "$TOPOTUNE" topo --hosts localhost,n2
expect_stderr_has "could not be mapped: its TOPOTUNE_TOPOLOGY file is unreadable" "the reason said"
# A node whose name no reader may take (a host name with ';', which hostname(1) refuses and the
# kernel takes): its report is refused as damaged,
# said per node, exit 1 (topo --hosts put it in its JSON as it came, class and name).
if unshare -u true 2>/dev/null; then
    cat >node.sh <<SH
#!/bin/sh
if [ "\$FAKEHOST" = n2 ]; then
    exec unshare -u sh -c 'printf "n2;x" >/proc/sys/kernel/hostname && exec "\$0" "\$@"' "$TOPOTUNE_BIN/topotune-node" "\$@"
fi
exec "$TOPOTUNE_BIN/topotune-node" "\$@"
SH
    expect_exit 1 "topo --hosts, n2 naming itself 'n2;x'" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
        OMPI_MCA_plm_rsh_no_tree_spawn=1 TOPOTUNE_NODE_PROGRAM="$TEST_TMP/node.sh" "$TOPOTUNE" topo \
        --hosts localhost,n2 --json hosts-bad.json
    expect_stderr_has "its report is damaged: it names no valid host" "said"
    check "nothing of its name in the JSON, localhost's report kept" python3 - hosts-bad.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "n2;x" not in json.dumps(d), d
assert sum("error" in n for n in d["nodes"]) == 1 and any(n.get("topology") for n in d["nodes"]), d["nodes"]
PY
else
    echo "skipped: a node of another host name needs a UTS namespace (root)"
fi
# The caller's NCCL variables reach every node's checks, through a remote shell that gives none
# (ssh's): NCCL_SOCKET_IFNAME naming no interface failed here but passed on the nodes. (This
# agent drops the NCCL_* variables only: the sanitized run's own settings stay.)
# shellcheck disable=SC2016 # the agent's own variables
printf '%s\n' '#!/bin/sh' 'host=$1; shift' 'for v in $(env | sed -n "s/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p"); do unset "$v"; done' \
    'exec env FAKEHOST="$host" sh -c "$*"' >clean-agent.sh
chmod +x clean-agent.sh
expect_exit 1 "doctor --hosts, NCCL_SOCKET_IFNAME=bogus0" -- timeout 120 env OMPI_MCA_plm_rsh_agent="$TEST_TMP/clean-agent.sh" \
    OMPI_MCA_plm_rsh_no_tree_spawn=1 NCCL_SOCKET_IFNAME=bogus0 "$TOPOTUNE" doctor --hosts localhost,n2 --json
check "both nodes checked with it" python3 - out <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    c = {x["name"]: x for x in n["checks"]}
    assert c["interfaces"]["status"] == "fail" and "bogus0" in c["interfaces"]["evidence"], c["interfaces"]
PY
# --hosts as every command takes it, checked before mpirun starts (exit 2, the fix named): a
# host twice, Slurm's node list form, a blank after a comma, a host:slots (they reached mpirun,
# whose words named no host, or another).
for bad in "n1,n1|listed twice" "gpu1,GPU1|are one host" "node[01-04,07]|Slurm's node list form" \
    "n1, n2|host 2 is not a host name" "n1:2,n2|host 1 is not a host name"; do
    hosts=${bad%%|*}
    for cmd in topo doctor bench; do
        extra=()
        [ "$cmd" = bench ] && extra=(--backend sim --launcher mpirun)
        expect_exit 2 "$cmd --hosts '$hosts'" -- timeout 60 "$TOPOTUNE" "$cmd" "${extra[@]}" --hosts "$hosts"
        expect_stderr_has "${bad#*|}" "$cmd --hosts '$hosts': said"
    done
done
# A site's Open MPI parameter file choosing the TCP interfaces (the user's here, or one
# OMPI_MCA_mca_base_param_files names): topotune adds no exclude of its own, which Open MPI
# refuses beside an include ("No network interfaces were found for out-of-band communications").
mkdir -p home/.openmpi
printf '%s\n' '# a site file' 'oob_tcp_if_include = lo' >home/.openmpi/mca-params.conf
expect_exit 0 "topo --hosts localhost, the user's oob_tcp_if_include" -- timeout 120 env HOME="$TEST_TMP/home" \
    "$TOPOTUNE" topo --hosts localhost
cp home/.openmpi/mca-params.conf site.conf
expect_exit 0 "the same through OMPI_MCA_mca_base_param_files" -- timeout 120 \
    env OMPI_MCA_mca_base_param_files="$TEST_TMP/site.conf" "$TOPOTUNE" topo --hosts localhost
finish
