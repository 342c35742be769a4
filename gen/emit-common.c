/* SPDX-License-Identifier: MIT */
/* Pieces every emitter shares: the header, the validated variables, the shell prelude. */
#include "gen/internal.h"
#include "sweep/sweep.h"
#include "tuner/tuner.h"
#include "util/log.h"
#include "util/env.h"
#include "util/quote.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *str(const json_t *o, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : dflt;
}

/* "# " + text on one line: whatever a field holds, it cannot start a live line. */
static void comment(struct util_buf *out, const char *fmt_before, const char *value)
{
    util_buf_adds(out, fmt_before);
    util_quote_comment(out, value);
}

void gen_header(const json_t *profile, const char *what, struct util_buf *out)
{
    const json_t *sw = json_object_get(profile, "software");
    util_buf_addf(out, "# %s: topotune profile ", what);
    util_quote_comment(out, str(profile, "class", "?"));
    util_buf_addf(out, " v%lld (schema topotune/profile/1)\n",
                  (long long)json_integer_value(json_object_get(profile, "version")));
    comment(out, "# created ", str(profile, "created", "?"));
    comment(out, " by topotune ", str(profile, "tool_version", "?"));
    comment(out, ", content ", str(profile, "content_hash", "?"));
    const char *backend = str(profile, "backend", "nccl");
    int mpi = !strcmp(backend, "mpi");
    if (mpi) { /* Open MPI's own collectives: NCCL never ran, its version is no evidence */
        comment(out, "\n# measured with ", str(sw, "mpi", "an unknown MPI"));
        util_buf_adds(out, " (the mpi backend: NCCL did not run)");
    } else {
        comment(out, "\n# measured with NCCL ", str(sw, "nccl", "unknown"));
        comment(out, ", CUDA ", str(sw, "cuda", "unknown"));
        comment(out, ", driver ", str(sw, "driver", "unknown"));
        comment(out, ", MPI ", str(sw, "mpi", "unknown"));
    }
    util_buf_addf(out, "%s\n",
                  json_is_true(json_object_get(profile, "predicted"))
                      ? " (PREDICTED by the sim backend)"
                      : "");
    comment(out, "# ", str(profile, "summary", ""));
    struct gen_shape shape;
    gen_shape(profile, &shape);
    util_buf_addf(out, "\n# measured on %lld node(s) x %lld rank(s) per node (%lld ranks)",
                  shape.nodes, shape.ppn, shape.ranks);
    util_buf_addf(out,
                  "\n# valid while the node class and %s version match; tuning variables must be\n"
                  "# re-validated (topotune sweep, then topotune gen) after every %s upgrade.\n",
                  mpi ? "MPI" : "NCCL", mpi ? "MPI" : "NCCL");
}

/* A count a profile states, 0 (unknown) for none that is one: past 2^30 nodes, ranks or GPUs a
 * file is damaged, and its products (ranks from nodes x GPUs) would overflow. */
static long long count(const json_t *o, const char *key)
{
    json_int_t v = json_integer_value(json_object_get(o, key));
    return v > 0 && v <= (1 << 30) ? (long long)v : 0;
}

void gen_shape(const json_t *profile, struct gen_shape *shape)
{
    const json_t *sweep = json_object_get(profile, "sweep");
    const json_t *row = json_array_get(json_object_get(profile, "tuner"), 0);
    long long gpus = count(json_object_get(profile, "hardware"), "gpus");
    shape->nodes = count(sweep, "nodes");
    shape->ranks = count(sweep, "ranks");
    shape->known = 1;
    if (shape->nodes < 1 || shape->ranks < 1) {
        /* A profile from before gen recorded the shape, or a prediction: machines are ranks
         * over GPUs a node (the rows count an NVLink domain's trays as one node: a rack's profile
         * read as one node of 72 GPUs) */
        long long asked = count(profile, "nodes"), rows = count(row, "nodes");
        if (shape->ranks < 1)
            shape->ranks = count(row, "ranks") > 0
                               ? count(row, "ranks")
                               : (asked > 0 ? asked : 1) * (gpus > 0 ? gpus : 1);
        shape->nodes = gpus > 0 && shape->ranks % gpus == 0 ? shape->ranks / gpus
                       : rows > 0                           ? rows
                       : asked > 0                          ? asked
                                                            : 1;
        shape->known = (gpus > 0 && shape->ranks % gpus == 0) || rows > 0 || asked > 0;
    }
    shape->ppn = (shape->ranks + shape->nodes - 1) / shape->nodes;
    long long domain = count(json_object_get(profile, "hardware"), "nvlink_domain");
    shape->domain_hosts = gpus > 0 && domain > gpus && domain / gpus < 1 << 20 ? domain / gpus : 1;
    /* A rank per GPU; an mpi profile measured CPU ranks and asks for none. */
    shape->gpus = !strcmp(str(profile, "backend", "nccl"), "mpi") || gpus < 1 ? 0
                  : shape->ppn < gpus                                         ? shape->ppn
                                                                              : gpus;
}

