/* SPDX-License-Identifier: MIT */
/* `topotune verify PROFILE`: its options; the comparison itself is verify/'s. */
#include "cli/cli.h"
#include "launch/launch.h"
#include "model/model.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/opts.h"
#include "verify/verify.h"

#include <jansson.h>
#include <string.h>

/* The options of --backend nccl: 0 or UTIL_EUSAGE. */
static int parse_measured(struct verify_opts *o)
{
    if (o->topology)
        return util_error("--topology predicts (sim backend); --backend nccl measures: give one"),
               UTIL_EUSAGE;
    o->launcher = o->launcher ? o->launcher : "mpirun";
    if (launch_check_nodes(o->hosts, 0))
        return UTIL_EUSAGE;
    if (!o->np)
        return util_error(
                   "verify --backend nccl needs --np N: the ranks, one per GPU (1 to 65536)"),
               UTIL_EUSAGE;
    /* checked before --out is made: a direct launch is one process */
    if (!strcmp(o->launcher, "direct") && o->np > 1)
        return util_error("--launcher direct runs one rank, not --np %d: use --launcher mpirun "
                          "(or srun) for more",
                          o->np),
               UTIL_EUSAGE;
    return 0;
}

/* -C NAME into o->coll: 0 or UTIL_EUSAGE. */
static int parse_coll(const char *name, struct verify_opts *o)
{
    o->coll = model_coll_parse(name ? name : "all_reduce");
    if (o->coll < 0)
        return util_error("invalid value '%s' for -C (--collective): expected one of %s", name,
                          model_coll_names()),
               UTIL_EUSAGE;
    const char *why = verify_coll_refused(o->coll);
    if (why)
        return util_error("verify -C %s: %s", model_coll_name(o->coll), why), UTIL_EUSAGE;
    return 0;
}

static int parse(int argc, char **argv, struct verify_opts *o)
{
    const char *coll = NULL;
    const struct util_opt opts[] = {
        {"collective", 'C', UTIL_OPT_STRING, &coll, "NAME",
         "all_reduce (default), all_gather, reduce_scatter, broadcast or reduce: the table's "
         "rows for it"},
        {"topology", 't', UTIL_OPT_STRING, &o->topology, "SPEC",
         "the class's topology or hardware spec: predict with the sim backend"},
        {"backend", 0, UTIL_OPT_CHOICE, &o->backend, "NAME",
         "sim (predict; the default) or nccl (measure, on the GPU machine)", .choices = "sim nccl"},
        {"launcher", 0, UTIL_OPT_CHOICE, &o->launcher, "L",
         "nccl: direct, mpirun (default) or srun", .choices = "direct mpirun srun"},
        {"np", 0, UTIL_OPT_INT, &o->np, "N", "nccl: ranks, one per GPU (required)", .min = 1,
         .max = 65536},
        {"hosts", 0, UTIL_OPT_STRING, &o->hosts, "LIST", "nccl: the nodes, for mpirun"},
        {"repeat", 0, UTIL_OPT_INT, &o->repeat, "R",
         "nccl: runs per configuration, averaged (default 3)", .min = 1, .max = 100},
        {"timeout", 0, UTIL_OPT_DOUBLE, &o->timeout_s, "S",
         "nccl: the benchmark's deadline for one wait (default 120)", .min = 1, .max = 86400},
        {"out", 'o', UTIL_OPT_STRING, &o->out, "DIR",
         "nccl: where the runs' events and logs go (default: a new directory in /tmp)"},
        {"nodes", 0, UTIL_OPT_INT, &o->nodes, "N", "nodes of that kind (default: the spec's)",
         .min = 1, .max = 4096},
        {"minbytes", 'b', UTIL_OPT_SIZE, &o->min_bytes, "SIZE", "smallest size (default 8)",
         .min = 1, .max = 1099511627776.0},
        {"maxbytes", 'e', UTIL_OPT_SIZE, &o->max_bytes, "SIZE", "largest size (default 1G)",
         .min = 1, .max = 1099511627776.0},
        {"json", 0, UTIL_OPT_FLAG, &o->json, NULL, "one JSON document instead of the table"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune verify",
        "PROFILE --topology SPEC [-C NAME] [--nodes N] [-b MIN] [-e MAX] [--json]\n"
        "       PROFILE --backend nccl --np N [-C NAME] [--launcher direct|mpirun|srun]\n"
        "       [--hosts LIST] [--repeat R] [--timeout S] [--out DIR] [-b MIN] [-e MAX] "
        "[--json]\n\n"
        "Per size (x4), the busbw of collective NAME (all_reduce by default; a workload\n"
        "profile's table has rows for others) under NCCL's defaults (with the profile's system\n"
        "variables, a cure), of the profile's variables\n"
        "(env-only) and of env + the profile's per-size table (tuner-table.txt, as topotune's\n"
        "tuner plugin applies it), and the gain of env + table over env-only and over the\n"
        "defaults. PROFILE: a profile version directory or its profile.json. With --topology\n"
        "every number is PREDICTED by the model (sim backend); with --backend nccl every number\n"
        "is MEASURED by topotune-bench, R runs per configuration, the third with topotune's tuner\n"
        "plugin loaded by NCCL (NCCL_TUNER_PLUGIN) and the table (TOPOTUNE_TUNER_TABLE).",
        opts, 1, 0};
    int npos = 0, rc = util_opts_parse(&cmd, argc, argv, &npos);
    if (rc == 0 && !npos)
        rc = (util_error("topotune verify needs PROFILE (a profile directory)"), UTIL_EUSAGE);
    if (!rc)
        rc = parse_coll(coll, o);
    if (!rc && o->max_bytes < o->min_bytes) /* else a table without a row, and exit 0 */
        rc = (util_error("-e (--maxbytes) %zu is below -b (--minbytes) %zu: give -e at least as "
                         "large as -b",
                         o->max_bytes, o->min_bytes),
              UTIL_EUSAGE);
    if (rc)
        return rc;
    o->profile = argv[1];
    const char *backend = o->backend ? o->backend : "sim";
    if (!strcmp(backend, "nccl"))
        return parse_measured(o);
    if (!o->topology)
        return util_error(
                   "topotune verify needs --topology SPEC for the sim backend (the profile's "
                   "class: a topology file or hardware spec)"),
               UTIL_EUSAGE;
    return 0;
}

int cmd_verify(int argc, char **argv)
{
    struct verify_opts o = {.min_bytes = 8, .max_bytes = 1u << 30, .repeat = 3, .timeout_s = 120};
    int rc = parse(argc, argv, &o);
    if (rc)
        return cli_status(rc);
    char table[4200];
    json_t *profile = verify_load_profile(o.profile, table, sizeof(table));
    if (!profile)
        return 2;
    if (o.backend && !strcmp(o.backend, "nccl")) {
        rc = cli_status(verify_measured(&o, profile, table));
    } else {
        struct topo t;
        topo_init(&t);
        if (topo_load(&t, o.topology)) {
            rc = 2;
        } else { /* a count of sizes where env + table would not run right is a verdict */
            int bad = verify_predicted(&o, profile, table, &t);
            rc = bad > 0 ? 1 : cli_status(bad);
        }
        topo_release(&t);
    }
    json_decref(profile);
    return rc;
}
