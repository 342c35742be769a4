/* SPDX-License-Identifier: MIT */
/*
 * Shell launch templates: launch/torchrun.sh (single and multi-node, c10d
 * rendezvous, node rank from Slurm or flags), launch/sbatch.sh (one torchrun
 * per node through srun) and launch/mpirun.sh (-x per variable, a rank per GPU).
 */
#include "gen/internal.h"
#include "util/quote.h"

#include <string.h>

static long long gpus(const json_t *profile)
{
    long long g = json_integer_value(json_object_get(json_object_get(profile, "hardware"), "gpus"));
    return g > 0 ? g : 1;
}

/* Where gen wrote this version (absolute), for scripts that run from a copy elsewhere. */
static const char *location(const json_t *profile)
{
    const char *dir = json_string_value(json_object_get(profile, "location"));
    return dir ? dir : "";
}

static int emit_torchrun(const json_t *profile, struct util_buf *out)
{
    util_buf_adds(out, "#!/usr/bin/env bash\n");
    gen_header(profile, "launch/torchrun.sh", out);
    util_buf_addf(
        out,
        "# usage: torchrun.sh [--nnodes N] [--node-rank R] [--nproc-per-node G] "
        "[--rdzv-endpoint HOST:PORT]\n"
        "#                    [--rdzv-id ID] -- train.py [args]   (extra torchrun "
        "flags: TOPOTUNE_TORCHRUN_ARGS)\n"
        "# torchrun's flags are spelled with underscores, which every PyTorch release accepts.\n"
        "# torchrun starts the ranks and sets RANK, LOCAL_RANK and WORLD_SIZE: the "
        "script must not spawn its own.\n");
    gen_shell_prelude(profile, out);
    util_buf_addf(
        out,
        "nnodes=${SLURM_NNODES:-1}\n"
        "node_rank=${SLURM_NODEID:-0}\n"
        "nproc=%lld\n"
        "rdzv_id=${SLURM_JOB_ID:-topotune-$$}\n"
        "rdzv_endpoint=\n"
        "if [ -n \"${SLURM_JOB_NODELIST:-}\" ]; then\n"
        "    rdzv_endpoint=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n "
        "1):29400\"\n"
        "fi\n"
        "while [ $# -gt 0 ]; do\n"
        "    case \"$1\" in\n"
        "    --nnodes) nnodes=$2; shift 2 ;;\n"
        "    --node-rank) node_rank=$2; shift 2 ;;\n"
        "    --nproc-per-node) nproc=$2; shift 2 ;;\n"
        "    --rdzv-endpoint) rdzv_endpoint=$2; shift 2 ;;\n"
        "    --rdzv-id) rdzv_id=$2; shift 2 ;;\n"
        "    --) shift; break ;;\n"
        "    *) break ;;\n"
        "    esac\n"
        "done\n"
        "[ $# -gt 0 ] || { echo \"usage: $0 [options] -- train.py [args]\" >&2; exit 2; }\n"
        "read -r -a extra <<<\"${TOPOTUNE_TORCHRUN_ARGS:-}\"\n"
        "if [ \"$nnodes\" = 1 ]; then\n"
        "    exec torchrun --standalone --nnodes 1 --nproc_per_node \"$nproc\" \"${extra[@]}\" "
        "\"$@\"\n"
        "fi\n"
        "[ -n \"$rdzv_endpoint\" ] || { echo \"$0: --rdzv-endpoint HOST:PORT is needed for $nnodes "
        "nodes\" >&2; exit 2; }\n"
        "exec torchrun --nnodes \"$nnodes\" --node_rank \"$node_rank\" --nproc_per_node \"$nproc\" "
        "\\\n"
        "    --rdzv_backend c10d --rdzv_endpoint \"$rdzv_endpoint\" --rdzv_id \"$rdzv_id\" "
        "\"${extra[@]}\" \"$@\"\n",
        gpus(profile));
    return 0;
}