void gen_shape_check(struct util_buf *out, const struct gen_shape *shape)
{
    util_buf_addf(
        out,
        "# The per-size table's rows apply to communicators of the shape (nodes x ranks) they "
        "were\n"
        "# measured on: say so before starting a job whose communicator none of them fits. Its\n"
        "# nodes are NCCL's: the hosts of one NVLink domain (%lld here) are one node.\n"
        "shape_check() {\n"
        "    local table=$profile_dir/tuner-table.txt measured n=$1 c=%lld\n"
        "    [ -z \"${TOPOTUNE_SHAPE_CHECKED:-}\" ] && [ -r \"$table\" ] || return 0\n"
        "    [ \"$n\" -ge \"$c\" ] || c=$n\n"
        "    n=$(((n + c - 1) / c))\n"
        "    local said=\"$1 node(s)\"\n"
        "    [ \"$n\" = \"$1\" ] || said=\"$1 hosts ($n node(s) as NCCL counts NVLink domains)\"\n"
        "    measured=$(awk -F, -v n=\"$n\" -v r=\"$2\" '\n"
        "        /^[[:space:]]*(#|$)/ || $1 == \"collective\" { next }\n"
        "        { rows++; if (($4 == \"*\" || $4 == n) && ($5 == \"*\" || $5 == r)) fit++ }\n"
        "        { s = $4 \" node(s) x \" $5 \" ranks\"; if (!(s in seen)) list = list (list == "
        "\"\" ? \"\" : \", \") s; seen[s] = 1 }\n"
        "        END { if (rows && !fit) print list }' \"$table\")\n"
        "    if [ -n \"$measured\" ]; then\n"
        "        echo \"$0: warning: the per-size table (tuner-table.txt) was measured on "
        "$measured; "
        "this job runs $said x $2 ranks: none of its rows applies to the job's communicator "
        "(NCCL decides per size there): start the measured shape, or sweep this one\" >&2\n"
        "    fi\n"
        "}\n\n",
        shape->domain_hosts, shape->domain_hosts);
}

int gen_each_var(const json_t *profile,
                 int (*fn)(const char *name, const char *value, const char *role, void *ctx),
                 void *ctx)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(profile, "variables"), i, v) {
        const char *name = str(v, "name", NULL), *value = str(v, "value", NULL);
        /* Validated when the space was read; checked again: nothing unvalidated is emitted. */
        if (!sweep_valid_name(name) || !sweep_valid_value(value) || strchr(value, '@')) {
            util_error(
                "refusing to write %s=%s into a profile: names are [A-Z_][A-Za-z0-9_]*, values "
                "[A-Za-z0-9_.,:=^/+-]*; fix the sweep's space",
                name ? name : "?", value ? value : "?");
            return -1;
        }
        if (fn(name, value, str(v, "role", "tuning"), ctx))
            return -1;
    }
    return 0;
}

/* /dev/shm the SHM transport needs for this many GPUs (as the model estimates it), in KiB. */
long long gen_shm_need_kb(const json_t *profile)
{
    long long gpus =
        json_integer_value(json_object_get(json_object_get(profile, "hardware"), "gpus"));
    return (gpus > 1 ? gpus : 2) * 2 * 9 * 1024;
}

/* A profile whose table has rows: a node whose copy is missing, empty or cut short would count
 * none (or fewer) and leave its ranks to NCCL while the others apply them: the script stops. */
