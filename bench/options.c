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
    "[-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-n ITERS] [-w WARMUP] [-c CHECKS]\n"
    "       [-d TYPE] [-o OP] [-g GPUS] [-T SECONDS] [-a MODE] [--backend nccl|mpi|sim]\n"
    "       [--json FILE|-] [--topology FILE [--nodes N] [--seed S] [--noise SIGMA]\n"
    "       [--calibration FILE]]\n"
    "       [--split node|H1,H2;H3,H4...]";

struct raw_options {
    const char *b, *e, *i, *f, *n, *w, *c, *d, *o, *g, *T, *a, *backend, *json, *topology, *nodes,
        *seed, *noise, *split, *calibration;
    int version;
};

/* "8", "1K", "0.5G", "4M": bytes, with binary suffixes as nccl-tests reads them. */
int bench_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024.0, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024.0 * 1024 * 1024, end++;
    if (end == s || *end || errno || !(v >= 0) || v * mult > (double)BENCH_MAX_BYTES)
        return -1;
    *out = (size_t)llround(v * mult);
    return 0;
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

static int parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static int bad(const char *flag, const char *value, const char *want)
{
    error("invalid value '%s' for %s: %s", value, flag, want);
    return BENCH_EXIT_USAGE;
}

#define SIZE_WANT "expected bytes from 0 to 10^15 (931322G) with an optional K, M or G suffix"

/* A run that would measure no size is refused: it would exit 0 having checked nothing; one
 * that would measure more than BENCH_MAX_SIZES sizes is refused before it runs for days. */
static int measures_something(const struct bench_options *o)
{
    size_t n = bench_count_sizes(o, BENCH_MAX_SIZES + 1);
    if (n > BENCH_MAX_SIZES) {
        error(
            "-b %zu to -e %zu by %s measures more than %d sizes: give a larger -i or a -f above 1",
            o->min_bytes, o->max_bytes, o->step_factor > 1 ? "-f" : "-i", BENCH_MAX_SIZES);
        return BENCH_EXIT_USAGE;
    }
    if (n)
        return 0;
    size_t tsize = bench_dtype_size(bench_dtype_parse(o->dtype));
    error("-b %zu to -e %zu measures nothing: no size holds one %s element (%zu bytes); give %s "
          "at least %zu",
          o->min_bytes, o->max_bytes, o->dtype, tsize, o->max_bytes < tsize ? "-b and -e" : "-b",
          tsize);
    return BENCH_EXIT_USAGE;
}

static int convert(const struct raw_options *r, struct bench_options *o)
{
    if (r->b && bench_parse_size(r->b, &o->min_bytes))
        return bad("-b (--minbytes)", r->b, SIZE_WANT);
    if (r->e && bench_parse_size(r->e, &o->max_bytes))
        return bad("-e (--maxbytes)", r->e, SIZE_WANT);
    if (r->i && bench_parse_size(r->i, &o->step_bytes))
        return bad("-i (--stepbytes)", r->i, SIZE_WANT);
    if (r->f) {
        char *end;
        o->step_factor = strtod(r->f, &end);
        if (end == r->f || *end || !(o->step_factor >= 0 && o->step_factor <= 1024))
            return bad("-f (--stepfactor)", r->f,
                       "expected a number up to 1024 (2 doubles the size each step)");
    }
    if (r->n && parse_int(r->n, 1, 1000000000, &o->iters))
        return bad("-n (--iters)", r->n, "expected an integer from 1 to 1000000000");
    if (r->w && parse_int(r->w, 0, 1000000000, &o->warmup))
        return bad("-w (--warmup_iters)", r->w, "expected an integer from 0 to 1000000000");
    if (r->c && parse_int(r->c, 0, 1000000, &o->check))
        return bad("-c (--check)", r->c,
                   "expected an integer from 0 to 1000000 (0 disables the check)");
    if (r->g && parse_int(r->g, 1, 1024, &o->ngpus))
        return bad("-g (--ngpus)", r->g, "expected a number of GPUs from 1 to 1024");
    if (r->a && parse_int(r->a, 0, 3, &o->average))
        return bad("-a (--average)", r->a, "expected 0 (rank 0), 1 (mean), 2 (min) or 3 (max)");
    if (r->T) {
        char *end;
        o->timeout_s = strtod(r->T, &end);
        if (end == r->T || *end || !(o->timeout_s >= 0))
            return bad("-T (--timeout)", r->T, "expected seconds, 0 to disable");
    }
    if (r->d) {
        if (bench_dtype_parse(r->d) < 0)
            return bad("-d (--datatype)", r->d,
                       "expected one of int8 uint8 int32 uint32 int64 uint64 half float double "
                       "bfloat16");
        o->dtype = r->d;
    }
    if (r->o) {
        if (bench_op_parse(r->o) < 0)
            return bad("-o (--op)", r->o, "expected one of sum prod min max avg");
        o->op = r->o;
    }
    if (r->backend) {
        if (strcmp(r->backend, "nccl") && strcmp(r->backend, "mpi") && strcmp(r->backend, "sim"))
            return bad("--backend", r->backend, "expected nccl, mpi or sim");
        o->backend = r->backend;
    }
    o->json = r->json;
    o->topology = r->topology;
    o->calibration = r->calibration;
    if (r->nodes && parse_int(r->nodes, 1, 4096, &o->nodes))
        return bad("--nodes", r->nodes, "expected a number of nodes from 1 to 4096");
    int seed = 0;
    if (r->seed && parse_int(r->seed, 0, 2147483647, &seed))
        return bad("--seed", r->seed, "expected an integer from 0 to 2147483647");
    o->seed = (unsigned)seed;
    if (r->noise) {
        char *end;
        o->noise = strtod(r->noise, &end);
        if (end == r->noise || *end || !(o->noise >= 0 && o->noise <= 1))
            return bad("--noise", r->noise,
                       "expected a fraction from 0 to 1 (0.02: 2% run-to-run spread)");
    }
    if ((r->topology || r->nodes || r->seed || r->noise || r->calibration) &&
        strcmp(o->backend, "sim") != 0) {
        error("--topology, --nodes, --seed, --noise and --calibration belong to --backend sim");
        return BENCH_EXIT_USAGE;
    }
    if (r->split) {
        size_t n = strlen(r->split);
        if (!n || n > (1u << 20) ||
            strspn(r->split, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                             "TUVWXYZ0123456789._-,;") != n)
            return bad("--split", r->split,
                       "expected node, or groups of host names: h1,h2;h3,h4 (a comma joins hosts "
                       "of a group, a semicolon separates groups)");
        if (!strcmp(o->backend, "sim"))
            return bad("--split", r->split,
                       "the sim backend has no hosts to split: use "
                       "'topotune survey --backend sim'");
        o->split = r->split;
    }
    if (o->max_bytes < o->min_bytes) {
        error("-e (--maxbytes) %zu is below -b (--minbytes) %zu: give -e at least as large as -b",
              o->max_bytes, o->min_bytes);
        return BENCH_EXIT_USAGE;
    }
    if (o->step_factor <= 1 && o->step_bytes == 0 && o->max_bytes > o->min_bytes)
        return bad("-i (--stepbytes)", r->i ? r->i : "0",
                   "a step of 0 never reaches -e: give -i above 0 or -f above 1");
    return measures_something(o);
}

