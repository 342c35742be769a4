/* SPDX-License-Identifier: MIT */
/* topotune-bench's flags: nccl-tests' letters, meanings and defaults, checked before anything runs.
 */
#include "bench/internal.h"
#include "util/error.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/version.h"
#include "util/size.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage[] =
    "[-C COLLECTIVE] [-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-n ITERS] [-w WARMUP]\n"
    "       [-c CHECKS] [-d TYPE] [-o OP] [-r ROOT] [-g GPUS] [-T SECONDS] [-a MODE] [--backend "
    "nccl|mpi|sim]\n"
    "       [--json FILE|-] [--topology FILE [--nodes N] [--seed S] [--noise SIGMA]\n"
    "       [--calibration FILE]]\n"
    "       [--split node|H1,H2;H3,H4...] [--metrics FILE]";

/* What the flags gave before the checks that involve several of them; -1 or NULL: not given. */
struct raw_options {
    const char *backend, *json, *topology, *split, *calibration, *d, *o, *metrics, *collective;
    size_t i; /* SIZE_MAX: not given */
    int nodes, seed;
    double noise;
    int version;
};

/* "8", "1K", "0.5G", "4M": bytes, with binary suffixes as nccl-tests reads them. */
int bench_parse_size(const char *s, size_t *out)
{
    return util_parse_size(s, 0, (double)BENCH_MAX_BYTES, out) ? -1 : 0;
}

size_t bench_next_size(const struct bench_options *o, size_t size)
{
    return util_next_size(size, o->step_factor, o->step_bytes, o->max_bytes);
}

size_t bench_count_sizes(const struct bench_options *o, size_t limit)
{
    int dtype = bench_dtype_parse(o->dtype ? o->dtype : "float");
    size_t tsize = bench_dtype_size(dtype < 0 ? BENCH_FLOAT : dtype), n = 0;
    /* Every step grows the size by at least 1: at most tsize - 1 steps measure nothing. */
    for (size_t size = o->min_bytes; size <= o->max_bytes && size != SIZE_MAX && n < limit;
         size = bench_next_size(o, size))
        n += size >= tsize;
    return n;
}

/* A run that would measure no size is refused: it would exit 0 having checked nothing; one
 * that would measure more than BENCH_MAX_SIZES sizes is refused before it runs for days. */
static int measures_something(const struct bench_options *o)
{
    size_t n = bench_count_sizes(o, BENCH_MAX_SIZES + 1);
    if (n > BENCH_MAX_SIZES) {
        util_error(
            "-b %zu to -e %zu by %s measures more than %d sizes: give a larger -i or a -f above 1",
            o->min_bytes, o->max_bytes, o->step_factor > 1 ? "-f" : "-i", BENCH_MAX_SIZES);
        return BENCH_EXIT_USAGE;
    }
    if (n)
        return 0;
    size_t tsize = bench_dtype_size(bench_dtype_parse(o->dtype));
    util_error(
        "-b %zu to -e %zu measures nothing: no size holds one %s element (%zu bytes); give %s "
        "at least %zu",
        o->min_bytes, o->max_bytes, o->dtype, tsize, o->max_bytes < tsize ? "-b and -e" : "-b",
        tsize);
    return BENCH_EXIT_USAGE;
}