static void table_whole(struct util_buf *out)
{
    util_buf_adds(
        out,
        "tuner_named=$(tuner_header rows)\n"
        "if [ \"$tuner_plugin\" != none ] && { [ ! -s \"$TOPOTUNE_TUNER_TABLE\" ] ||\n"
        "    { [ -n \"$tuner_named\" ] && [ \"$tuner_named\" != \"$tuner_rows\" ]; }; }; then\n"
        "    echo \"$0: $TOPOTUNE_TUNER_TABLE on $(hostname) is missing, empty or cut short "
        "($tuner_rows "
        "of ${tuner_named:-its} rows): copy the profile whole to every node (or launch with "
        "TOPOTUNE_TUNER_PLUGIN=none on every node)\" >&2\n"
        "    exit 2\n"
        "fi\n");
}

/* topotune's NCCL tuner plugin with the profile's per-size table, where the plugin is installed
 * and the table has rows; the tuner the job had stays next in the chain (tuner/tuner.h). The
 * digest in the table's header goes with it: a rank whose copy differs fails its init rather
 * than deciding otherwise than its peers. */
static void tuner_plugin(const json_t *profile, struct util_buf *out)
{
    char path[4096];
    gen_tuner_plugin_path(path, sizeof(path));
    util_buf_adds(
        out,
        "# topotune's NCCL tuner plugin applies tuner-table.txt (per message size: algorithm and\n"
        "# protocol) inside NCCL, and passes every other call to the tuner NCCL would load "
        "without\n"
        "# it (NCCL_TUNER_PLUGIN as it was, saved in TOPOTUNE_NEXT_TUNER, else the network\n"
        "# plugin's). Named only when the table has rows. TOPOTUNE_TUNER_PLUGIN=PATH names it;\n"
        "# else it is the one NCCL_TUNER_PLUGIN names (an image's ENV), the one beside topotune\n"
        "# when gen ran, or the one beside the profile where the Dockerfile fragment installs it\n"
        "# (PROFILE/../lib). Off: TOPOTUNE_TUNER_PLUGIN=none (NCCL_TUNER_PLUGIN=none is left to "
        "NCCL).\n"
        "tuner_plugin=${TOPOTUNE_TUNER_PLUGIN:-}\n"
        "if [ -z \"$tuner_plugin\" ] && [ \"${NCCL_TUNER_PLUGIN:-}\" = none ]; then\n"
        "    tuner_plugin=none\n"
        "fi\n"
        "image_lib=$(cd \"$profile_dir/..\" && pwd)/lib\n"
        "if [ -z \"$tuner_plugin\" ]; then\n"
        "    for candidate in \"${NCCL_TUNER_PLUGIN:-}\" ");
    util_quote_shell(out, path);
    util_buf_adds(
        out,
        " \"$image_lib/libnccl-tuner-topotune.so\"; do\n"
        "        # by name (NCCL's 'topotune', or the file's name alone): the loader's search "
        "finds "
        "it\n"
        "        case $candidate in\n"
        "        topotune | libnccl-tuner-topotune.so) tuner_plugin=$candidate && break ;;\n"
        "        */libnccl-tuner-topotune.so) ;;\n"
        "        *) continue ;;\n"
        "        esac\n"
        "        if [ -f \"$candidate\" ]; then tuner_plugin=$candidate && break; fi\n"
        "    done\n"
        "fi\n"
        "export TOPOTUNE_TUNER_TABLE=\"$profile_dir/tuner-table.txt\"\n"
        "# the value of the table's `# KEY=` header, as gen wrote it (CRLF too, as the plugin\n"
        "# reads it), or nothing\n"
        "tuner_header() {\n"
        "    { sed -n \"s/^# $1=\\\\([0-9a-f]*\\\\)\\r*\\$/\\\\1/p\" \"$TOPOTUNE_TUNER_TABLE\" "
        "2>/dev/null || "
        "true; } | head -n 1\n"
        "}\n"
        "tuner_digest=$(tuner_header digest)\n"
        "tuner_rows=$(awk 'seen && !/^[[:space:]]*(#|$)/ {n++} /^collective,min_bytes,/ {seen = 1} "
        "END {print n + 0}' \"$TOPOTUNE_TUNER_TABLE\" 2>/dev/null || echo 0)\n");
    if (json_array_size(json_object_get(profile, "tuner")))
        table_whole(out);
    util_buf_adds(
        out,
        "# NCCL_TUNER_PLUGIN naming topotune's plugin already (an image's ENV): when ours is not\n"
        "# used, the tuner before it comes back (or none).\n"
        "tuner_ours=\n"
        "case \"${NCCL_TUNER_PLUGIN:-}\" in *libnccl-tuner-topotune.so | topotune) tuner_ours=1 ;; "
        "esac\n"
        "tuner_give_back() {\n"
        "    unset TOPOTUNE_TUNER_DIGEST\n"
        "    # auto: the image's base named no tuner; ours: an image built before auto saved it\n"
        "    local next=${TOPOTUNE_NEXT_TUNER:-}\n"
        "    case $next in [Aa][Uu][Tt][Oo] | *libnccl-tuner-topotune.so | topotune) next= ;; "
        "esac\n"
        "    if [ -n \"$tuner_ours\" ] && [ -n \"$next\" ]; then\n"
        "        export NCCL_TUNER_PLUGIN=\"$next\"\n"
        "    elif [ -n \"$tuner_ours\" ]; then\n"
        "        unset NCCL_TUNER_PLUGIN\n"
        "    fi\n"
        "}\n"
        "if [ \"$tuner_plugin\" = none ] || [ \"$tuner_rows\" = 0 ]; then\n"
        "    [ \"$tuner_plugin\" = none ] || echo \"$0: note: tuner-table.txt has no row: "
        "topotune's tuner plugin is not named, NCCL's own tuner decides\" >&2\n"
        "    tuner_give_back\n"
        "elif [ -f \"$tuner_plugin\" ] || [ \"$tuner_plugin\" = topotune ] ||\n"
        "    [ \"$tuner_plugin\" = libnccl-tuner-topotune.so ]; then\n"
        "    # the tuner the job names now is the next one, over one an image's ENV saved\n"
        "    if [ -n \"${NCCL_TUNER_PLUGIN:-}\" ] && [ -z \"$tuner_ours\" ]; then\n"
        "        export TOPOTUNE_NEXT_TUNER=\"$NCCL_TUNER_PLUGIN\"\n"
        "    fi\n"
        "    export NCCL_TUNER_PLUGIN=\"$tuner_plugin\"\n"
        "    # every rank applies this very table (its digest, gen wrote it in the table), or its\n"
        "    # communicator's init fails: a rank whose copy differs would decide otherwise than\n"
        "    # its peers and hang the job\n"
        "    if [ -n \"$tuner_digest\" ]; then export TOPOTUNE_TUNER_DIGEST=\"$tuner_digest\"; "
        "else "
        "unset TOPOTUNE_TUNER_DIGEST; fi\n"
        "else\n"
        "    where=\"at '$tuner_plugin'\"\n"
        "    [ -n \"$tuner_plugin\" ] || where=\"in NCCL_TUNER_PLUGIN, beside topotune when gen "
        "ran or in $image_lib\"\n"
        "    echo \"$0: note: topotune's tuner plugin (libnccl-tuner-topotune.so) is not $where: "
        "NCCL decides per size; set TOPOTUNE_TUNER_PLUGIN to its path\" >&2\n"
        "    # a name left from elsewhere (an image's ENV) must not make NCCL look for it\n"
        "    tuner_give_back\n"
        "fi\n\n");
}

