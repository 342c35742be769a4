/* SPDX-License-Identifier: MIT */
/*
 * Shell launch templates: launch/torchrun.sh (single and multi-node, c10d
 * rendezvous, node rank from Slurm or flags), launch/sbatch.sh (one torchrun
 * per node through srun) and launch/mpirun.sh (-x for every NCCL variable set).
 * Each starts the shape the profile was measured on unless told otherwise.
 */
#include "gen/internal.h"
#include "util/quote.h"

#include <string.h>

/* Where gen wrote this version (absolute), for scripts that run from a copy elsewhere. */
static const char *location(const json_t *profile)
{
    const char *dir = json_string_value(json_object_get(profile, "location"));
    return dir ? dir : "";
}

/* Bash lines refusing a count that is not a positive integer (names: shell variables). */
static void counts_check(struct util_buf *out, const char *names)
{
    util_buf_addf(out,
                  "for count in %s; do\n"
                  "    case $count in '' | *[!0-9]* | 0*) echo \"$0: node and rank counts are "
                  "positive integers, not '$count'\" >&2; exit 2 ;; esac\n"
                  "done\n",
                  names);
}

static int emit_torchrun(const json_t *profile, struct util_buf *out)
{
    struct gen_shape shape;
    gen_shape(profile, &shape);
    util_buf_adds(out, "#!/usr/bin/env bash\n");
    gen_header(profile, "launch/torchrun.sh", out);
    util_buf_addf(
        out,
        "# usage: torchrun.sh [--nnodes N] [--node-rank R] [--nproc-per-node P] "
        "[--rdzv-endpoint HOST:PORT]\n"
        "#                    [--rdzv-id ID] -- train.py [args]   (extra torchrun "
        "flags: TOPOTUNE_TORCHRUN_ARGS)\n"
        "# Defaults: the shape measured, %lld node(s) x %lld rank(s) per node (TOPOTUNE_NODES, "
        "TOPOTUNE_PPN;\n"
        "# under Slurm the job's node count); a table that fits no such communicator is a "
        "warning.\n"
        "# torchrun's flags are spelled with underscores, which every PyTorch release accepts.\n"
        "# torchrun starts the ranks and sets RANK, LOCAL_RANK and WORLD_SIZE: the "
        "script must not spawn its own.\n",
        shape.nodes, shape.ppn);
    gen_shell_prelude(profile, out);
    util_buf_addf(
        out,
        "nnodes=${SLURM_NNODES:-${TOPOTUNE_NODES:-%lld}}\n"
        "node_rank=${SLURM_NODEID:-0}\n"
        "nproc=${TOPOTUNE_PPN:-%lld}\n"
        "# every node of a job must name the same rendezvous: no per-process default\n"
        "rdzv_id=${SLURM_JOB_ID:-topotune}\n"
        "rdzv_endpoint=\n"
        "# --name VALUE or --name=VALUE, dashes or underscores (as torchrun spells them)\n"
        "while [ $# -gt 0 ]; do\n"
        "    name=${1%%%%=*}\n"
        "    case $1 in\n"
        "    --*=*) value=${1#*=}; step=1 ;;\n"
        "    *) value=${2-}; step=2 ;;\n"
        "    esac\n"
        "    case ${name//_/-} in\n"
        "    --nnodes) nnodes=$value ;;\n"
        "    --node-rank) node_rank=$value ;;\n"
        "    --nproc-per-node) nproc=$value ;;\n"
        "    --rdzv-endpoint) rdzv_endpoint=$value ;;\n"
        "    --rdzv-id) rdzv_id=$value ;;\n"
        "    --) shift; break ;;\n"
        "    -*) echo \"$0: unknown option '$1' (torchrun's own flags go in "
        "TOPOTUNE_TORCHRUN_ARGS; the program after --)\" >&2; exit 2 ;;\n"
        "    *) break ;;\n"
        "    esac\n"
        "    [ $# -ge \"$step\" ] || { echo \"$0: $1 needs a value\" >&2; exit 2; }\n"
        "    shift \"$step\"\n"
        "done\n"
        "[ $# -gt 0 ] || { echo \"usage: $0 [options] -- train.py [args]\" >&2; exit 2; }\n"
        "# the job's first node (the whole list read: head would close the pipe on scontrol);\n"
        "# a container of the job may have no scontrol: then --rdzv-endpoint is asked for\n"
        "if [ -z \"$rdzv_endpoint\" ] && [ -n \"${SLURM_JOB_NODELIST:-}\" ] &&\n"
        "    command -v scontrol >/dev/null 2>&1; then\n"
        "    first=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null | awk 'NR == 1') "
        "|| first=\n"
        "    [ -z \"$first\" ] || rdzv_endpoint=$first:29400\n"
        "fi\n",
        shape.nodes, shape.ppn);
    counts_check(out, "\"$nnodes\" \"$nproc\"");
    util_buf_addf(
        out,
        "shape_check \"$nnodes\" \"$((nnodes * nproc))\"\n"
        "read -r -a extra <<<\"${TOPOTUNE_TORCHRUN_ARGS:-}\"\n"
        "if [ \"$nnodes\" = 1 ]; then\n"
        "    exec torchrun --standalone --nnodes 1 --nproc_per_node \"$nproc\" "
        "${extra[@]+\"${extra[@]}\"} \"$@\"\n"
        "fi\n"
        "[ -n \"$rdzv_endpoint\" ] || { echo \"$0: --rdzv-endpoint HOST:PORT is needed for $nnodes "
        "nodes (the profile was measured on %lld; --nnodes 1: this node alone)\" >&2; exit 2; }\n"
        "exec torchrun --nnodes \"$nnodes\" --node_rank \"$node_rank\" --nproc_per_node \"$nproc\" "
        "\\\n"
        "    --rdzv_backend c10d --rdzv_endpoint \"$rdzv_endpoint\" --rdzv_id \"$rdzv_id\" "
        "${extra[@]+\"${extra[@]}\"} \"$@\"\n",
        shape.nodes);
    return 0;
}