static int emit_sbatch(const json_t *profile, struct util_buf *out)
{
    util_buf_adds(out, "#!/usr/bin/env bash\n");
    util_buf_addf(out,
                  "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=%lld\n"
                  "#SBATCH --exclusive\n",
                  gpus(profile));
    gen_header(profile, "launch/sbatch.sh", out);
    util_buf_adds(
        out, "# usage: sbatch sbatch.sh train.py [args]   (TOPOTUNE_PROFILE=DIR: the profile "
             "elsewhere)\n"
             "# sbatch runs a copy of this script from its spool directory: the profile is found\n"
             "# through TOPOTUNE_PROFILE, else where topotune gen wrote it.\n"
             "# One torchrun per node, started by srun; torchrun starts one rank per GPU.\n"
             "set -euo pipefail\n");
    util_buf_adds(out, "profile_dir=${TOPOTUNE_PROFILE:-");
    util_quote_shell(out, location(profile));
    util_buf_adds(
        out,
        "}\n"
        "if [ ! -f \"$profile_dir/nccl.env\" ]; then\n"
        "    echo \"$0: no profile at '$profile_dir': set TOPOTUNE_PROFILE to the profile "
        "directory (the one holding nccl.env)\" >&2\n"
        "    exit 2\n"
        "fi\n"
        "# memlock must be unlimited for RDMA registration\n"
        "ulimit -l unlimited 2>/dev/null || echo \"$0: warning: cannot raise the memlock limit "
        "(RDMA needs it unlimited)\" >&2\n"
        "head_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
        "srun --ntasks-per-node=1 --export=ALL,TOPOTUNE_PROFILE=\"$profile_dir\" \\\n"
        "    \"$profile_dir/launch/torchrun.sh\" --nnodes \"$SLURM_NNODES\" --rdzv-endpoint "
        "\"$head_node:29400\" \\\n"
        "    --rdzv-id \"$SLURM_JOB_ID\" -- \"$@\"\n");
    return 0;
}

static int fwd_name(const char *name, const char *value, const char *role, void *ctx)
{
    (void)value;
    (void)role;
    util_buf_addf(ctx, " %s", name);
    return 0;
}

static int emit_mpirun(const json_t *profile, struct util_buf *out)
{
    util_buf_adds(out, "#!/usr/bin/env bash\n");
    gen_header(profile, "launch/mpirun.sh", out);
    util_buf_addf(out,
                  "# usage: NP=<ranks> [HOSTFILE=file] mpirun.sh program [args]   (one rank per "
                  "GPU: %lld per node)\n",
                  gpus(profile));
    gen_shell_prelude(profile, out);
    util_buf_adds(
        out, "# Remote ranks get exactly what is exported here: -x for each name that is set.\n"
             "fwd=()\n"
             "for name in NCCL_CONF_FILE NCCL_ASYNC_ERROR_HANDLING "
             "TORCH_NCCL_ASYNC_ERROR_HANDLING \\\n"
             "    TORCH_NCCL_TRACE_BUFFER_SIZE TORCH_NCCL_DUMP_ON_TIMEOUT NCCL_TUNER_PLUGIN \\\n"
             "    TOPOTUNE_TUNER_TABLE TOPOTUNE_CLASS TOPOTUNE_NEXT_TUNER");
    if (gen_each_var(profile, fwd_name, out))
        return -1;
    util_buf_addf(out,
                  "; do\n"
                  "    if [ -n \"${!name+set}\" ]; then fwd+=(-x \"$name\"); fi\n"
                  "done\n"
                  "hostfile=()\n[ -z \"${HOSTFILE:-}\" ] || hostfile=(--hostfile \"$HOSTFILE\")\n"
                  "exec mpirun -np \"${NP:-%lld}\" --map-by \"ppr:%lld:node\" \"${hostfile[@]}\" "
                  "\"${fwd[@]}\" \"$@\"\n",
                  gpus(profile), gpus(profile));
    return 0;
}

const struct gen_emitter gen_emit_torchrun = {"launch/torchrun.sh", 1, emit_torchrun};
const struct gen_emitter gen_emit_sbatch = {"launch/sbatch.sh", 1, emit_sbatch};
const struct gen_emitter gen_emit_mpirun = {"launch/mpirun.sh", 1, emit_mpirun};
