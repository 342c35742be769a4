#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Generated launch files used the way their real clients use them: mpirun.sh under Open MPI
# forwards exactly what it exports (no warning for unset names, the flight recorder included);
# sbatch.sh run from a copy elsewhere (Slurm's spool) finds its profile; the Dockerfile fragment
# sets the profile's variables as nccl.env does; an MPI profile names Open MPI's defaults; gens
# racing on one root each take a version.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

# An MPI sweep of this machine (real ranks) and its profile.
expect_exit 0 "mpi sweep" -- "$TOPOTUNE" sweep --backend mpi --np 2 --space "$TOPOTUNE_FIXTURES/space-mpi-tiny.json" --out mpi
expect_exit 0 "gen" -- "$TOPOTUNE" gen --runs mpi --profiles profiles
dir=$(find "$TEST_TMP/profiles" -mindepth 2 -maxdepth 2 -name v1 | head -1)
check "the profile says which backend it measured" python3 - "$dir/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["backend"] == "mpi", p["backend"]
text = json.dumps(p)
assert "NCCL defaults" not in text and "NCCL's defaults" not in text, p["summary"]
PY
check "nccl.env does not credit NCCL for Open MPI's defaults" bash -c "! grep -q \"NCCL's defaults\" '$dir/nccl.env'"

# What an mpi sweep measured: Open MPI's collectives on 2 CPU ranks of one node. NCCL never ran
# (the installed libnccl's version is no evidence) and no GPU is needed to start it again.
check "the mpi profile records no NCCL version, and the shape it ran" python3 - "$dir/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["software"] is None or p["software"]["nccl"] is None, p["software"]
assert (p["sweep"]["nodes"], p["sweep"]["ranks"]) == (1, 2), p["sweep"]
PY
check "no file of the mpi profile says NCCL measured it" bash -c "! grep -rl '^# measured with NCCL' '$dir'"
check "its scripts name the MPI that measured it" grep -q '^# measured with Open MPI' "$dir/launch/mpirun.sh"
check "sbatch.sh asks for no GPU" bash -c "! grep -q 'gpus' '$dir/launch/sbatch.sh'"
check "sbatch.sh asks for the one node measured" grep -qx '#SBATCH --nodes=1' "$dir/launch/sbatch.sh"
check "pytorchjob.yaml: no GPU, one pod of 2 ranks" python3 - "$dir/launch/pytorchjob.yaml" <<'PY'
import sys, yaml
specs = yaml.safe_load(open(sys.argv[1]))["spec"]["pytorchReplicaSpecs"]
assert list(specs) == ["Master"] and specs["Master"]["replicas"] == 1, specs.keys()
c = specs["Master"]["template"]["spec"]["containers"][0]
assert "resources" not in c, c.get("resources")
assert "--nproc_per_node=2" in c["command"], c["command"]
PY
# shellcheck disable=SC2016 # the rank's own variables
printf '%s\n' '#!/bin/sh' 'echo "rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE"' >rank.sh
chmod +x rank.sh
expect_exit 0 "mpirun.sh of the mpi profile, no NP" -- env -u NP TOPOTUNE_PYTHON=python3 "$dir/launch/mpirun.sh" "$TEST_TMP/rank.sh"
check "it starts the 2 ranks per node that were measured" test "$(grep -c '^rank [01] of 2$' "$TEST_TMP/out")" -eq 2

# A remote rank gets every NCCL_* variable the local ranks have, the caller's own too (a rank
# without the NCCL_SOCKET_IFNAME or NCCL_IB_HCA the others use picks other interfaces and
# hangs). The second host: Open MPI starts its daemon through this agent with a clean
# environment, as ssh gives one.
# shellcheck disable=SC2016 # the agent's own variables
printf '%s\n' '#!/bin/sh' 'shift' 'exec env -i PATH="$PATH" HOME="$HOME" REMOTE=1 sh -c "$*"' >agent.sh
chmod +x agent.sh
printf '%s\n' "localhost slots=2" "remotehost slots=2" >hosts
# shellcheck disable=SC2016 # the rank's own variables
printf '%s\n' '#!/bin/sh' \
    'echo "rank $OMPI_COMM_WORLD_RANK remote=${REMOTE:-0} ifname=${NCCL_SOCKET_IFNAME:-unset} hca=${NCCL_IB_HCA:-unset} conf=${NCCL_CONF_FILE:+set}"' \
    'echo "rank $OMPI_COMM_WORLD_RANK fi=${FI_PROVIDER:-unset} ucx=${UCX_TLS:-unset} torch=${TORCH_DISTRIBUTED_DEBUG:-unset} cuda=${CUDA_DEVICE_MAX_CONNECTIONS:-unset} visible=${CUDA_VISIBLE_DEVICES:-unset}"' \
    >where.sh