static int emit_sbatch(const json_t *profile, struct util_buf *out)
{
    struct gen_shape shape;
    gen_shape(profile, &shape);
    util_buf_adds(out, "#!/usr/bin/env bash\n");
    util_buf_addf(out, "#SBATCH --nodes=%lld\n#SBATCH --ntasks-per-node=1\n", shape.nodes);
    if (shape.gpus > 0)
        util_buf_addf(out, "#SBATCH --gpus-per-node=%lld\n", shape.gpus);
    util_buf_adds(out, "#SBATCH --exclusive\n");
    gen_header(profile, "launch/sbatch.sh", out);
    util_buf_addf(
        out,
        "# usage: sbatch [--nodes=N] sbatch.sh train.py [args]   (TOPOTUNE_PROFILE=DIR: the "
        "profile elsewhere)\n"
        "# The #SBATCH lines ask for the shape measured, %lld node(s) x %lld rank(s) per node%s;\n"
        "# sbatch's own options win over them, TOPOTUNE_PPN sets the ranks per node. A table "
        "that\n"
        "# fits no communicator of the job is a warning before anything starts.\n"
        "# sbatch runs a copy of this script from its spool directory: the profile is found\n"
        "# through TOPOTUNE_PROFILE, else where topotune gen wrote it.\n"
        "# One torchrun per node, started by srun; torchrun starts the ranks of its node.\n"
        "set -euo pipefail\n",
        shape.nodes, shape.ppn, shape.gpus > 0 ? ", a GPU each" : "");
    util_buf_adds(out, "profile_dir=${TOPOTUNE_PROFILE:-");
    util_quote_shell(out, location(profile));
    util_buf_addf(
        out,
        "}\n"
        "if [ ! -f \"$profile_dir/nccl.env\" ]; then\n"
        "    echo \"$0: no profile at '$profile_dir': set TOPOTUNE_PROFILE to the profile "
        "directory (the one holding nccl.env)\" >&2\n"
        "    exit 2\n"
        "fi\n"
        "%s"
        "nodes=${SLURM_NNODES:-%lld}\n"
        "ppn=${TOPOTUNE_PPN:-%lld}\n",
        GEN_SHELL_RESOLVE, shape.nodes, shape.ppn);
    counts_check(out, "\"$nodes\" \"$ppn\"");
    gen_shape_check(out, &shape);
    util_buf_adds(
        out,
        "shape_check \"$nodes\" \"$((nodes * ppn))\"\n"
        "# memlock must be unlimited for RDMA registration\n"
        "ulimit -l unlimited 2>/dev/null || echo \"$0: warning: cannot raise the memlock limit "
        "(RDMA needs it unlimited)\" >&2\n"
        "# the whole list read: head would close the pipe on scontrol, which pipefail ends\n"
        "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | awk 'NR == 1')\n"
        "# through srun's environment (--export=ALL), so a comma in a path stays in it\n"
        "export TOPOTUNE_PROFILE=$profile_dir TOPOTUNE_SHAPE_CHECKED=1\n"
        "srun --ntasks-per-node=1 --export=ALL \\\n"
        "    \"$profile_dir/launch/torchrun.sh\" --nnodes \"$nodes\" --nproc-per-node \"$ppn\" \\\n"
        "    --rdzv-endpoint \"$head_node:29400\" --rdzv-id \"$SLURM_JOB_ID\" -- \"$@\"\n");
    return 0;
}

/* The families of variables mpirun.sh forwards whole (CUDA_VISIBLE_DEVICES excepted). */
static const char *const families[] = {"NCCL_", "TORCH_", "FI_", "UCX_", "CUDA_"};

static int fwd_name(const char *name, const char *value, const char *role, void *ctx)
{
    (void)value;
    (void)role;
    for (size_t i = 0; i < sizeof(families) / sizeof(*families); i++)
        if (!strncmp(name, families[i], strlen(families[i])))
            return 0; /* forwarded as one of the families */
    util_buf_addf(ctx, " | %s", name);
    return 0;
}

