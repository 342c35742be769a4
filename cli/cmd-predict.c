/* SPDX-License-Identifier: MIT */
/*
 * `topotune predict`: the model's time, algbw, busbw and algorithm/protocol
 * per size of a collective (-C, all_reduce by default) for a topology or hardware spec, under the
 * given environment only (not this shell's), headed "predicted" everywhere.
 * --json writes topotune-bench's JSON Lines events with "predicted": true.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "model/model.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct predict_opts {
    const char *input, *calibration, *collective;
    size_t min, max;
    int nodes, json;
    struct util_opt_list env_list;
    struct cli_env env;
};

static int parse(int argc, char **argv, struct predict_opts *o)
{
    const struct util_opt opts[] = {
        {"collective", 'C', UTIL_OPT_STRING, &o->collective, "NAME",
         "all_reduce (default) all_gather reduce_scatter broadcast reduce alltoall sendrecv"},
        {"input", 'i', UTIL_OPT_STRING, &o->input, "FILE",
         "hwloc XML, NCCL topology XML, topology JSON or hardware spec"},
        {"nodes", 0, UTIL_OPT_INT, &o->nodes, "N", "nodes of that kind (default: the input's)",
         .min = 1, .max = 4096},
        {"env", 0, UTIL_OPT_LIST, &o->env_list, "NAME=VALUE",
         "a variable of the configuration (repeatable); this shell's do not count"},
        {"calibration", 0, UTIL_OPT_STRING, &o->calibration, "FILE",
         "the model's parameters from a calibration file (topotune/calibration/1)"},
        {"minbytes", 'b', UTIL_OPT_SIZE, &o->min, "SIZE", "smallest size (default 8)",
         .max = (double)BENCH_MAX_BYTES},
        {"maxbytes", 'e', UTIL_OPT_SIZE, &o->max, "SIZE", "largest size (default 1G)",
         .max = (double)BENCH_MAX_BYTES},
        {"json", 0, UTIL_OPT_FLAG, &o->json, NULL,
         "topotune-bench's JSON events, marked predicted, instead of the table"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune predict",
        "--input FILE [-C COLLECTIVE] [--nodes N] [--env NAME=VALUE]... [--calibration FILE]\n"
        "       [-b MIN] [-e MAX] [--json]\n\n"
        "Predicted collective per size (float, sum) from the topotune model, at the sizes\n"
        "topotune-bench runs. Exit 1 when the model predicts a hang, an init failure or wrong\n"
        "results, or when no size in -b..-e is left.",
        opts, 0, 0};
    int npos = 0, rc = util_opts_parse(&cmd, argc, argv, &npos);
    if (rc)
        return rc;
    if (o->max < o->min)
        return util_error("-e (--maxbytes) %zu is below -b (--minbytes) %zu: give -e at least as "
                          "large as -b",
                          o->max, o->min),
               UTIL_EUSAGE;
    if (cli_env_check(&o->env, &o->env_list))
        return UTIL_EUSAGE;
    if (!o->input)
        return util_error("topotune predict needs --input FILE (a topology or hardware spec)"),
               UTIL_EUSAGE;
    int coll = model_coll_parse(o->collective ? o->collective : "all_reduce");
    if (coll < 0)
        return util_error("invalid value '%s' for -C (--collective): expected one of %s",
                          o->collective, model_coll_names()),
               UTIL_EUSAGE;
    o->collective = model_coll_name(coll);
    return 0;
}

/* A row, with the bands a healthy system measures in (the model's measured error): busbw's, and
 * the time's the other way round (algbw's is busbw's, the same factor apart). */
static void print_row(int coll, size_t bytes, size_t count, const struct model_prediction *p)
{
    struct model_band b = model_band_for(coll, bytes);
    char busbw[64];
    snprintf(busbw, sizeof(busbw), "%.2f-%.2f", p->busbw * b.low, p->busbw * b.high);
    printf("   predicted  %12zu  %12zu  %9.2f  %7.2f  %7.2f  %-8s  %-6s  %-13s  %.2f-%.2f\n", bytes,
           count, p->time_us, p->algbw, p->busbw, p->algo, p->proto, busbw, p->time_us / b.high,
           p->time_us / b.low);
}

