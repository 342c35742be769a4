/* SPDX-License-Identifier: MIT */
/*
 * `topotune expect`: what a healthy system should measure, per size with a band, from the model
 * (a topology, a spec or this node) or a profile's runs, as a table, JSON, nccl-tests'
 * NCCL_TESTS_MIN_BW, Prometheus alerting rules or an LBNL NHC check (expect/).
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "expect/expect.h"
#include "model/model.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/text.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

struct expect_opts {
    const char *input, *profile, *calibration, *format, *collective, *class_id;
    size_t min, max;
    int nodes, factor;
    struct util_opt_list env_list;
    struct cli_env env;
};

static int parse(int argc, char **argv, struct expect_opts *o, int *status)
{
    const struct util_opt opts[] = {
        {"collective", 'C', UTIL_OPT_STRING, &o->collective, "NAME",
         "all_reduce (default) all_gather reduce_scatter broadcast reduce alltoall sendrecv"},
        {"input", 'i', UTIL_OPT_STRING, &o->input, "FILE",
         "hwloc XML, NCCL topology XML, topology JSON or hardware spec (default: this node)"},
        {"profile", 'p', UTIL_OPT_STRING, &o->profile, "DIR",
         "a profile (its directory or profile.json): its measured runs are the reference"},
        {"nodes", 0, UTIL_OPT_INT, &o->nodes, "N", "nodes of that kind (default: the input's)",
         .min = 1, .max = 4096},
        {"env", 0, UTIL_OPT_LIST, &o->env_list, "NAME=VALUE",
         "a variable of the configuration predicted (repeatable; default NCCL's defaults); the "
         "NHC check runs with it"},
        {"calibration", 0, UTIL_OPT_STRING, &o->calibration, "FILE",
         "the model's parameters from a calibration file (topotune/calibration/1)"},
        {"minbytes", 'b', UTIL_OPT_SIZE, &o->min, "SIZE", "smallest size (default 8)", .min = 1,
         .max = (double)BENCH_MAX_BYTES},
        {"maxbytes", 'e', UTIL_OPT_SIZE, &o->max, "SIZE", "largest size (default 1G)",
         .max = (double)BENCH_MAX_BYTES},
        {"stepfactor", 'f', UTIL_OPT_INT, &o->factor, "N",
         "each size N times the last, as nccl-tests' -f (default 2)", .min = 2, .max = 1024},
        {"class", 0, UTIL_OPT_STRING, &o->class_id, "ID",
         "the node class the Prometheus rules select and the NHC check is named for (topotune "
         "topo prints a node's; default the input's)"},
        {"format", 0, UTIL_OPT_CHOICE, &o->format, "FORMAT",
         "text (default), json, nccl-tests-min-bw, prometheus-rules or nhc",
         .choices = "text json nccl-tests-min-bw prometheus-rules nhc"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune expect",
        "[-C COLLECTIVE] [--input FILE | --profile DIR] [--nodes N] [--env NAME=VALUE]...\n"
        "       [--calibration FILE] [-b MIN] [-e MAX] [-f N] [--class ID]\n"
        "       [--format text|json|nccl-tests-min-bw|prometheus-rules|nhc]\n\n"
        "What a healthy system should measure: a collective's busbw and time per size with a\n"
        "band, predicted by the model (and its measured error) or measured by a profile's runs.",
        opts, 0, 0};
    int npos = 0;
    if (cli_parse(&cmd, argc, argv, &npos, status))
        return 1;
    if (o->max < o->min)
        return *status = 2, util_error("-e (--maxbytes) %zu is below -b (--minbytes) %zu: give "
                                       "-e at least as large as -b",
                                       o->max, o->min);
    if (o->input && o->profile)
        return *status = 2, util_error("give --input or --profile, not both: a profile's "
                                       "numbers are measured, the input's predicted");
    if (o->collective && model_coll_parse(o->collective) < 0)
        return *status = 2, util_error("-C '%s': not a collective; give one of %s", o->collective,
                                       model_coll_names());
    if (o->profile && o->collective && model_coll_parse(o->collective) != MODEL_ALL_REDUCE)
        return *status = 2, util_error("-C %s with --profile: a profile's runs measured "
                                       "all_reduce; give --input for the model's %s",
                                       o->collective, o->collective);
    if (o->profile && (o->nodes || o->calibration || o->env_list.n))
        return *status = 2, util_error("--nodes, --env and --calibration belong to a prediction: "
                                       "a profile's runs had their own nodes and configuration");
    if (cli_env_check(&o->env, &o->env_list))
        return *status = 2, 1;
    if (o->class_id && !topo_class_id_valid(o->class_id))
        return *status = 2, util_error("--class '%s': not a node class id (letters, digits, '.', "
                                       "'-', '_'; topotune topo prints a node's)",
                                       o->class_id);
    return 0;
}

static int write_as(const struct expect_opts *o, const struct expect *e)
{
    int rc = 0;
    if (!strcmp(o->format, "json")) {
        json_t *j = expect_json(e);
        rc = json_dumpf(j, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) ? UTIL_EIO : 0;
        json_decref(j);
        putchar('\n');
    } else if (!strcmp(o->format, "nccl-tests-min-bw")) {
        char bw[32];
        size_t min, max;
        int factor;
        rc = expect_checkable(e);
        if (!rc) /* the mean it is of must be one nccl-tests run's */
            rc = expect_series(e, &min, &max, &factor);
        if (!rc) { /* stdout stays one NAME=VALUE line (export "$(...)"); what it is, on stderr */
            printf("NCCL_TESTS_MIN_BW=%s\n", expect_min_bw_text(e, bw));
            util_info("NCCL_TESTS_MIN_BW: %s; holds for a run of %s on %d ranks at -b %zu -e %zu "
                      "-f %d exactly (its Avg bus bandwidth is the mean over the sizes run)%s%s",
                      e->measured ? "measured" : "predicted", model_coll_name(e->coll), e->nranks,
                      min, max, factor, e->env[0] ? ", with " : "", e->env);
        }
    } else if (!strcmp(o->format, "prometheus-rules")) {
        rc = expect_write_prometheus_rules(e, stdout);
    } else if (!strcmp(o->format, "nhc")) {
        rc = expect_write_nhc(e, stdout);
    } else {
        expect_print(e, stdout);
    }
    if (!rc && (fflush(stdout) || ferror(stdout)))
        rc = UTIL_EIO;
    if (rc == UTIL_EIO)
        util_error("cannot write the expectation to stdout");
    return rc;
}