static int emit_mpirun(const json_t *profile, struct util_buf *out)
{
    struct gen_shape shape;
    gen_shape(profile, &shape);
    util_buf_adds(out, "#!/usr/bin/env bash\n");
    gen_header(profile, "launch/mpirun.sh", out);
    util_buf_addf(out,
                  "# usage: [NP=ranks] [TOPOTUNE_PPN=ranks per node] [HOSTFILE=file] mpirun.sh "
                  "program [args]\n"
                  "# Defaults: the shape measured, %lld node(s) x %lld rank(s) per node (NP=%lld;\n"
                  "# TOPOTUNE_NODES=N makes NP N x TOPOTUNE_PPN). A table that fits no "
                  "communicator of the job\n"
                  "# is a warning before mpirun starts.\n",
                  shape.nodes, shape.ppn, shape.ranks);
    util_buf_adds(out, "# PyTorch's NCCL is the program's only when the program is Python: the "
                       "prelude\n"
                       "# looks at it (its name, else its shebang) before checking the version.\n"
                       "torch_program=ask\n");
    gen_shell_prelude(profile, out);
    util_buf_addf(out,
                  "ppn=${TOPOTUNE_PPN:-%lld}\n"
                  "nodes=${TOPOTUNE_NODES:-%lld}\n",
                  shape.ppn, shape.nodes);
    counts_check(out, "\"$ppn\" \"$nodes\" \"${NP:-1}\"");
    util_buf_adds(out, "np=${NP:-$((nodes * ppn))}\n");
    util_buf_adds(
        out,
        "shape_check \"$(((np + ppn - 1) / ppn))\" \"$np\"\n"
        "# Remote ranks get what is exported here, as the local ranks see it: -x for every\n"
        "# NCCL_*, TORCH_*, FI_* (libfabric: EFA, Slingshot), UCX_* and CUDA_* variable set\n"
        "# (the caller's own NCCL_SOCKET_IFNAME or NCCL_IB_HCA too: a remote rank without them\n"
        "# picks other interfaces and hangs), the plugin's and the profile's; not\n"
        "# CUDA_VISIBLE_DEVICES, which each node's allocation sets for itself.\n"
        "fwd=()\n"
        "while read -r name; do\n"
        "    case $name in\n"
        "    CUDA_VISIBLE_DEVICES) ;;\n"
        "    ");
    for (size_t i = 0; i < sizeof(families) / sizeof(*families); i++)
        util_buf_addf(out, "%s* | ", families[i]);
    util_buf_adds(out, "TOPOTUNE_TUNER_TABLE | TOPOTUNE_TUNER_DIGEST | TOPOTUNE_CLASS | "
                       "TOPOTUNE_NEXT_TUNER | TOPOTUNE_CALLER_VARS");
    if (gen_each_var(profile, fwd_name, out))
        return -1;
    util_buf_adds(out,
                  ") fwd+=(-x \"$name\") ;;\n"
                  "    esac\n"
                  "done < <(compgen -e)\n"
                  "hostfile=()\n[ -z \"${HOSTFILE:-}\" ] || hostfile=(--hostfile \"$HOSTFILE\")\n"
                  "# Open MPI refuses root without this, and containers run as root\n"
                  "[ \"$(id -u)\" != 0 ] ||\n"
                  "    { [ -n \"${OMPI_ALLOW_RUN_AS_ROOT:-}\" ] && [ -n "
                  "\"${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-}\" ]; } ||\n"
                  "    hostfile+=(--allow-run-as-root)\n");
    if (gen_per_node(profile))
        util_buf_adds(out,
                      "# each rank resolves its own node's device names, then becomes the program\n"
                      "per_rank=()\n"
                      "[ -z \"$topotune_bin\" ] || per_rank=(\"$topotune_bin\" env --node "
                      "--profile \"$profile_dir\" --)\n"
                      "exec mpirun -np \"$np\" --map-by \"ppr:$ppn:node\" "
                      "${hostfile[@]+\"${hostfile[@]}\"} ${fwd[@]+\"${fwd[@]}\"} \\\n"
                      "    ${per_rank[@]+\"${per_rank[@]}\"} \"$@\"\n");
    else
        util_buf_adds(out, "exec mpirun -np \"$np\" --map-by \"ppr:$ppn:node\" "
                           "${hostfile[@]+\"${hostfile[@]}\"} ${fwd[@]+\"${fwd[@]}\"} \"$@\"\n");
    return 0;
}

const struct gen_emitter gen_emit_torchrun = {"launch/torchrun.sh", 1, emit_torchrun};
const struct gen_emitter gen_emit_sbatch = {"launch/sbatch.sh", 1, emit_sbatch};
const struct gen_emitter gen_emit_mpirun = {"launch/mpirun.sh", 1, emit_mpirun};
