#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The launch templates start the shape the profile was measured on (nodes x ranks per node),
# overridable, and warn before starting a job whose communicator the per-size table does not
# fit (torchrun.sh with a stand-in torchrun; mpirun.sh under real Open MPI, with a second "host"
# reached through an rsh agent, as in t044).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
spec="$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"

# A profile whose table has rows, measured on 1 node x 8 ranks: Tree beats the defaults at the
# largest size, outside the objective, so the defaults stay the profile and the row is Tree there
# (results edited as in t045).
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "256M", "factor": 16},
 "objective": {"min": "1M", "max": "16M"}, "vars": {"NCCL_ALGO": [null, "Tree"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 10, "cv_max": 0.05}' >space.json
"$TOPOTUNE" -q sweep --topology "$spec" --space space.json --out plain || true
# force SWEEP COPY: COPY is SWEEP with Tree x3 the defaults at the largest size.
force() {
    mkdir -p "$2"
    cp "$1/sweep.json" "$2/"
    python3 - "$1/results.jsonl" "$2/results.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[2], "w") as out:
    for r in runs:
        if r["env"].get("NCCL_ALGO") == "Tree":
            base = next(b for b in runs if not b["env"] and b["rep"] == r["rep"] and b["final"] == r["final"])
            bw = {s["size"]: s["busbw"] for s in base["sizes"]}
            for s in r["sizes"]:
                if s["size"] == max(bw):
                    s["busbw"] = bw[s["size"]] * 3
        out.write(json.dumps(r) + "\n")
PY
}
force plain forced
expect_exit 0 "gen (rows)" -- "$TOPOTUNE" gen --runs forced --profiles p
p=$(echo "$TEST_TMP"/p/*/latest)
check "the table has a row for 1 node x 8 ranks" grep -q '^allreduce,.*,1,8,tree,' "$p/tuner-table.txt"
check "profile.json records the shape measured" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sweep"]
assert (s["nodes"], s["ranks"]) == (1, 8), s' "$p/profile.json"
check "sbatch.sh asks for 1 node of 8 GPUs" bash -c "grep -qx '#SBATCH --nodes=1' '$p/launch/sbatch.sh' &&
    grep -qx '#SBATCH --gpus-per-node=8' '$p/launch/sbatch.sh'"

# torchrun.sh: the measured shape by default; another one is started, with a warning first.
mkdir -p bin
printf '%s\n' '#!/bin/sh' 'echo "torchrun $*"' >bin/torchrun
chmod +x bin/torchrun
run_torchrun() { env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false "$p/launch/torchrun.sh" "$@"; }
expect_exit 0 "torchrun.sh, measured shape" -- run_torchrun -- train.py
check "8 ranks on this node" grep -q -- '--nnodes 1 --nproc_per_node 8 ' "$TEST_TMP/out"
check "no warning for the measured shape" bash -c "! grep -q 'per-size table' '$TEST_TMP/err'"
expect_exit 0 "torchrun.sh, 2 ranks" -- run_torchrun --nproc-per-node 2 -- train.py
check "2 ranks asked, 2 started" grep -q -- '--nproc_per_node 2 ' "$TEST_TMP/out"
expect_stderr_has "warning: the per-size table (tuner-table.txt) was measured on 1 node(s) x 8 ranks; this job runs 1 node(s) x 2 ranks" \
    "a table that fits no communicator of the job is a warning"
expect_exit 0 "TOPOTUNE_PPN overrides too" -- env TOPOTUNE_PPN=4 PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false \
    "$p/launch/torchrun.sh" -- train.py
check "4 ranks" grep -q -- '--nproc_per_node 4 ' "$TEST_TMP/out"
expect_exit 2 "a count that is no count" -- run_torchrun --nproc-per-node x -- train.py
expect_stderr_has "positive integers, not 'x'" "says which"

# PyTorch is asked once for its NCCL and its own version (each import of torch takes a second or
# more, on every node of every job): an NCCL other than the profile's is refused, and PyTorch's
# error-handling variables are named as its version reads them. The prelude's own Python runs,
# counted by a wrapper, against a stand-in torch package that answers as the test says. The
# profile is the one above, as if measured with NCCL 2.99.1 (a spec's sim sweep records the
# machine's NCCL, here maybe none).
mkdir -p versioned fakebin stub/torch
cp forced/results.jsonl versioned/
python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
s["versions"] = dict(s.get("versions") or {}, nccl="2.99.1")
json.dump(s, open(sys.argv[2], "w"))' forced/sweep.json versioned/sweep.json
expect_exit 0 "gen (NCCL 2.99.1)" -- "$TOPOTUNE" gen --runs versioned --profiles pv
pv=$(echo "$TEST_TMP"/pv/*/latest)
cat >stub/torch/__init__.py <<'PY'
"""A stand-in PyTorch: STUB_TORCH its version, STUB_NCCL its NCCL's ("2.21.5" a tuple, "21905" the
code older PyTorch gives, "2.21.5.x" a tuple with a suffix, "" raises as a build without NCCL)."""
import os

__version__ = os.environ["STUB_TORCH"]


class cuda:
    class nccl:
        @staticmethod
        def version():
            v = os.environ["STUB_NCCL"]
            if not v:
                raise RuntimeError("NCCL is not available")
            if v.isdigit():
                return int(v)
            return tuple(int(x) if x.isdigit() else x for x in v.split("."))
PY
# shellcheck disable=SC2016 # the stand-ins' own variables
printf '%s\n' '#!/bin/sh' 'echo "torchrun async=${TORCH_NCCL_ASYNC_ERROR_HANDLING:-unset}/${NCCL_ASYNC_ERROR_HANDLING:-unset}"' \
    >fakebin/torchrun
# shellcheck disable=SC2016
printf '%s\n' '#!/bin/sh' 'echo call >>"$TEST_TMP/py.log"' 'exec python3 "$@"' >counted-python
chmod +x fakebin/torchrun counted-python
stub_torch() { # NCCL (STUB_NCCL) TORCH (STUB_TORCH) CODE (torchrun.sh's exit status)
    rm -f py.log
    expect_exit "$3" "torchrun.sh, PyTorch $2 with NCCL '$1'" -- env PATH="$TEST_TMP/fakebin:$PATH" \
        PYTHONPATH="$TEST_TMP/stub" TOPOTUNE_PYTHON="$TEST_TMP/counted-python" TEST_TMP="$TEST_TMP" \
        STUB_NCCL="$1" STUB_TORCH="$2" "$pv/launch/torchrun.sh" -- train.py
    check "PyTorch $2 with NCCL '$1': Python started once" test "$(wc -l <py.log)" -eq 1
}
stub_torch 2.99.1 2.3.0+cu121 0
check "PyTorch 2.3: TORCH_NCCL_ASYNC_ERROR_HANDLING" grep -qx 'torchrun async=1/unset' "$TEST_TMP/out"
stub_torch "" 1.13.0 0
check "PyTorch 1.13, no NCCL: NCCL_ASYNC_ERROR_HANDLING" grep -qx 'torchrun async=unset/1' "$TEST_TMP/out"
stub_torch 29901 1.13.0 0 # the code of 2.99.1
stub_torch 2.99.1.post1 2.3.0 0
stub_torch 2.18.3 2.3.0 3
expect_stderr_has "profile measured with NCCL 2.99.1 but this runs NCCL 2.18.3: run topotune" "another NCCL refused"
stub_torch 2708 2.3.0 3 # NCCL 2.7.8's code, before 2.9's
expect_stderr_has "but this runs NCCL 2.7.8: run topotune" "an old NCCL's code read as its version"
# A Python without torch (a login node): the version unknown, said; both names set (only the
# deprecated one was, which PyTorch 2.2 on reads no more, and no flight recorder).
expect_exit 0 "torchrun.sh, a Python without torch" -- env PATH="$TEST_TMP/fakebin:$PATH" \
    TOPOTUNE_PYTHON=/nonexistent/python3 "$pv/launch/torchrun.sh" -- train.py
check "both names of PyTorch's error handling" grep -qx 'torchrun async=1/1' "$TEST_TMP/out"
expect_stderr_has "PyTorch's version is unknown here" "said"

# mpirun.sh under real Open MPI: the measured 8 ranks, no warning; 2 nodes x 1 rank, a warning.
cat >rank.sh <<'EOF'
#!/bin/sh
echo "rank $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE ifname=${NCCL_SOCKET_IFNAME:-unset} hca=${NCCL_IB_HCA:-unset} algo=${NCCL_ALGO:-unset} table=${TOPOTUNE_TUNER_TABLE:+set}"
EOF
chmod +x rank.sh
expect_exit 0 "mpirun.sh, measured shape" -- env TOPOTUNE_PYTHON=python3 "$p/launch/mpirun.sh" "$TEST_TMP/rank.sh"
check "8 ranks" test "$(grep -c '^rank [0-7]/8 ' "$TEST_TMP/out")" -eq 8
check "no warning for the measured shape" bash -c "! grep -q 'per-size table' '$TEST_TMP/err'"

# Two hosts (the second reached through an rsh agent, as in t044), one rank each: the job's
# communicator is 2 nodes x 2 ranks, which the table (1 x 8) does not fit.
# shellcheck disable=SC2016 # the agent's own variables
printf '%s\n' '#!/bin/sh' 'shift' 'exec env -i PATH="$PATH" HOME="$HOME" REMOTE=1 sh -c "$*"' >agent.sh
chmod +x agent.sh
printf '%s\n' "localhost slots=8" "remotehost slots=8" >hosts
# shellcheck disable=SC2016 # the rank's own variables
printf '%s\n' '#!/bin/sh' 'echo "rank $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE remote=${REMOTE:-0}"' >where.sh
chmod +x where.sh
expect_exit 0 "mpirun.sh across 2 hosts, 1 rank each" -- env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
    HOSTFILE="$TEST_TMP/hosts" NP=2 TOPOTUNE_PPN=1 TOPOTUNE_PYTHON=python3 timeout 120 "$p/launch/mpirun.sh" "$TEST_TMP/where.sh"
check "one rank per host" bash -c "grep -qx 'rank 0/2 remote=0' '$TEST_TMP/out' && grep -qx 'rank 1/2 remote=1' '$TEST_TMP/out'"
expect_stderr_has "this job runs 2 node(s) x 2 ranks" "2 nodes x 1 rank: the table fits no communicator"

# Measured on 2 nodes: the templates ask for 2, torchrun.sh needs the rendezvous to start them.
"$TOPOTUNE" -q sweep --topology "$spec" --nodes 2 --space space.json --out two >/dev/null 2>&1 || true
expect_exit 0 "gen (2 nodes)" -- "$TOPOTUNE" gen --runs two --profiles p2
p2=$(echo "$TEST_TMP"/p2/*/latest)
check "sbatch.sh asks for the 2 nodes measured" grep -qx '#SBATCH --nodes=2' "$p2/launch/sbatch.sh"
check "pytorchjob.yaml: a Master and one Worker of 8 ranks and GPUs each" python3 - "$p2/launch/pytorchjob.yaml" <<'PY'
import sys, yaml
specs = yaml.safe_load(open(sys.argv[1]))["spec"]["pytorchReplicaSpecs"]
assert specs["Master"]["replicas"] == 1 and specs["Worker"]["replicas"] == 1, specs
for s in specs.values():
    c = s["template"]["spec"]["containers"][0]
    assert "--nproc_per_node=8" in c["command"] and c["resources"]["limits"]["nvidia.com/gpu"] == 8, c
PY
expect_exit 2 "torchrun.sh: 2 nodes need a rendezvous" -- env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false \
    "$p2/launch/torchrun.sh" -- train.py
expect_stderr_has "measured on 2; --nnodes 1" "says how to run one node alone"
# torchrun's own spellings (--name=value, underscores) are options, not the program; every node
# of a job outside Slurm names one rendezvous (each made up its own: none ever started).
run2() { env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false "$p2/launch/torchrun.sh" "$@"; }
expect_exit 0 "torchrun.sh --nnodes=2 --node_rank=1 --rdzv-endpoint=head:29400" -- \
    run2 --nnodes=2 --node_rank=1 --rdzv-endpoint=head:29400 -- train.py
check "2 nodes, node rank 1, the rendezvous every node names" grep -q -- \
    '--nnodes 2 --node_rank 1 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint head:29400 --rdzv_id topotune train.py' \
    "$TEST_TMP/out"
expect_exit 2 "an option torchrun.sh does not know" -- run2 --bogus 1 -- train.py
expect_stderr_has "unknown option '--bogus'" "named"
expect_exit 2 "an option without its value" -- run2 --nnodes
expect_stderr_has "--nnodes needs a value" "named"
# A job of thousands of nodes: the first of scontrol's list (head closed the pipe on it, and
# pipefail ended the script without a word).
printf '%s\n' '#!/bin/sh' 'seq -f "node%05g" 20000' >bin/scontrol
printf '%s\n' '#!/bin/sh' 'echo "srun $*"' >bin/srun
chmod +x bin/scontrol bin/srun
expect_exit 0 "torchrun.sh under a 20,000-node allocation" -- env PATH="$TEST_TMP/bin:$PATH" \
    SLURM_JOB_NODELIST='node[00001-20000]' SLURM_NNODES=2 SLURM_NODEID=1 SLURM_JOB_ID=77 \
    TOPOTUNE_PYTHON=false "$p2/launch/torchrun.sh" -- train.py
check "its first node the rendezvous" grep -q -- '--rdzv_endpoint node00001:29400 --rdzv_id 77 ' "$TEST_TMP/out"
expect_exit 0 "sbatch.sh under a 20,000-node allocation" -- env PATH="$TEST_TMP/bin:$PATH" \
    SLURM_JOB_NODELIST='node[00001-20000]' SLURM_NNODES=2 SLURM_JOB_ID=77 TOPOTUNE_PYTHON=false \
    "$p2/launch/sbatch.sh" train.py
check "srun starts torchrun.sh with the first node" grep -q -- '--rdzv-endpoint node00001:29400 --rdzv-id 77 -- train.py' \
    "$TEST_TMP/out"
# A job's container whose scontrol cannot answer (or that has none): the rendezvous is asked for
# (set -e ended the script on scontrol's failure, "command not found" its only word).
mkdir -p nobin
printf '%s\n' '#!/bin/sh' 'echo "scontrol: error: Unable to contact slurm controller" >&2' 'exit 1' >nobin/scontrol
chmod +x nobin/scontrol
expect_exit 2 "torchrun.sh where scontrol fails" -- env PATH="$TEST_TMP/nobin:$PATH" \
    SLURM_JOB_NODELIST='node[1-2]' SLURM_NNODES=2 SLURM_NODEID=1 SLURM_JOB_ID=77 \
    TOPOTUNE_PYTHON=false "$p2/launch/torchrun.sh" -- train.py
expect_stderr_has "--rdzv-endpoint HOST:PORT is needed for 2 nodes" "the rendezvous asked for"

# Every emitted script passes shellcheck, every YAML yamllint (where installed) and a YAML parser.
for sh in "$p"/launch/*.sh "$p2"/launch/*.sh; do
    check "shellcheck $sh" shellcheck "$sh"
done
for y in "$p/launch/pytorchjob.yaml" "$p2/launch/pytorchjob.yaml"; do
    check "yaml parses: $y" python3 -c 'import sys, yaml; yaml.safe_load(open(sys.argv[1]))' "$y"
    if command -v yamllint >/dev/null; then
        check "yamllint $y" yamllint --strict -d '{extends: default, rules: {line-length: disable}}' "$y"
    fi
done
# GB200 NVL72: 18 hosts of 4 GPUs in one NVLink domain, which NCCL counts as one node, as the
# table's rows do ("1,72"): the measured shape itself was warned about as 18 node(s) that no row
# fits. The same forced Tree row, at 18 hosts.
"$TOPOTUNE" -q sweep --topology "$TOPOTUNE_SRC/profiles/specs/gb200-nvl72.json" --space space.json \
    --nodes 18 --out plain72 || true
force plain72 forced72
expect_exit 0 "gen (GB200 NVL72 rows)" -- "$TOPOTUNE" gen --runs forced72 --profiles p72
p72=$(echo "$TEST_TMP"/p72/*/latest)
check "its row: one NCCL node of 72 ranks" grep -q '^allreduce,.*,1,72,tree,' "$p72/tuner-table.txt"
run72() { env PATH="$TEST_TMP/bin:$PATH" TOPOTUNE_PYTHON=false "$p72/launch/torchrun.sh" "$@"; }
expect_exit 0 "torchrun.sh on the 18 hosts measured" -- run72 --rdzv-endpoint h0:29500 -- train.py
check "no warning for the measured shape" bash -c "! grep -q 'per-size table' '$TEST_TMP/err'"
expect_exit 0 "torchrun.sh on 9 hosts" -- env TOPOTUNE_NODES=9 PATH="$TEST_TMP/bin:$PATH" \
    TOPOTUNE_PYTHON=false "$p72/launch/torchrun.sh" --rdzv-endpoint h0:29500 -- train.py
expect_stderr_has "this job runs 9 hosts (1 node(s) as NCCL counts NVLink domains) x 36 ranks" \
    "another shape warned about, as NCCL counts it"
# A profile that sets one of PyTorch's variables the PyTorchJob also sets: one entry, the
# profile's value (a name listed twice is refused by server-side apply).
sed 's/"vars": {"NCCL_ALGO": \[null, "Tree"\]}/"vars": {"TORCH_NCCL_ASYNC_ERROR_HANDLING": [null, "3"]}/' \
    space.json >torch.json
"$TOPOTUNE" -q sweep --topology "$spec" --space torch.json --out torch || true
# faster SWEEP: every configuration but the defaults twice as fast.
faster() {
    python3 - "$1/results.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for r in runs:
    for s in r["sizes"] if r["env"] else []:
        s["busbw"] *= 2
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in runs))
PY
}
faster torch
expect_exit 0 "gen (a PyTorch variable)" -- "$TOPOTUNE" gen --runs torch --profiles ptorch
check "the PyTorchJob names each variable once, the profile's value" python3 - \
    "$(echo "$TEST_TMP"/ptorch/*/latest)/launch/pytorchjob.yaml" <<'PY'