/* The model's expectation for the input (NULL: this node): 0, 1 when the model predicts a fault
 * instead of a bandwidth, or a UTIL_E* code. */
static int predicted(const struct expect_opts *o, struct expect *e)
{
    struct topo t;
    topo_init(&t);
    struct model m;
    int rc = topo_load(&t, o->input);
    if (!rc && model_init(&m, &t, o->nodes, cli_env_lookup, (void *)&o->env)) {
        if (o->input)
            rc = util_error("topology '%s' has no NVIDIA GPU%s: nothing to expect", o->input,
                            t.other_gpus ? " (its GPUs are of another vendor: NCCL drives none)"
                                         : "");
        else /* the environment's: exit 3, as the man page says */
            rc = util_error("this node has no GPU visible: nothing to expect (give --input a "
                            "hardware file)"),
            rc = UTIL_EENV;
    }
    if (!rc && o->calibration && model_params_load(&m.params, o->calibration))
        rc = UTIL_EINVAL;
    if (!rc && m.fault != MODEL_FAULT_NONE) {
        util_error("the model predicts no bandwidth for '%s' with %s: %s (see topotune predict; "
                   "--env sets a configuration)",
                   o->input ? o->input : "this node",
                   o->env.n ? "that configuration" : "NCCL's defaults", m.why);
        rc = 1; /* a verdict about the hardware, not bad input: status 1 */
    }
    char words[512] = "";
    for (int i = 0, at = 0; i < o->env.n && at < (int)sizeof(words); i++)
        at +=
            snprintf(words + at, sizeof(words) - (size_t)at, "%s%s", i ? " " : "", o->env.vars[i]);
    if (!rc && strlen(words) + 1 >= sizeof(words))
        rc =
            util_error("--env: the configuration is longer than %zu characters", sizeof(words) - 1),
        rc = UTIL_EUSAGE;
    if (!rc)
        rc = expect_predicted(e, &m, &t, o->input ? o->input : "this node", words,
                              o->collective ? model_coll_parse(o->collective) : MODEL_ALL_REDUCE,
                              o->min, o->max, o->factor);
    if (!rc && o->calibration) { /* numbers of other parameters: say whose, wherever they go */
        struct util_buf shown = UTIL_BUF_INIT;
        snprintf(e->calibration, sizeof(e->calibration), "%s", o->calibration);
        size_t used = strlen(e->basis);
        snprintf(e->basis + used, sizeof(e->basis) - used,
                 "; the model's parameters from calibration file '%s', not its defaults",
                 util_text_shown(&shown, o->calibration));
        util_buf_release(&shown);
    }
    topo_release(&t);
    return rc;
}

int cmd_expect(int argc, char **argv)
{
    struct expect_opts o = {.min = 8, .max = 1u << 30, .factor = 2, .format = "text"};
    int status = 0;
    if (parse(argc, argv, &o, &status))
        return status;
    struct expect e;
    int rc = o.profile ? expect_measured(&e, o.profile, o.min, o.max) : predicted(&o, &e);
    if (!rc && o.class_id) {
        snprintf(e.class_id, sizeof(e.class_id), "%s", o.class_id);
    } else if (!rc && e.class_of_no_node && !strcmp(o.format, "prometheus-rules")) {
        util_error("--format prometheus-rules: the class of '%s' (%s) is no live node's (a "
                   "spec's or NCCL topology file's matrix and CPU are its own), so the rules "
                   "would select no node's series: give --class with the id topotune topo "
                   "prints on a node of this hardware",
                   e.source, e.class_id);
        expect_release(&e);
        rc = UTIL_EUSAGE;
    }
    if (!rc) {
        rc = write_as(&o, &e);
        expect_release(&e);
    }
    return cli_status(rc);
}