/* The checks that involve more than one flag (each flag's own range is in its table entry). */
static int convert(const struct raw_options *r, struct bench_options *o)
{
    if (r->collective) {
        int coll = model_coll_parse(r->collective);
        if (coll < 0) {
            util_error("invalid value '%s' for -C (--collective): expected one of %s",
                       r->collective, model_coll_names());
            return BENCH_EXIT_USAGE;
        }
        o->collective = model_coll_name(coll);
    }
    if (r->i != SIZE_MAX)
        o->step_bytes = r->i;
    if (r->d) {
        if (bench_dtype_parse(r->d) < 0) {
            util_error("invalid value '%s' for -d (--datatype): expected one of int8 uint8 int32 "
                       "uint32 int64 uint64 half float double bfloat16",
                       r->d);
            return BENCH_EXIT_USAGE;
        }
        o->dtype = r->d;
    }
    if (r->o) {
        if (bench_op_parse(r->o) < 0) {
            util_error("invalid value '%s' for -o (--op): expected one of sum prod min max avg",
                       r->o);
            return BENCH_EXIT_USAGE;
        }
        o->op = r->o;
    }
    o->backend = r->backend ? r->backend : o->backend;
    o->json = r->json;
    o->metrics = r->metrics;
    if (r->metrics && !strcmp(r->metrics, "-")) {
        util_error("--metrics -: standard output holds the results table (or --json's events): "
                   "give a file");
        return BENCH_EXIT_USAGE;
    }
    if (r->metrics && r->split) {
        util_error("--metrics and --split: a split launch's numbers are per group (topotune "
                   "survey --metrics exports them per node)");
        return BENCH_EXIT_USAGE;
    }
    o->topology = r->topology;
    o->calibration = r->calibration;
    o->nodes = r->nodes;
    o->seed = r->seed >= 0 ? (unsigned)r->seed : o->seed;
    o->noise = r->noise >= 0 ? r->noise : o->noise;
    if ((r->topology || r->nodes || r->seed >= 0 || r->noise >= 0 || r->calibration) &&
        strcmp(o->backend, "sim") != 0) {
        util_error(
            "--topology, --nodes, --seed, --noise and --calibration belong to --backend sim");
        return BENCH_EXIT_USAGE;
    }
    if (r->split) {
        size_t n = strlen(r->split);
        if (!n || n > (1u << 20) ||
            strspn(r->split, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                             "TUVWXYZ0123456789._-,;") != n) {
            util_error("invalid value '%s' for --split: expected node, or groups of host names: "
                       "h1,h2;h3,h4 (a comma joins hosts of a group, a semicolon separates groups)",
                       r->split);
            return BENCH_EXIT_USAGE;
        }
        if (!strcmp(o->backend, "sim")) {
            util_error("--split: the sim backend has no hosts to split: use 'topotune survey "
                       "--backend sim'");
            return BENCH_EXIT_USAGE;
        }
        o->split = r->split;
    }
    if (o->max_bytes < o->min_bytes) {
        util_error(
            "-e (--maxbytes) %zu is below -b (--minbytes) %zu: give -e at least as large as -b",
            o->max_bytes, o->min_bytes);
        return BENCH_EXIT_USAGE;
    }
    if (o->step_factor <= 1 && o->step_bytes == 0 && o->max_bytes > o->min_bytes) {
        util_error(
            "-i (--stepbytes) 0: a step of 0 never reaches -e: give -i above 0 or -f above 1");
        return BENCH_EXIT_USAGE;
    }
    return measures_something(o);
}

void bench_options_init(struct bench_options *o)
{
    *o = (struct bench_options){
        .backend = "nccl",
        .collective = "all_reduce",
        .min_bytes = 32u << 20,
        .max_bytes = 32u << 20,
        .step_bytes = 1u << 20,
        .step_factor = 1,
        .iters = 20,
        .warmup = 5,
        .check = 1,
        .ngpus = 1,
        .average = -1,
        .dtype = "float",
        .op = "sum",
        .seed = 1,
        .noise = 0.02,
        .min_bw = -1,
    };
}

/* NCCL_TESTS_MIN_BW, which nccl-tests reads leniently (a word is 0 there: never failing); here
 * an empty value is unset and one that is not a number of GB/s is refused, naming the variable.
 * -1 is nccl-tests' default, "unchecked" (its JSON says so): a script may set it to turn the
 * check off. */
static int min_bw_from_env(struct bench_options *o)
{
    const char *v = getenv("NCCL_TESTS_MIN_BW");
    if (!v || !*v)
        return 0;
    double x;
    if (util_parse_double(v, -1e9, 1e9, &x)) {
        util_error("invalid value '%.40s' for NCCL_TESTS_MIN_BW: expected GB/s, a number (the run "
                   "fails when its Avg bus bandwidth is below 0.9 x it; -1: unchecked)",
                   v);
        return BENCH_EXIT_USAGE;
    }
    o->min_bw = x;
    return 0;
}