static int is_per_node(const char *name, const char *value, const char *role, void *ctx)
{
    (void)value;
    (void)role;
    *(int *)ctx |= util_env_per_node(name);
    return 0;
}

int gen_per_node(const json_t *profile)
{
    int any = 0;
    gen_each_var(profile, is_per_node, &any);
    return any;
}

/* The profile's per-node values (interface and device names, GID index) resolved on this node:
 * `topotune env --node` prints them as export lines, eval'd only when it ran. */
static void per_node(const json_t *profile, struct util_buf *out)
{
    if (!gen_per_node(profile))
        return;
    util_buf_adds(
        out,
        "# NCCL_IB_HCA, NCCL_IB_GID_INDEX and NCCL_SOCKET_IFNAME name this node's devices: the\n"
        "# profile's were measured on another node, so each node resolves its own (topotune env\n"
        "# --node; TOPOTUNE_PER_NODE=off keeps the profile's, TOPOTUNE=PATH names topotune).\n"
        "topotune_bin=${TOPOTUNE:-$(command -v topotune || true)}\n"
        "if [ \"${TOPOTUNE_PER_NODE:-on}\" = off ]; then\n"
        "    topotune_bin=\n"
        "elif [ -z \"$topotune_bin\" ]; then\n"
        "    echo \"$0: note: topotune is not in PATH: the profile's device names stay as measured "
        "on another node\" >&2\n"
        "elif node_env=$(\"$topotune_bin\" env --node --profile \"$profile_dir\"); then\n"
        "    eval \"$node_env\"\n"
        "else\n"
        "    echo \"$0: note: topotune env --node failed: the profile's device names stay\" >&2\n"
        "    topotune_bin=\n"
        "fi\n\n");
}