chmod +x where.sh
expect_exit 0 "mpirun.sh across 2 hosts, the caller's NCCL_SOCKET_IFNAME and NCCL_IB_HCA set" -- \
    env OMPI_MCA_plm_rsh_agent="$TEST_TMP/agent.sh" HOSTFILE="$TEST_TMP/hosts" NP=2 TOPOTUNE_PPN=1 \
    NCCL_SOCKET_IFNAME=lo NCCL_IB_HCA=mlx5_0 NCCL_CONF_FILE=/etc/site-nccl.conf TOPOTUNE_PYTHON=python3 \
    FI_PROVIDER=efa UCX_TLS=rc TORCH_DISTRIBUTED_DEBUG=DETAIL CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_VISIBLE_DEVICES=3 \
    timeout 120 "$dir/launch/mpirun.sh" "$TEST_TMP/where.sh"
check "one rank on each host" bash -c "grep -q '^rank 0 remote=0 ' '$TEST_TMP/out' && grep -q '^rank 1 remote=1 ' '$TEST_TMP/out'"
check "both ranks, local and remote, have them (the caller's NCCL_CONF_FILE too)" \
    test "$(grep -c '^rank [01] remote=[01] ifname=lo hca=mlx5_0 conf=set$' "$TEST_TMP/out")" -eq 2
check "the remote rank has the caller's libfabric, UCX, PyTorch and CUDA settings, not its GPUs" \
    grep -qx 'rank 1 fi=efa ucx=rc torch=DETAIL cuda=1 visible=unset' "$TEST_TMP/out"
# As root (a container's user) without Open MPI's own permission: mpirun.sh gives it.
if [ "$(id -u)" = 0 ]; then
    expect_exit 0 "mpirun.sh as root, OMPI_ALLOW_RUN_AS_ROOT unset" -- env -u OMPI_ALLOW_RUN_AS_ROOT \
        -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM NP=1 TOPOTUNE_PYTHON=python3 "$dir/launch/mpirun.sh" "$TEST_TMP/rank.sh"
    # Open MPI wants both of its variables: one alone was taken for its permission
    expect_exit 0 "mpirun.sh as root, OMPI_ALLOW_RUN_AS_ROOT alone" -- env -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
        NP=1 TOPOTUNE_PYTHON=python3 "$dir/launch/mpirun.sh" "$TEST_TMP/rank.sh"
fi

# A profile with variables: the 4090's, where P2P hangs (sim), for the launch files below.
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "64K", "max": "64M", "factor": 8},
 "objective": {"min": "1M", "max": "64M"}, "vars": {"NCCL_P2P_DISABLE": [null, "1"]},
 "repeat": 2, "iters": 5, "warmup": 1, "timeout_s": 2}' >space.json
"$TOPOTUNE" -q sweep --topology "$TOPOTUNE_SRC/profiles/specs/rtx4090-8x-pcie.json" --space space.json --out rtx || true
expect_exit 0 "gen (4090)" -- "$TOPOTUNE" gen --runs rtx --profiles profiles
dir=$(find "$TEST_TMP/profiles" -mindepth 2 -maxdepth 2 -name v1 -path '*rtx*' | head -1)
check "the 4090 profile sets a variable" grep -q '^export NCCL_P2P_DISABLE=' "$dir/nccl.env"