int bench_parse_options(int argc, char **argv, struct bench_options *o)
{
    *o = (struct bench_options){
        .backend = "nccl",
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
    };
    struct raw_options r = {0};
    const struct util_opt opts[] = {
        {"minbytes", 'b', UTIL_OPT_STRING, &r.b, "SIZE", "smallest size (default 32M)"},
        {"maxbytes", 'e', UTIL_OPT_STRING, &r.e, "SIZE", "largest size (default 32M)"},
        {"stepbytes", 'i', UTIL_OPT_STRING, &r.i, "SIZE", "step added between sizes (default 1M)"},
        {"stepfactor", 'f', UTIL_OPT_STRING, &r.f, "FACTOR",
         "step multiplying the size (wins over -i)"},
        {"iters", 'n', UTIL_OPT_STRING, &r.n, "N", "timed iterations per size (default 20)"},
        {"warmup_iters", 'w', UTIL_OPT_STRING, &r.w, "N",
         "warm-up iterations per size (default 5)"},
        {"check", 'c', UTIL_OPT_STRING, &r.c, "N",
         "correctness passes per size, 0 disables (default 1)"},
        {"datatype", 'd', UTIL_OPT_STRING, &r.d, "TYPE",
         "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16"},
        {"op", 'o', UTIL_OPT_STRING, &r.o, "OP", "sum prod min max avg (default sum)"},
        {"ngpus", 'g', UTIL_OPT_STRING, &r.g, "N", "GPUs driven by this process (nccl backend)"},
        {"timeout", 'T', UTIL_OPT_STRING, &r.T, "SECONDS",
         "give up on a wait after SECONDS, exit 4 (default 0: off)"},
        {"average", 'a', UTIL_OPT_STRING, &r.a, "MODE",
         "combine rank times: 0 rank 0, 1 mean, 2 min, 3 max"},
        {"backend", 0, UTIL_OPT_STRING, &r.backend, "NAME", "nccl (default), mpi or sim"},
        {"json", 0, UTIL_OPT_STRING, &r.json, "FILE", "JSON Lines events to FILE, or - for stdout"},
        {"topology", 0, UTIL_OPT_STRING, &r.topology, "FILE", "sim: topology or spec to predict"},
        {"nodes", 0, UTIL_OPT_STRING, &r.nodes, "N",
         "sim: number of nodes (default: the topology's)"},
        {"seed", 0, UTIL_OPT_STRING, &r.seed, "S",
         "sim: noise seed (default 1): same seed, same output"},
        {"noise", 0, UTIL_OPT_STRING, &r.noise, "SIGMA", "sim: run-to-run spread (default 0.02)"},
        {"calibration", 0, UTIL_OPT_STRING, &r.calibration, "FILE",
         "sim: the model's parameters (topotune/calibration/1)"},
        {"split", 0, UTIL_OPT_STRING, &r.split, "GROUPS",
         "a communicator per node (node) or per group of hosts (h1,h2;h3,h4), all in one launch"},
        {"version", 0, UTIL_OPT_FLAG, &r.version, NULL, "print the version and exit"},
        {0},
    };
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0;
    int rc = util_opts_parse("topotune-bench", bench_usage, opts, argc, argv, pos, &npos);
    if (rc == 0 && npos) {
        error("unexpected argument '%s' (see 'topotune-bench --help')", pos[0]);
        rc = UTIL_EUSAGE;
    }
    free(pos);
    if (rc)
        return rc > 0 ? 1 : BENCH_EXIT_USAGE;
    if (r.version) { /* the project's one version, as topotune --version prints it */
        printf("topotune-bench %s\n", util_version());
        return 1;
    }
    return convert(&r, o);
}