int bench_parse_options(int argc, char **argv, struct bench_options *o)
{
    bench_options_init(o);
    struct raw_options r = {.i = SIZE_MAX, .seed = -1, .noise = -1};
    const double max = (double)BENCH_MAX_BYTES;
    const struct util_opt opts[] = {
        {"collective", 'C', UTIL_OPT_STRING, &r.collective, "NAME",
         "all_reduce (default) all_gather reduce_scatter broadcast reduce alltoall sendrecv"},
        {"root", 'r', UTIL_OPT_INT, &o->root, "RANK",
         "broadcast's and reduce's root rank (default 0)", .max = 1 << 20},
        {"minbytes", 'b', UTIL_OPT_SIZE, &o->min_bytes, "SIZE", "smallest size (default 32M)",
         .max = max},
        {"maxbytes", 'e', UTIL_OPT_SIZE, &o->max_bytes, "SIZE", "largest size (default 32M)",
         .max = max},
        {"stepbytes", 'i', UTIL_OPT_SIZE, &r.i, "SIZE", "step added between sizes (default 1M)",
         .max = max},
        {"stepfactor", 'f', UTIL_OPT_DOUBLE, &o->step_factor, "FACTOR",
         "step multiplying the size (wins over -i)", .max = 1024,
         .hint = "2 doubles the size each step"},
        {"iters", 'n', UTIL_OPT_INT, &o->iters, "N", "timed iterations per size (default 20)",
         .min = 1, .max = 1e9},
        {"warmup_iters", 'w', UTIL_OPT_INT, &o->warmup, "N",
         "warm-up iterations per size (default 5)", .max = 1e9},
        {"check", 'c', UTIL_OPT_INT, &o->check, "N",
         "correctness passes per size, 0 disables (default 1)", .max = 1e6,
         .hint = "0 disables the check"},
        {"datatype", 'd', UTIL_OPT_STRING, &r.d, "TYPE",
         "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16"},
        {"op", 'o', UTIL_OPT_STRING, &r.o, "OP", "sum prod min max avg (default sum)"},
        {"ngpus", 'g', UTIL_OPT_INT, &o->ngpus, "N", "GPUs driven by this process (nccl backend)",
         .min = 1, .max = 1024, .hint = "a number of GPUs"},
        {"timeout", 'T', UTIL_OPT_DOUBLE, &o->timeout_s, "SECONDS",
         "give up on a wait after SECONDS, exit 4 (default 0: off)", .max = 1e9,
         .hint = "seconds, 0 to disable"},
        {"average", 'a', UTIL_OPT_INT, &o->average, "MODE",
         "combine rank times: 0 rank 0, 1 mean, 2 min, 3 max", .max = 3,
         .hint = "0 rank 0, 1 mean, 2 min, 3 max"},
        {"backend", 0, UTIL_OPT_CHOICE, &r.backend, "NAME", "nccl (default), mpi or sim",
         .choices = "nccl mpi sim"},
        {"json", 0, UTIL_OPT_STRING, &r.json, "FILE", "JSON Lines events to FILE, or - for stdout"},
        {"topology", 0, UTIL_OPT_STRING, &r.topology, "FILE", "sim: topology or spec to predict"},
        {"nodes", 0, UTIL_OPT_INT, &r.nodes, "N", "sim: number of nodes (default: the topology's)",
         .min = 1, .max = 4096},
        {"seed", 0, UTIL_OPT_INT, &r.seed, "S",
         "sim: noise seed (default 1): same seed, same output", .max = 2147483647},
        {"noise", 0, UTIL_OPT_DOUBLE, &r.noise, "SIGMA", "sim: run-to-run spread (default 0.02)",
         .max = 1, .hint = "a fraction: 0.02 is a 2% run-to-run spread"},
        {"calibration", 0, UTIL_OPT_STRING, &r.calibration, "FILE",
         "sim: the model's parameters (topotune/calibration/1)"},
        {"split", 0, UTIL_OPT_STRING, &r.split, "GROUPS",
         "a communicator per node (node) or per group of hosts (h1,h2;h3,h4), all in one launch"},
        {"metrics", 0, UTIL_OPT_STRING, &r.metrics, "FILE",
         "Prometheus metrics of the run to FILE (node_exporter's textfile collector)"},
        {"version", 0, UTIL_OPT_FLAG, &r.version, NULL, "print the version and exit"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune-bench", bench_usage, opts, 0, 0};
    int npos = 0, rc = util_opts_parse(&cmd, argc, argv, &npos);
    if (rc)
        return rc > 0 ? 1 : BENCH_EXIT_USAGE;
    if (r.version) { /* the project's one version, as topotune --version prints it */
        printf("topotune-bench %s\n", util_version());
        return 1;
    }
    rc = convert(&r, o);
    return rc ? rc : min_bw_from_env(o);
}