# The NCCL-version guard asks the Python torchrun runs under, whatever its shebang: through
# `env` (a virtualenv's or conda's torchrun), or pip's /bin/sh trampoline for a long path.
cp -r rtx rtx-nccl
python3 - rtx-nccl/sweep.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["versions"]["nccl"] = "2.28.9"  # as a sweep on a GPU node records it
json.dump(d, open(sys.argv[1], "w"))
PY
expect_exit 0 "gen (NCCL 2.28.9)" -- "$TOPOTUNE" gen --runs rtx-nccl --profiles vprofiles
vdir=$(echo "$TEST_TMP"/vprofiles/*/latest)
mkdir -p fakebin "long dir"
# shellcheck disable=SC2016 # the fake Python's own $2
printf '%s\n' '#!/bin/sh' '# a Python whose PyTorch 2.3.0 runs NCCL 2.18.1, asked for both at once' \
    'case "$2" in *nccl.version*__version__*) echo 2.18.1/2.3.0 ;; esac' >fakebin/python3
cp fakebin/python3 "long dir/python3.11"
chmod +x fakebin/python3 "long dir/python3.11"
for shebang in '#!/usr/bin/env python3' '#!/usr/bin/env -S python3 -u'; do
    printf '%s\n' "$shebang" 'raise SystemExit(0)' >fakebin/torchrun
    chmod +x fakebin/torchrun
    expect_exit 3 "NCCL guard, torchrun's shebang '$shebang'" -- env PATH="$TEST_TMP/fakebin:$PATH" \
        "$vdir/launch/torchrun.sh" -- train.py
    expect_stderr_has "measured with NCCL 2.28.9 but this runs NCCL 2.18.1" "the guard named both versions"
done
# shellcheck disable=SC2016 # the trampoline's own "$0" "$@"
printf '%s\n' '#!/bin/sh' "'''exec' \"$TEST_TMP/long dir/python3.11\""' "$0" "$@"' "' '''" 'raise SystemExit(0)' \
    >fakebin/torchrun
expect_exit 3 "NCCL guard, pip's trampoline" -- env PATH="$TEST_TMP/fakebin:$PATH" "$vdir/launch/torchrun.sh" -- train.py
expect_stderr_has "but this runs NCCL 2.18.1" "the guard asked the trampoline's Python"
# mpirun.sh judged a binary's NCCL (nccl-tests', linked to the system's) by PyTorch's: refused
# here for PyTorch's 2.18.1. A Python program is checked; another is said to be unchecked.
expect_exit 0 "mpirun.sh, a binary" -- env PATH="$TEST_TMP/fakebin:$PATH" NP=1 "$vdir/launch/mpirun.sh" /bin/true
expect_stderr_has "/bin/true is not Python: the NCCL it loads is its own" "said"
expect_exit 3 "mpirun.sh, a Python program" -- env PATH="$TEST_TMP/fakebin:$PATH" NP=1 \
    "$vdir/launch/mpirun.sh" python3 train.py
expect_stderr_has "measured with NCCL 2.28.9 but this runs NCCL 2.18.1" "PyTorch's NCCL checked"
# a console script on PATH (deepspeed, accelerate), and pip's trampoline, are Python by their shebang
printf '%s\n' '#!/usr/bin/env python3' 'raise SystemExit(0)' >fakebin/deepspeed
chmod +x fakebin/deepspeed
expect_exit 3 "mpirun.sh, a console script on PATH" -- env PATH="$TEST_TMP/fakebin:$PATH" NP=1 \
    "$vdir/launch/mpirun.sh" deepspeed train.py
expect_exit 3 "mpirun.sh, pip's trampoline" -- env PATH="$TEST_TMP/fakebin:$PATH" NP=1 \
    "$vdir/launch/mpirun.sh" fakebin/torchrun train.py

# mpirun.sh under real Open MPI: ranks print their environment.
cat >show-env.sh <<'EOF'
#!/bin/sh
env | grep -E '^(NCCL_|TORCH_NCCL_|OMPI_MCA_btl=)' | sort
EOF
chmod +x show-env.sh
expect_exit 0 "mpirun.sh runs" -- env NP=2 TOPOTUNE_PYTHON=python3 "$dir/launch/mpirun.sh" "$TEST_TMP/show-env.sh"
check "no warning about an environment variable mpirun could not find" bash -c "! grep -qi 'could not find environment variable' '$TEST_TMP/err'"
check "each rank has what the script exported" python3 - "$TEST_TMP/out" "$dir/nccl.env" <<'PY'
import re, sys
seen = open(sys.argv[1]).read().splitlines()
# NCCL_CONF_FILE stays the caller's (unset here): set, NCCL reads it instead of ~/.nccl.conf
assert not any(l.startswith("NCCL_CONF_FILE=") for l in seen), seen
exported = re.findall(r"^export ([A-Z_a-z0-9]+)=", open(sys.argv[2]).read(), re.M)
for name in exported:
    assert sum(l.startswith(name + "=") for l in seen) == 2, (name, seen)
# the error handling under the name this PyTorch reads, forwarded when set
assert any(l.startswith("NCCL_ASYNC_ERROR_HANDLING=") or l.startswith("TORCH_NCCL_ASYNC_ERROR_HANDLING=") for l in seen), seen
PY
expect_exit 0 "the flight recorder's settings reach the ranks when exported" -- env NP=1 TOPOTUNE_PYTHON=python3 \
    TORCH_NCCL_TRACE_BUFFER_SIZE=123 TORCH_NCCL_DUMP_ON_TIMEOUT=1 "$dir/launch/mpirun.sh" "$TEST_TMP/show-env.sh"
check "TORCH_NCCL_TRACE_BUFFER_SIZE forwarded" grep -q '^TORCH_NCCL_TRACE_BUFFER_SIZE=123$' "$TEST_TMP/out"
check "TORCH_NCCL_DUMP_ON_TIMEOUT forwarded" grep -q '^TORCH_NCCL_DUMP_ON_TIMEOUT=1$' "$TEST_TMP/out"

# sbatch.sh as Slurm runs it: a copy in a spool directory, srun and scontrol on PATH.
mkdir -p spool bin
cp "$dir/launch/sbatch.sh" spool/slurm_script
printf '#!/bin/sh\necho "srun $*" >>"%s/srun.log"\n' "$TEST_TMP" >bin/srun
printf '#!/bin/sh\necho node1\n' >bin/scontrol
chmod +x bin/srun bin/scontrol
expect_exit 0 "sbatch.sh from Slurm's spool, no TOPOTUNE_PROFILE" -- env -u TOPOTUNE_PROFILE PATH="$TEST_TMP/bin:$PATH" \
    SLURM_JOB_NODELIST=node1 SLURM_NNODES=1 SLURM_JOB_ID=7 bash spool/slurm_script train.py
check "srun starts the profile's torchrun.sh where gen wrote it" grep -qF "$dir/launch/torchrun.sh" srun.log
mv "$dir" "$TEST_TMP/moved"
expect_exit 2 "a moved profile: a clear error" -- env -u TOPOTUNE_PROFILE PATH="$TEST_TMP/bin:$PATH" \
    SLURM_JOB_NODELIST=node1 SLURM_NNODES=1 SLURM_JOB_ID=7 bash spool/slurm_script train.py
expect_stderr_has "set TOPOTUNE_PROFILE" "says how to point at it"
expect_exit 0 "TOPOTUNE_PROFILE still wins" -- env TOPOTUNE_PROFILE="$TEST_TMP/moved" PATH="$TEST_TMP/bin:$PATH" \
    SLURM_JOB_NODELIST=node1 SLURM_NNODES=1 SLURM_JOB_ID=7 bash spool/slurm_script train.py
mv "$TEST_TMP/moved" "$dir"

# The Dockerfile fragment sets every variable of nccl.env, with the same values.
check "Dockerfile ENV lines agree with nccl.env" python3 - "$dir/launch/Dockerfile.fragment" "$dir/nccl.env" <<'PY'
import re, shlex, sys
docker = {k: v[1:-1] if v.startswith('"') else v
          for k, v in re.findall(r'^ENV ([A-Za-z_0-9]+)=(.*)$', open(sys.argv[1]).read(), re.M)}
env = {m[0]: shlex.split(m[1])[0] for m in re.findall(r"^export ([A-Za-z_0-9]+)=(\S+)", open(sys.argv[2]).read(), re.M)}
assert env, "nccl.env sets nothing: the check would be empty"
for k, v in env.items():
    assert docker.get(k) == v, (k, v, docker)
assert docker["NCCL_CONF_FILE"] == "/opt/topotune/profile/nccl.conf"
PY

# nccl.conf holds NCCL's variables only: NCCL sets the rest at its own init, after Open MPI
# read its own (the mpi sweep with self,vader made 3x as fast, the winner). Every repetition of
# a configuration gets the same numbers: two real runs on a loaded machine can differ by more
# than the space's cv_max, and gen rightly chose no configuration that unstable.
mkdir -p forced && cp mpi/sweep.json forced/
python3 - mpi/results.jsonl forced/results.jsonl <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        r = json.loads(line)
        for s in r["sizes"]:
            s["busbw"] = s["algbw"] = 3.0 if r["env"] else 1.0
            s["time_us"] = s["size"] / (s["algbw"] * 1e3)
        out.write(json.dumps(r) + "\n")
PY
expect_exit 0 "gen, self,vader the winner" -- "$TOPOTUNE" gen --runs forced --profiles forced-profiles
fdir=$(find "$TEST_TMP/forced-profiles" -mindepth 2 -maxdepth 2 -name v1 | head -1)
check "nccl.env sets OMPI_MCA_btl" grep -q "^export OMPI_MCA_btl='self,vader'" "$fdir/nccl.env"
check "nccl.conf does not, and says where it is set" bash -c "! grep -q '^OMPI_MCA_btl=' '$fdir/nccl.conf' &&
    grep -q '^# OMPI_MCA_btl: not NCCL' '$fdir/nccl.conf'"

# Gens racing on one root, each with other content (its own sweep copy): each a version, and
# latest on the newest (they shared one temporary link, and one failed, or pointed latest back
# at its older version, which the shim below makes happen).
for n in a b c d e f; do cp -r mpi "race-$n"; done
for n in a b c d e f; do "$TOPOTUNE" -q gen --runs "race-$n" --profiles race >"gen-$n.out" 2>"gen-$n.err" & done
codes=0
for job in $(jobs -p); do wait "$job" || codes=$((codes + 1)); done
check "every racing gen succeeded" test "$codes" -eq 0
check "each took its own version" test "$(find race -mindepth 2 -maxdepth 2 -name 'v[0-9]*' | wc -l)" -eq 6
check "latest on the newest" test "$(readlink "$(find race -mindepth 2 -maxdepth 2 -name latest)")" = v6
check "no leftover temporary" test -z "$(find race -name '.*tmp*' | head -1)"
cat gen-*.err >&2
# Two gens meeting where they point latest: a shim holds each symlink() of a temporary link until
# the other arrives (2 s at most). Unlocked, sharing the name .latest.tmp, their renames crossed
# and latest was left on v1 beside v2 (or one gen's link stood in the other's way, and it failed
# after writing its version). Locked, the second waits for the first, which the shim lets go.
if command -v cc >/dev/null; then
    cat >meet.c <<'C'
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int arrived(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, "in.", 3) == 0;
    if (d)
        closedir(d);
    return n;
}
int symlink(const char *target, const char *path)
{
    const char *dir = getenv("MEET_DIR");
    if (dir && strstr(path, ".latest.tmp")) {
        char mine[4096];
        snprintf(mine, sizeof(mine), "%s/in.%d", dir, (int)getpid());
        FILE *f = fopen(mine, "w");
        if (f)
            fclose(f);
        struct timespec t = {0, 10000000};
        for (int i = 0; i < 200 && arrived(dir) < 2; i++)
            nanosleep(&t, NULL);
    }
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "symlink");
    return real(target, path);
}
C
    cc -shared -fPIC -o meet.so meet.c -ldl
    mkdir -p meet
    for n in a b; do
        env MEET_DIR="$TEST_TMP/meet" LD_PRELOAD="$TEST_TMP/meet.so${LD_PRELOAD:+:$LD_PRELOAD}" \
            "$TOPOTUNE" -q gen --runs "race-$n" --profiles met >"gen-$n.out" 2>"gen-$n.err" &
    done
    codes=0
    for job in $(jobs -p); do wait "$job" || codes=$((codes + 1)); done
    check "two gens meeting at latest: both succeeded ($(cat gen-a.err gen-b.err))" test "$codes" -eq 0
    check "two gens meeting at latest: latest on v2" \
        test "$(readlink "$(find met -mindepth 2 -maxdepth 2 -name latest)")" = v2
fi
# The lock is a file of the class folder: one planted as a link is not followed, and gen goes on
# unlocked, saying so (as where a filesystem refuses locks), rather than fail after writing.
lockdir=$(dirname "$(find race -mindepth 2 -maxdepth 2 -name latest)")
# the temporary links of gens that died before their rename (the old shared name too) are
# removed by the next gen that holds the lock; they stayed for good
ln -s v1 "$lockdir/.latest.tmp"
ln -s v2 "$lockdir/.latest.tmp-deadhost-12345"
cp -r mpi race-h
expect_exit 0 "gen beside dead gens' temporary links" -- "$TOPOTUNE" gen --runs race-h --profiles race
check "their links removed" test -z "$(find "$lockdir" -name '.latest.tmp*' | head -1)"
rm -f "$lockdir/.lock"
echo untouched >victim
ln -s "$TEST_TMP/victim" "$lockdir/.lock"
cp -r mpi race-g
expect_exit 0 "gen with a planted .lock link" -- "$TOPOTUNE" gen --runs race-g --profiles race
expect_stderr_has "cannot lock" "said"
check "the link not followed" test "$(cat victim)" = untouched
check "latest on the new version" test "$(readlink "$lockdir/latest")" = v8

finish