static int add_name(const char *name, const char *value, const char *role, void *ctx)
{
    (void)value;
    (void)role;
    util_buf_addf(ctx, "%s%s", ((struct util_buf *)ctx)->len ? " " : "", name);
    return 0;
}

/* nccl.env sourced; a variable of the profile that the caller set keeps the caller's value, as
 * NCCL lets the environment win over nccl.conf (to chase a hang, say), each said so that a stale
 * one from a login shell is seen; TOPOTUNE_CALLER_VARS names them for topotune env --node. */
static void source_env(const json_t *profile, struct util_buf *out)
{
    struct util_buf names = UTIL_BUF_INIT;
    if (gen_each_var(profile, add_name, &names) || !names.len) {
        util_buf_adds(out, "# shellcheck source=/dev/null\n. \"$profile_dir/nccl.env\"\n");
        util_buf_release(&names);
        return;
    }
    util_buf_addf(
        out,
        "# The caller's own value of a profile variable wins, as NCCL lets the environment win\n"
        "# over nccl.conf (to chase a hang, say); each is said, so that a stale one is seen.\n"
        "profile_vars=(%s)\n"
        "caller_env=()\n"
        "for name in \"${profile_vars[@]}\"; do\n"
        "    if [ -n \"${!name+x}\" ]; then caller_env+=(\"$name=${!name}\"); fi\n"
        "done\n"
        "# shellcheck source=/dev/null\n"
        ". \"$profile_dir/nccl.env\"\n"
        "# those the caller set otherwise than the profile, which topotune env --node keeps\n"
        "TOPOTUNE_CALLER_VARS=\n"
        "for kv in ${caller_env[@]+\"${caller_env[@]}\"}; do\n"
        "    name=${kv%%%%=*}\n"
        "    if [ \"${!name}\" != \"${kv#*=}\" ]; then\n"
        "        echo \"$0: note: $name=${kv#*=} from the environment, not the profile's "
        "${!name}\" >&2\n"
        "        export \"${kv?}\"\n"
        "        TOPOTUNE_CALLER_VARS=\"$TOPOTUNE_CALLER_VARS $name\"\n"
        "    fi\n"
        "done\n"
        "export TOPOTUNE_CALLER_VARS\n",
        util_buf_str(&names));
    util_buf_release(&names);
}