import sys, yaml
(job,) = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
env = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["env"]
names = [e["name"] for e in env]
assert len(names) == len(set(names)), names
assert {e["name"]: e["value"] for e in env}["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "3", env
PY
# The check DaemonSet of a class keeps one name across versions: v2's manifest replaces v1's. Named
# per version, both ran on the same nodes against different bands, writing one metrics file.
expect_exit 0 "gen v1" -- "$TOPOTUNE" gen --runs forced --profiles versions
expect_exit 0 "gen v2 of the class" -- "$TOPOTUNE" gen --runs torch --profiles versions
check "one DaemonSet name for v1 and v2" python3 - versions <<'PY'
import glob, sys, yaml
names = set()
for f in sorted(glob.glob(sys.argv[1] + "/*/v[12]/launch/check-daemonset.yaml")):
    (d,) = [x for x in yaml.safe_load_all(open(f)) if x]
    names.add(d["metadata"]["name"])
assert len(names) == 1 and len(glob.glob(sys.argv[1] + "/*/v2")) == 1, names
PY
# A per-node variable (NCCL_IB_HCA names one node's devices): the image and the pod spec, which
# every node shares, pinned the measured node's value; they now say where each node's comes from.
sed 's/"vars": {"NCCL_ALGO": \[null, "Tree"\]}/"vars": {"NCCL_IB_HCA": [null, "=mlx5_0:1"]}/' space.json >hca.json
"$TOPOTUNE" -q sweep --topology "$spec" --space hca.json --out hca || true
faster hca
expect_exit 0 "gen (NCCL_IB_HCA)" -- "$TOPOTUNE" gen --runs hca --profiles phca
hca=$(echo "$TEST_TMP"/phca/*/latest)
check "the profile sets it" grep -q "NCCL_IB_HCA" "$hca/nccl.env"
check "the image pins no NCCL_IB_HCA, and says why" bash -c "! grep -q '^ENV NCCL_IB_HCA' '$hca/launch/Dockerfile.fragment' &&
    grep -q '^# NCCL_IB_HCA: per node' '$hca/launch/Dockerfile.fragment'"
check "nor nccl.conf, which the image points NCCL_CONF_FILE at" bash -c "! grep -q '^NCCL_IB_HCA=' '$hca/nccl.conf' &&
    grep -q '^# NCCL_IB_HCA: per node' '$hca/nccl.conf'"
check "nor the PyTorchJob" python3 - "$hca/launch/pytorchjob.yaml" <<'PY'
import sys, yaml
(job,) = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
env = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["env"]
assert "NCCL_IB_HCA" not in [e["name"] for e in env], env
PY
# whose command is a bare torchrun: its note says the pod does not set it (it said "as the
# launch scripts do", which no command of the pod did)
check "the PyTorchJob's note says it is not set there, and how to" bash -c "
    grep -q '# NCCL_IB_HCA: per node (its measured value is one node.s): not set here' '$hca/launch/pytorchjob.yaml' &&
    grep -q \"start the command through 'topotune env --node --profile\" '$hca/launch/pytorchjob.yaml'"
# The caller's own value of a profile variable wins, said (the scripts overwrote it, and no
# variable could be set otherwise to chase a problem): per node too, on this node and on a
# remote rank of mpirun.sh, which resolves the others on its own node.
mkdir -p hcabin
# shellcheck disable=SC2016 # the stand-in's own variable
printf '%s\n' '#!/bin/sh' 'echo "hca=${NCCL_IB_HCA:-unset}"' >hcabin/torchrun
chmod +x hcabin/torchrun
expect_exit 0 "torchrun.sh, the caller's NCCL_IB_HCA" -- env PATH="$TEST_TMP/hcabin:$PATH" TOPOTUNE="$TOPOTUNE" \
    TOPOTUNE_PYTHON=false NCCL_IB_HCA==mlx5_9 "$hca/launch/torchrun.sh" -- train.py
check "the caller's value reached torchrun" grep -qx 'hca==mlx5_9' "$TEST_TMP/out"
expect_stderr_has "note: NCCL_IB_HCA==mlx5_9 from the environment, not the profile's" "said"
# the profile's own value in the caller's shell (nccl.env sourced there) is the profile's: this
# node's is resolved (none here: no InfiniBand), and nothing is said (it was kept, silently)
expect_exit 0 "torchrun.sh, the profile's own NCCL_IB_HCA in the shell" -- env PATH="$TEST_TMP/hcabin:$PATH" \
    TOPOTUNE="$TOPOTUNE" TOPOTUNE_PYTHON=false NCCL_IB_HCA==mlx5_0:1 "$hca/launch/torchrun.sh" -- train.py
check "this node's resolved (unset here), not kept" grep -qx 'hca=unset' "$TEST_TMP/out"
check "no note of a caller's value" bash -c "! grep -q 'from the environment' '$TEST_TMP/err'"
# shellcheck disable=SC2016 # the rank's own variables
printf '%s\n' '#!/bin/sh' 'echo "rank $OMPI_COMM_WORLD_RANK remote=${REMOTE:-0} hca=${NCCL_IB_HCA:-unset}"' >hca-rank.sh
chmod +x hca-rank.sh
expect_exit 0 "mpirun.sh across 2 hosts, the caller's NCCL_IB_HCA" -- env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" \
    HOSTFILE="$TEST_TMP/hosts" NP=2 TOPOTUNE_PPN=1 TOPOTUNE_PYTHON=python3 TOPOTUNE="$TOPOTUNE" NCCL_IB_HCA==mlx5_9 \
    timeout 120 "$hca/launch/mpirun.sh" "$TEST_TMP/hca-rank.sh"
check "both ranks, local and remote, have it" test "$(grep -c '^rank [01] remote=[01] hca==mlx5_9$' "$TEST_TMP/out")" -eq 2
# topotune bench across 2,000 hosts: a list over 32 KiB goes in a hostfile (one argument of 128 KiB is
# refused), which a SIGTERM on its way out removes (the command had no handler: it stayed).
mkdir -p fakebin tmp
printf '%s\n' '#!/bin/sh' 'exec sleep 100' >fakebin/mpirun
chmod +x fakebin/mpirun
many=$(seq -f 'gpu-rack-node%05g' 1 2000 | paste -sd,)
env PATH="$TEST_TMP/fakebin:$PATH" TMPDIR="$TEST_TMP/tmp" "$TOPOTUNE" bench --backend mpi --launcher mpirun \
    --hosts "$many" --np 2000 -b 8 -e 8 >/dev/null 2>&1 &
pid=$!
hostfile_made() { [ -n "$(find tmp -name 'topotune-hosts-*')" ]; }
poll 100 0.1 hostfile_made
check "the hostfile written" hostfile_made
kill -TERM "$pid"
wait "$pid"
check "SIGTERM: exit 143" test $? = 143
check "SIGTERM: the hostfile removed" test -z "$(find tmp -name 'topotune-hosts-*')"
finish