/* The text table; --json goes through the benchmark's own events instead. */
static int report(struct predict_opts *o, const struct topo *t, const struct model *m,
                  const struct bench_options *bo)
{
    if (o->json) {
        if (m->fault != MODEL_FAULT_NONE)
            fprintf(stderr, "# predicted outcome: %s: %s\n", model_fault_words(m->fault), m->why);
        json_t *env = json_object(); /* the --env list, never this shell's */
        for (int i = 0; i < o->env.n; i++) {
            const char *eq = strchr(o->env.vars[i], '=');
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)(eq - o->env.vars[i]), o->env.vars[i]);
            json_object_set_new(env, name, json_string(eq + 1));
        }
        int rc = bench_predict_events(bo, m, env) == BENCH_EXIT_OK ? 0 : 1;
        json_decref(env);
        return rc;
    }
    int coll = model_coll_parse(o->collective);
    int chain = coll == MODEL_BROADCAST || coll == MODEL_REDUCE;
    struct model_band small = model_band_for(coll, 1); /* the band's own edges, not a figure */
    char wide[160];
    snprintf(wide, sizeof(wide),
             ", cut from broadcast's and reduce's published rows; up to 4 MiB it is wide: there "
             "the model may predict %.1fx too high or %.1fx too low",
             1 / small.low, small.high);
    printf("# PREDICTED %s (float%s) by the topotune model: no measurement; the band is where 90%% "
           "of healthy systems measure (docs/model.md, \"Bands\"%s)\n",
           o->collective, model_coll_reduces(coll) ? ", sum" : "",
           coll == MODEL_ALL_REDUCE ? ""
           : chain                  ? wide
                                    : ", cut from all_gather's, reduce_scatter's, alltoall's and "
                                      "sendrecv's published rows");
    struct util_buf src = UTIL_BUF_INIT; /* a path: a line end in it would forge table lines */
    printf("# input %s, class %s\n", util_text_shown(&src, o->input),
           t->class_id ? t->class_id : "?");
    util_buf_release(&src);
    printf("# %d node(s) x %d GPU(s) = %d ranks", model_hosts(m), model_gpus_per_host(m),
           m->nranks);
    if (m->clique > 1) /* MNNVL: what NCCL's tuning, and so the model's choice, sees */
        printf(" (NCCL: %d node(s) of %d, NVLink domains)", m->nodes, m->ppn);
    printf("; environment:");
    for (int i = 0; i < o->env.n; i++)
        printf(" %s", o->env.vars[i]);
    printf("%s\n#\n#            %12s  %12s  %9s  %7s  %7s  %-8s  %-6s  %-13s  %s\n",
           o->env.n ? "" : " (NCCL defaults)", "size (B)", "count", "time (us)", "algbw", "busbw",
           "algo", "proto", "band (busbw)", "band (time)");
    /* the units, as nccl-tests gives them on a line of their own */
    printf("#            %12s  %12s  %9s  %7s  %7s  %-8s  %-6s  %-13s  %s\n", "", "(elements)", "",
           "(GB/s)", "(GB/s)", "", "", "(GB/s)", "(us)");
    /* NCCL_ALGO/NCCL_PROTO leaving all_reduce nothing leave another collective its own */
    if (m->fault != MODEL_FAULT_NONE &&
        (m->fault != MODEL_FAULT_FAIL_COLL || coll == MODEL_ALL_REDUCE)) {
        printf("# predicted outcome: %s: %s\n", model_fault_words(m->fault), m->why);
        return 1;
    }
    int wrong = 0, rows = 0;
    for (size_t size = bo->min_bytes ? bo->min_bytes : 1; size <= bo->max_bytes; size *= 2) {
        struct model_prediction p;
        size_t count, bytes = bench_float_size(coll, size, m->nranks, &count);
        if (!bytes) /* as topotune-bench and --json: no float for every rank, skipped */
            continue;
        if (model_predict_coll(m, coll, bytes, &p)) {
            printf("# predicted outcome: error: no algorithm and protocol usable at %zu B\n",
                   bytes);
            return 1; /* never an empty or cut prediction with exit 0 */
        }
        print_row(coll, bytes, count, &p);
        wrong |= p.wrong;
        rows++;
    }
    if (!rows) {
        printf("# predicted outcome: nothing predicted: no size in -b..-e gives every rank a "
               "float to move\n");
        return 1;
    }
    if (wrong)
        printf("# predicted outcome: wrong results: %s\n",
               "LL128 forced where NCCL would not enable it corrupts data");
    return wrong ? 1 : 0;
}

int cmd_predict(int argc, char **argv)
{
    struct predict_opts o = {.min = 8, .max = 1u << 30};
    int rc = parse(argc, argv, &o);
    if (rc)
        return cli_status(rc);
    /* the sizes doubling from -b to -e, as the sim backend of topotune-bench gives them */
    struct bench_options bo;
    bench_options_init(&bo);
    bo.backend = "sim";
    bo.min_bytes = o.min;
    bo.max_bytes = o.max;
    bo.step_factor = 2;
    bo.json = "-";
    bo.collective = o.collective ? o.collective : "all_reduce";
    struct topo t;
    topo_init(&t);
    struct model m;
    if (topo_load(&t, o.input)) {
        rc = 2;
    } else if (model_init(&m, &t, o.nodes, cli_env_lookup, &o.env)) {
        util_error("topology '%s' has no NVIDIA GPU%s: nothing to predict", o.input,
                   t.other_gpus ? " (its GPUs are of another vendor: NCCL drives none)" : "");
        rc = 2;
    } else if (o.calibration && model_params_load(&m.params, o.calibration)) {
        rc = 2;
    } else {
        model_warn_assumed(&m, &t, o.input);
        rc = report(&o, &t, &m, &bo);
    }
    topo_release(&t);
    return rc;
}