void gen_shell_prelude(const json_t *profile, struct util_buf *out)
{
    struct util_buf want = UTIL_BUF_INIT;
    util_quote_shell(&want, str(json_object_get(profile, "software"), "nccl", ""));
    util_buf_adds(out, "set -euo pipefail\n"
                       "profile_dir=${TOPOTUNE_PROFILE:-$(CDPATH='' cd \"$(dirname "
                       "\"${BASH_SOURCE[0]}\")/..\" && pwd)}\n");
    util_buf_adds(out, GEN_SHELL_RESOLVE);
    source_env(profile, out);
    util_buf_adds(
        out,
        "# nccl.env set the profile's variables. NCCL_CONF_FILE stays the caller's: NCCL (2.23 "
        "on)\n"
        "# reads it instead of ~/.nccl.conf, whose site settings pointing it here would drop.\n\n");
    per_node(profile, out);
    util_buf_adds(
        out,
        "# One launcher per job: a process started by another launcher already has a rank.\n"
        "if [ -n \"${RANK:-}${LOCAL_RANK:-}${OMPI_COMM_WORLD_RANK:-}\" ] && [ -z "
        "\"${TOPOTUNE_NESTED_OK:-}\" ]; then\n"
        "    echo \"$0: already started by a launcher (RANK or OMPI_COMM_WORLD_RANK is set): use "
        "one launcher per job\" >&2\n"
        "    exit 2\n"
        "fi\n\n");
    tuner_plugin(profile, out);
    util_buf_adds(
        out,
        "# The Python that runs the training: torchrun's own, unless TOPOTUNE_PYTHON says. Its\n"
        "# shebang names it: a path, `/usr/bin/env [-S] python3`, or pip's /bin/sh trampoline for\n"
        "# long paths (line 2: '''exec' /path/python \"$0\" \"$@\").\n"
        "script_python() {\n"
        "    local first='' second='' w=()\n"
        "    { IFS= read -r first && IFS= read -r second; } <\"$1\" 2>/dev/null || true\n"
        "    case $first in '#!'*) read -r -a w <<<\"${first#??}\" ;; esac\n"
        "    case ${w[0]:-} in\n"
        "    env | */env)\n"
        "        w=(\"${w[@]:1}\")\n"
        "        while [ ${#w[@]} -gt 0 ]; do\n"
        "            case ${w[0]} in\n"
        "            -u | -C | -P | --unset | --chdir) w=(\"${w[@]:2}\") ;;\n"
        "            -* | *=*) w=(\"${w[@]:1}\") ;;\n"
        "            *) break ;;\n"
        "            esac\n"
        "        done\n"
        "        ;;\n"
        "    sh | */sh)\n"
        "        w=()\n"
        "        case $second in \"'''exec' \"*)\n"
        "            second=${second#\"'''exec' \"}\n"
        "            case $second in '\"'*) second=${second#?} && w=(\"${second%%\\\"*}\") ;;\n"
        "            *) w=(\"${second%% *}\") ;;\n"
        "            esac\n"
        "            ;;\n"
        "        esac\n"
        "        ;;\n"
        "    esac\n"
        "    case ${w[0]:-} in python* | */python* | pypy* | */pypy*) printf '%s\\n' \"${w[0]}\" "
        ";; "
        "esac\n"
        "}\n"
        "torchrun_path=$(command -v torchrun || true)\n"
        "py=${TOPOTUNE_PYTHON:-}\n"
        "if [ -z \"$py\" ] && [ -n \"$torchrun_path\" ]; then\n"
        "    py=$(script_python \"$torchrun_path\")\n"
        "fi\n"
        "py=${py:-python3}\n"
        "# mpirun.sh's program (torch_program=ask): Python by its name, or by its shebang as\n"
        "# torchrun's is read (a console script on PATH: deepspeed, accelerate)\n"
        "if [ \"${torch_program-}\" = ask ]; then\n"
        "    torch_program=\n"
        "    case ${1:-} in python* | */python* | pypy* | */pypy*) torch_program=1 ;; esac\n"
        "    prog=$(command -v -- \"${1:-}\" 2>/dev/null || true)\n"
        "    if [ -z \"$torch_program\" ] && [ -f \"$prog\" ] && [ -n \"$(script_python "
        "\"$prog\")\" ]; "
        "then\n"
        "        torch_program=1\n"
        "    fi\n"
        "fi\n\n");
    struct gen_shape shape;
    gen_shape(profile, &shape);
    gen_shape_check(out, &shape);
    util_buf_addf(
        out,
        "# PyTorch's NCCL and its own version, from one import (a second or more each). Older\n"
        "# PyTorch gives NCCL's version code (2.9 on: major x 10000 + minor x 100 + patch), newer\n"
        "# a tuple that may carry a suffix; a build without NCCL raises.\n"
        "versions=$(\"$py\" -c 'import torch\n"
        "try:\n"
        "    v = torch.cuda.nccl.version()\n"
        "    if isinstance(v, int):\n"
        "        v = (v // 10000, v // 100 %% 100, v %% 100) if v >= 10000 else "
        "(v // 1000, v // 100 %% 10, v %% 100)\n"
        "    v = \".\".join(map(str, v[:3]))\n"
        "except Exception:\n"
        "    v = \"\"\n"
        "print(v, torch.__version__.split(\"+\")[0], sep=\"/\")' 2>/dev/null | tail -n 1 || true)\n"
        "case $versions in */*) ;; *) versions=/ ;; esac\n"
        "have_nccl=${versions%%%%/*}\n"
        "torch_version=${versions#*/}\n\n"
        "# The NCCL version must be the one this profile was measured with. PyTorch's NCCL is\n"
        "# the program's only when it is Python (torch_program: mpirun.sh decides by its "
        "program).\n"
        "want_nccl=%s\n"
        "if [ -z \"${torch_program-1}\" ] && [ -n \"$want_nccl\" ]; then\n"
        "    echo \"$0: note: ${1:-the program} is not Python: the NCCL it loads is its own, not "
        "checked against the profile's $want_nccl\" >&2\n"
        "elif [ -n \"$want_nccl\" ] && [ -n \"$have_nccl\" ] && [ \"$have_nccl\" != \"$want_nccl\" "
        "] "
        "&& [ -z \"${TOPOTUNE_IGNORE_NCCL_VERSION:-}\" ]; then\n"
        "    echo \"$0: profile measured with NCCL $want_nccl but this runs NCCL $have_nccl: run "
        "topotune sweep and gen again, or set TOPOTUNE_IGNORE_NCCL_VERSION=1\" >&2\n"
        "    exit 3\n"
        "fi\n\n",
        util_buf_str(&want));
    util_buf_release(&want);
    util_buf_addf(out,
                  "# NCCL's SHM transport lives in /dev/shm (containers default to 64 MB).\n"
                  "shm_kb=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $2}')\n"
                  "if [ -n \"$shm_kb\" ] && [ \"$shm_kb\" -lt %lld ]; then\n"
                  "    echo \"$0: warning: /dev/shm has $((shm_kb / 1024)) MB, NCCL may need %lld "
                  "MB: docker run --shm-size=16g or --ipc=host\" >&2\n"
                  "fi\n\n",
                  gen_shm_need_kb(profile), gen_shm_need_kb(profile) / 1024);
    util_buf_adds(
        out,
        "# PyTorch's NCCL error handling and flight recorder, by the names this PyTorch reads;\n"
        "# both when its version is unknown here (no torch on this node's Python: a login node).\n"
        "if [ -z \"$torch_version\" ] && [ -n \"${torch_program-1}\" ]; then\n"
        "    echo \"$0: note: PyTorch's version is unknown here ($py cannot import torch): its "
        "NCCL "
        "is not checked, and its error handling is set by both its old and new names\" >&2\n"
        "fi\n"
        "if [ -z \"$torch_version\" ] || printf '%s\\n2.1.999\\n' \"$torch_version\" | sort -V -C; "
        "then\n"
        "    export NCCL_ASYNC_ERROR_HANDLING=\"${NCCL_ASYNC_ERROR_HANDLING:-1}\"\n"
        "fi\n"
        "if [ -z \"$torch_version\" ] || ! printf '%s\\n2.1.999\\n' \"$torch_version\" | sort -V "
        "-C; "
        "then\n"
        "    export TORCH_NCCL_ASYNC_ERROR_HANDLING=\"${TORCH_NCCL_ASYNC_ERROR_HANDLING:-1}\"\n"
        "    export TORCH_NCCL_TRACE_BUFFER_SIZE=\"${TORCH_NCCL_TRACE_BUFFER_SIZE:-2000}\"\n"
        "    export TORCH_NCCL_DUMP_ON_TIMEOUT=\"${TORCH_NCCL_DUMP_ON_TIMEOUT:-1}\"\n"
        "fi\n\n");
}

void gen_tuner_plugin_path(char *path, size_t len)
{
    /* Installed: PREFIX/bin/topotune -> PREFIX/lib, lib64 or the multiarch libdir; built: the
     * build tree's tuner/ beside the program. */
    static const char *const rel[] = {"../lib", "../lib64", ("../lib/" TOPOTUNE_MULTIARCH),
                                      "tuner"};
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    path[0] = '\0';
    if (n <= 0)
        return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char candidate[PATH_MAX + 64];
        snprintf(candidate, sizeof(candidate), "%s/%s/libnccl-tuner-topotune.so", self, rel[i]);
        char *real = realpath(candidate, NULL);
        if (real && access(real, R_OK) == 0 && strlen(real) < len) {
            snprintf(path, len, "%s", real);
            free(real);
            return;
        }
        free(real);
    }
}
