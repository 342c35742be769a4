/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for bench/: the correctness pattern of every collective, nccl-tests'
 * counts, flag validation, NCCL log parsing; the model per collective; and for
 * what sweep/ takes from outside: spaces, interface names
 * from a topology, the text of children.
 */
#include "bench/internal.h"
#include "sweep/sweep.h"
#include "model/model.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/error.h"
#include "util/log.h"
#include "util/text.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Reduces nranks filled buffers on the host as a collective would, then checks the result. */
static long long reduce_and_check(int dtype, int op, int nranks, size_t count, int corrupt)
{
    size_t sz = bench_dtype_size(dtype);
    unsigned char *acc = calloc(count, sz), *buf = calloc(count, sz);
    double *sum = calloc(count, sizeof(double));
    assert_non_null(acc);
    struct bench_options o;
    bench_options_init(&o);
    const struct bench_ctx c = {
        .opt = &o, .coll = MODEL_ALL_REDUCE, .dtype = dtype, .op = op, .nranks = nranks};
    const struct bench_counts n = {count, count, count};
    for (int r = 0; r < nranks; r++) {
        bench_coll_fill(&c, buf, &n, r, 7);
        for (size_t i = 0; i < count; i++) {
            double v = bench_get(buf, i, dtype);
            if (r == 0)
                sum[i] = v;
            else if (op == BENCH_OP_SUM || op == BENCH_OP_AVG)
                sum[i] += v;
            else if (op == BENCH_OP_PROD)
                sum[i] *= v;
            else if (op == BENCH_OP_MIN)
                sum[i] = fmin(sum[i], v);
            else
                sum[i] = fmax(sum[i], v);
        }
    }
    for (size_t i = 0; i < count; i++)
        bench_set(acc, i, dtype, op == BENCH_OP_AVG ? sum[i] / nranks : sum[i]);
    if (corrupt)
        bench_set(acc, count - 1, dtype, bench_get(acc, count - 1, dtype) + 1);
    long long wrong = bench_coll_check(&c, acc, &n, 0, 7, 0);
    free(acc);
    free(buf);
    free(sum);
    return wrong;
}

static void test_pattern_exact(void **state)
{
    (void)state;
    const int ranks[] = {1, 2, 3, 8, 63};
    for (int d = 0; d < BENCH_NDTYPES; d++)
        for (int op = 0; op < BENCH_NOPS; op++)
            for (size_t k = 0; k < sizeof(ranks) / sizeof(ranks[0]); k++) {
                char why[256];
                if (bench_pattern_fits(op, d, ranks[k], why, sizeof(why)))
                    continue; /* an int8 avg of 63 ranks: its sum passes 127 */
                assert_int_equal(reduce_and_check(d, op, ranks[k], 257, 0), 0);
                assert_int_equal(reduce_and_check(d, op, ranks[k], 257, 1), 1);
            }
}

/* NCCL averages a floating type as the sum of each input times 1/ranks (premultiplied, every
 * product and partial sum rounded in the type): the check takes that rounding, not an off-by-one.
 */
static void test_avg_premultiplied(void **state)
{
    (void)state;
    const int types[] = {BENCH_HALF, BENCH_BFLOAT16, BENCH_FLOAT, BENCH_DOUBLE};
    const int ranks[] = {3, 6, 24, 48};
    struct bench_options o;
    bench_options_init(&o);
    for (size_t t = 0; t < 4; t++)
        for (size_t k = 0; k < 4; k++) {
            int d = types[t], n = ranks[k], inexact = 0;
            size_t sz = bench_dtype_size(d), count = 2000;
            unsigned char *acc = calloc(count, sz), *one = calloc(1, sz);
            const struct bench_ctx c = {
                .opt = &o, .coll = MODEL_ALL_REDUCE, .dtype = d, .op = BENCH_OP_AVG, .nranks = n};
            const struct bench_counts cnt = {count, count, count};
            bench_set(one, 0, d, 1.0 / n);
            double scale = bench_get(one, 0, d); /* 1/ranks in the type */
            for (size_t i = 0; i < count; i++) {
                double sum = 0;
                for (int r = 0; r < n; r++) {
                    bench_set(one, 0, d, bench_value(i, BENCH_OP_AVG, r, n, 7) * scale);
                    bench_set(one, 0, d, sum + bench_get(one, 0, d));
                    sum = bench_get(one, 0, d);
                }
                bench_set(acc, i, d, sum);
                inexact += sum != bench_expected(i, BENCH_OP_AVG, n, 7);
            }
            if (d == BENCH_FLOAT && n == 3)
                assert_true(inexact > 0); /* an exact comparison would fail NCCL's own result */
            assert_int_equal(bench_coll_check(&c, acc, &cnt, 0, 7, 0), 0);
            bench_set(acc, count / 2, d, bench_get(acc, count / 2, d) + 1);
            assert_int_equal(bench_coll_check(&c, acc, &cnt, 0, 7, 0), 1);
            free(acc);
            free(one);
        }
}

/* A check whose own arithmetic would overflow the type is refused, not reported as wrong. */
static void test_pattern_fits(void **state)
{
    (void)state;
    char why[256];
    assert_int_equal(bench_pattern_fits(BENCH_OP_SUM, BENCH_INT8, 176, why, sizeof(why)), 0);
    assert_int_equal(bench_pattern_fits(BENCH_OP_SUM, BENCH_INT8, 177, why, sizeof(why)),
                     UTIL_EINVAL);
    assert_non_null(strstr(why, "past the 127 int8 holds exactly"));
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_INT8, 42, why, sizeof(why)), 0);
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_INT8, 43, why, sizeof(why)),
                     UTIL_EINVAL);
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_UINT8, 86, why, sizeof(why)),
                     UTIL_EINVAL);
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_FLOAT, 4096, why, sizeof(why)), 0);
    assert_int_equal(bench_pattern_fits(BENCH_OP_SUM, BENCH_BFLOAT16, 440, why, sizeof(why)),
                     UTIL_EINVAL);
    assert_int_equal(bench_pattern_fits(BENCH_OP_MAX, BENCH_INT8, 4096, why, sizeof(why)), 0);
    /* a float average's rounding reaching half the step between the pattern's values */
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_BFLOAT16, 62, why, sizeof(why)), 0);
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_BFLOAT16, 63, why, sizeof(why)),
                     UTIL_EINVAL);
    assert_int_equal(bench_pattern_fits(BENCH_OP_AVG, BENCH_HALF, 511, why, sizeof(why)),
                     UTIL_EINVAL);
}

/* nccl-tests' GetCollByteCount (src/<name>.cu): parts are count / ranks rounded down to 16
 * bytes; the size column is the larger buffer. */
static void test_coll_counts(void **state)
{
    (void)state;
    struct bench_counts n;
    bench_coll_counts(MODEL_ALL_GATHER, 1000, 4, 8, &n); /* 125 floats -> 124 (16-byte parts) */
    assert_int_equal(n.param, 124);
    assert_int_equal(n.send, 124);
    assert_int_equal(n.recv, 992);
    assert_int_equal(bench_coll_size(&n, 4), 3968);
    bench_coll_counts(MODEL_REDUCE_SCATTER, 1000, 2, 3, &n); /* 333 halves -> 328 */
    assert_int_equal(n.param, 328);
    assert_int_equal(n.send, 984);
    assert_int_equal(n.recv, 328);
    bench_coll_counts(MODEL_ALLTOALL, 4096, 1, 4, &n); /* int8: multiples of 16 */
    assert_int_equal(n.param, 1024);
    assert_int_equal(n.send, 4096);
    assert_int_equal(n.recv, 4096);
    bench_coll_counts(MODEL_ALL_GATHER, 15, 1, 1, &n); /* one rank: still 16-byte parts */
    assert_int_equal(n.param, 0);
    for (int c = MODEL_BROADCAST; c < MODEL_NCOLLS; c++) {
        if (c == MODEL_ALLTOALL)
            continue;
        bench_coll_counts(c, 1001, 8, 5, &n); /* the whole buffer, unrounded */
        assert_int_equal(n.param, 1001);
        assert_int_equal(n.send, 1001);
        assert_int_equal(n.recv, 1001);
    }
    /* each iteration's buffers further along, as nccl-tests: 3968 B in 16 KiB: 4 places */
    bench_coll_counts(MODEL_ALL_GATHER, 1000, 4, 8, &n);
    size_t want[] = {0, 3968, 7936, 11904, 0, 3968};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(bench_coll_shift(&n, 4, 16384, i), want[i]);
        assert_true(bench_coll_shift(&n, 4, 16384, i) + bench_coll_size(&n, 4) <= 16384);
    }
    assert_int_equal(bench_coll_shift(&n, 4, 3968, 5), 0);    /* the whole buffer: no room */
    assert_int_equal(bench_coll_shift(&n, 4, 7935, 3), 0);    /* one place only */
    assert_int_equal(bench_coll_shift(&n, 4, 1 << 20, 0), 0); /* the check's iteration */
    /* nccl-tests' bus factors (GetBw) */
    assert_true(fabs(model_coll_bus_factor(MODEL_ALL_REDUCE, 8) - 1.75) < 1e-12);
    assert_true(fabs(model_coll_bus_factor(MODEL_ALL_GATHER, 8) - 0.875) < 1e-12);
    assert_true(fabs(model_coll_bus_factor(MODEL_REDUCE_SCATTER, 4) - 0.75) < 1e-12);
    assert_true(fabs(model_coll_bus_factor(MODEL_ALLTOALL, 2) - 0.5) < 1e-12);
    assert_true(model_coll_bus_factor(MODEL_BROADCAST, 8) == 1);
    assert_true(model_coll_bus_factor(MODEL_REDUCE, 8) == 1);
    assert_true(model_coll_bus_factor(MODEL_SENDRECV, 8) == 1);
    assert_int_equal(model_coll_parse("all_gather_perf"), MODEL_ALL_GATHER);
    assert_int_equal(model_coll_parse("ReduceScatter"), MODEL_REDUCE_SCATTER);
    assert_int_equal(model_coll_parse("alltoall"), MODEL_ALLTOALL);
    assert_int_equal(model_coll_parse("gather"), -1);
    assert_int_equal(model_coll_parse(""), -1);
    /* the model's "cut in parts" is the bench's: a size whose parameter is not the whole buffer */
    for (int c = 0; c < MODEL_NCOLLS; c++) {
        bench_coll_counts(c, 1001, 8, 5, &n);
        assert_int_equal(model_coll_parts(c), n.param != 1001);
    }
    assert_int_equal(model_coll_parts(-1), 0);
}

/* What collective coll leaves in rank r's output, done on the host from every rank's input. */
static void host_collective(const struct bench_ctx *c, const struct bench_counts *n,
                            unsigned char **in, unsigned char *out, int r)
{
    size_t p = n->param;
    int dt = c->dtype, R = c->nranks;
    for (size_t i = 0; i < n->recv; i++) {
        double v = 0;
        switch (c->coll) {
        case MODEL_ALL_GATHER:
            v = bench_get(in[i / p], i % p, dt);
            break;
        case MODEL_ALLTOALL:
            v = bench_get(in[i / p], (size_t)r * p + i % p, dt);
            break;
        case MODEL_BROADCAST:
            v = bench_get(in[c->opt->root], i, dt);
            break;
        case MODEL_SENDRECV:
            v = bench_get(in[(r - 1 + R) % R], i, dt);
            break;
        case MODEL_REDUCE: /* the root's is the reduction; a non-root's cleared buffer stays */
            if (r != c->opt->root) {
                v = 0;
                break;
            }
            /* fall through */
        default: { /* reductions: reduce_scatter's part r, or the whole buffer */
            size_t at = c->coll == MODEL_REDUCE_SCATTER ? (size_t)r * p + i : i;
            for (int k = 0; k < R; k++) {
                double x = bench_get(in[k], at, dt);
                v = k == 0                   ? x
                    : c->op == BENCH_OP_PROD ? v * x
                    : c->op == BENCH_OP_MIN  ? fmin(v, x)
                    : c->op == BENCH_OP_MAX  ? fmax(v, x)
                                             : v + x;
            }
            if (c->op == BENCH_OP_AVG)
                v /= R;
        }
        }
        bench_set(out, i, dt, v);
    }
}

/* Every collective's inputs, done on the host, check clean; one altered element, or a part from
 * the wrong rank, is caught. */
static void test_coll_pattern(void **state)
{
    (void)state;
    const int ranks[] = {2, 3, 8};
    for (int coll = 0; coll < MODEL_NCOLLS; coll++)
        for (int d = 0; d < BENCH_NDTYPES; d += 3) /* int8, uint32, half, bfloat16 */
            for (size_t k = 0; k < 3; k++) {
                struct bench_options o;
                bench_options_init(&o);
                o.root = ranks[k] - 1;
                struct bench_ctx c = {
                    .opt = &o, .coll = coll, .dtype = d, .op = BENCH_OP_SUM, .nranks = ranks[k]};
                struct bench_counts n;
                size_t elt = bench_dtype_size(d);
                bench_coll_counts(coll, 512, elt, ranks[k], &n);
                unsigned char *in[8], *out = calloc(n.recv, elt);
                for (int r = 0; r < ranks[k]; r++) {
                    in[r] = calloc(n.send, elt);
                    bench_coll_fill(&c, in[r], &n, r, 3);
                }
                for (int r = 0; r < ranks[k]; r++) {
                    host_collective(&c, &n, in, out, r);
                    assert_int_equal(bench_coll_check(&c, out, &n, r, 3, 0), 0);
                    bench_set(out, n.recv / 2, d, bench_get(out, n.recv / 2, d) + 1);
                    assert_int_equal(bench_coll_check(&c, out, &n, r, 3, 0), 1);
                }
                if (coll == MODEL_ALL_GATHER || coll == MODEL_ALLTOALL) { /* parts swapped */
                    host_collective(&c, &n, in, out, 0);
                    memcpy(out, out + n.param * elt, n.param * elt);
                    assert_true(bench_coll_check(&c, out, &n, 0, 3, 0) > 0);
                }
                for (int r = 0; r < ranks[k]; r++)
                    free(in[r]);
                free(out);
            }
}

/* Data in the wrong place is caught whatever the ranks, counts and op: a rank handed another
 * rank's reduced part (reduce_scatter, every op, ranks multiple of 3 included), parts 0 and 61
 * swapped among 64 ranks (all_gather), a part count of 244 (alltoall). */
static void test_coll_misplaced(void **state)
{
    (void)state;
    struct bench_options o;
    bench_options_init(&o);
    for (int op = 0; op < BENCH_NOPS; op++)
        for (int n = 2; n <= 12; n++) {
            struct bench_ctx c = {.opt = &o,
                                  .coll = MODEL_REDUCE_SCATTER,
                                  .dtype = BENCH_FLOAT,
                                  .op = op,
                                  .nranks = n};
            struct bench_counts cnt = {.send = 96 * (size_t)n, .recv = 96, .param = 96};
            float out[96];
            for (size_t j = 0; j < 96; j++) /* rank 0 given rank 1's part of the result */
                out[j] = (float)bench_expected(96 + j, op, n, 5);
            assert_true(bench_coll_check(&c, out, &cnt, 0, 5, 0) > 0);
        }
    struct bench_ctx ag = {.opt = &o, .coll = MODEL_ALL_GATHER, .dtype = BENCH_INT8, .nranks = 64};
    struct bench_counts n64;
    bench_coll_counts(MODEL_ALL_GATHER, 64 * 32, 1, 64, &n64);
    unsigned char *in[64], *out = calloc(n64.recv, 1);
    for (int r = 0; r < 64; r++) {
        in[r] = calloc(n64.send, 1);
        bench_coll_fill(&ag, in[r], &n64, r, 1);
    }
    for (int b = 0; b < 64; b++) /* blocks 0 and 61 swapped */
        memcpy(out + (size_t)b * n64.param, in[b == 0 ? 61 : b == 61 ? 0 : b], n64.param);
    assert_true(bench_coll_check(&ag, out, &n64, 3, 1, 0) > 0);
    for (int r = 0; r < 64; r++)
        free(in[r]);
    free(out);
    struct bench_ctx a2a = {.opt = &o, .coll = MODEL_ALLTOALL, .dtype = BENCH_FLOAT, .nranks = 4};
    struct bench_counts n4 = {.send = 4 * 244, .recv = 4 * 244, .param = 244};
    float *src = calloc(n4.send, sizeof(float)), *dst = calloc(n4.recv, sizeof(float));
    for (int b = 0; b < 4; b++) { /* rank 0 handed what rank 1 should have received */
        bench_coll_fill(&a2a, src, &n4, b, 2);
        memcpy(dst + (size_t)b * 244, src + 244, 244 * sizeof(float));
    }
    assert_true(bench_coll_check(&a2a, dst, &n4, 0, 2, 0) > 0);
    free(src);
    free(dst);
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(bench_dtype_parse("bfloat16"), BENCH_BFLOAT16);
    assert_int_equal(bench_dtype_parse("half"), BENCH_HALF);
    assert_int_equal(bench_dtype_parse("float"), BENCH_FLOAT);
    assert_int_equal(bench_dtype_parse("quad"), -1);
    assert_int_equal(bench_op_parse("avg"), BENCH_OP_AVG);
    assert_int_equal(bench_op_parse("mulsum"), -1);
    assert_int_equal(bench_dtype_size(BENCH_DOUBLE), 8);
}

static int parse(const char *line, struct bench_options *o)
{
    char buf[256], *argv[32];
    int argc = 0;
    snprintf(buf, sizeof(buf), "topotune-bench %s", line);
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    return bench_parse_options(argc, argv, o);
}

static void test_options(void **state)
{
    (void)state;
    struct bench_options o;
    util_log_init("test", UTIL_LOG_QUIET);
    assert_int_equal(parse("", &o), 0);
    assert_int_equal(o.min_bytes, 32u << 20); /* nccl-tests' defaults */
    assert_int_equal(o.max_bytes, 32u << 20);
    assert_int_equal(o.iters, 20);
    assert_string_equal(o.backend, "nccl");
    assert_int_equal(parse("-b 8 -e 1G -f 2 -d double -o max --backend mpi -T 30", &o), 0);
    assert_int_equal(o.min_bytes, 8);
    assert_int_equal(o.max_bytes, 1u << 30);
    assert_true(o.step_factor == 2.0);
    assert_true(o.timeout_s == 30.0);
    assert_int_equal(parse("-b 0.5K -e 4M", &o), 0);
    assert_int_equal(o.min_bytes, 512);
    const char *bad[] = {
        "-b 1X",    "-b 8 -e 4", "-d quad",        "-o mulsum",     "-n 0",
        "-g 0",     "-a 7",      "-T -1",          "--backend tcp", "-i 0 -b 8 -e 16",
        "-w",       "--bogus",   "stray",          "-f inf",        "-f 2000",
        "-g 10000", "-b 3 -e 7", "-b 1 -e 3 -f 2", "-b 2000000G",   "-d double -b 4 -e 7"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(parse(bad[i], &o), BENCH_EXIT_USAGE);
    /* Sizes too small for one element are skipped, as nccl-tests does; one is enough. */
    assert_int_equal(parse("-b 3 -e 7 -f 2", &o), 0); /* 3 (nothing), then 6 */
    assert_int_equal(bench_count_sizes(&o, 100), 1);
    assert_int_equal(parse("-b 1 -e 1 -d int8", &o), 0);
    assert_int_equal(parse("-b 8 -e 1G -f 2", &o), 0);
    assert_int_equal(bench_count_sizes(&o, 100), 28);
    assert_int_equal(bench_count_sizes(&o, 5), 5);
    /* More than BENCH_MAX_SIZES sizes are refused (-b 8 -e 1G -i 1 measured 10^9); counting a
     * step of one byte over the whole range stops at the limit, fast. */
    assert_int_equal(parse("-b 0 -e 900000G -i 1 -d double", &o), BENCH_EXIT_USAGE);
    assert_int_equal(parse("-b 8 -e 1G -i 1", &o), BENCH_EXIT_USAGE);
    assert_int_equal(parse("-b 1 -e 10000 -i 1 -d int8", &o), 0); /* exactly the limit */
    assert_int_equal(parse("-b 1 -e 10001 -i 1 -d int8", &o), BENCH_EXIT_USAGE);
    struct bench_options all = {
        .max_bytes = 900000ULL << 30, .step_bytes = 1, .step_factor = 1, .dtype = "double"};
    assert_int_equal(bench_count_sizes(&all, 1000), 1000);
    size_t bytes = 0;
    assert_int_equal(bench_parse_size("0.5K", &bytes), 0);
    assert_int_equal(bytes, 512);
    assert_int_equal(bench_parse_size("1e300", &bytes), -1);
    assert_int_equal(bench_parse_size("nan", &bytes), -1);
    assert_int_equal(bytes, 512);
}

/* Loads a space from text; 0 or UTIL_EINVAL. */
static int space_from(const char *text, struct sweep_space *s)
{
    return sweep_space_load_buffer(s, "test-space", text, strlen(text));
}

#define SPACE_HEAD "{\"schema\": \"topotune/space/1\", "

static void test_space_policy(void **state)
{
    (void)state;
    util_log_init("test", UTIL_LOG_QUIET);
    const char *bad[] = {
        SPACE_HEAD "\"vars\": {\"LD_PRELOAD\": [null, \"/tmp/x.so\"]}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"fixed\": {\"PATH\": \"/tmp\"}}",
        SPACE_HEAD "\"vars\": {\"BASH_ENV\": [null, \"x\"]}}",
        SPACE_HEAD "\"vars\": {\"NCCL_NET_PLUGIN\": [null, \"x\"]}}",
        SPACE_HEAD "\"vars\": {\"HOME\": [null, \"x\"]}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"exclude\": [{\"LD_PRELOAD\": null}]}",
        /* exclude names a variable vars lacks: a typo, never matched */
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"exclude\": [{\"NCCL_ALOG\": null}]}",
        /* '@' only as @interfaces in vars */
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null, \"@cores\"]}}",
        SPACE_HEAD
        "\"vars\": {\"NCCL_ALGO\": [null]}, \"fixed\": {\"NCCL_IB_HCA\": \"@interfaces\"}}",
        /* sizes, factor */
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"sizes\": {\"factor\": 1e308}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"sizes\": {\"factor\": 1}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"sizes\": {\"min\": 0}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"sizes\": {\"max\": \"65G\"}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"sizes\": {\"min\": 1, \"max\": 3}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null]}, \"sizes\": {\"min\": 1, \"max\": \"1G\", "
                   "\"factor\": 1.001}}",
        SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null, 1, \"1\"]}}",
        "{\"schema\": \"topotune/space/1\", \"vars\": ",
    };
    struct sweep_space s;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (space_from(bad[i], &s) != UTIL_EINVAL)
            fail_msg("space %zu loaded: %s", i, bad[i]);
        sweep_space_release(&s);
    }
    /* The shipped spaces and the test fixtures still load. */
    const char *shipped[] = {"/../../profiles/spaces/nccl-default.json",
                             "/../../profiles/spaces/nccl-quick.json",
                             "/../../profiles/spaces/mpi-default.json",
                             "/space-mpi-tiny.json",
                             "/space-mpi-hosts.json",
                             "/space-rtx-faults.json"};
    for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s%s", TOPOTUNE_FIXTURES, shipped[i]);
        if (sweep_space_load(&s, path))
            fail_msg("'%s' does not load", path);
        sweep_space_release(&s);
    }
    assert_int_equal(space_from(SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null, \"Ring\"], "
                                           "\"OMPI_MCA_btl\": [null, \"self,tcp\"]}, "
                                           "\"sizes\": {\"factor\": 1024}}",
                                &s),
                     0);
    sweep_space_release(&s);
}

/* A topology with the given interface names, for @interfaces. */
static void topo_with_interfaces(struct topo *t, const char *const *names, int n)
{
    topo_init(t);
    t->nics = calloc((size_t)n, sizeof(*t->nics));
    t->nnics = n;
    for (int i = 0; i < n; i++) {
        t->nics[i].name = strdup(names[i]);
        t->nics[i].netdev = strdup(names[i]);
    }
}

static void test_space_interfaces(void **state)
{
    (void)state;
    util_log_init("test", UTIL_LOG_QUIET);
    struct sweep_space s;
    assert_int_equal(space_from(SPACE_HEAD "\"vars\": {\"NCCL_SOCKET_IFNAME\": [null, "
                                           "\"@interfaces\", \"=eth0\"]}}",
                                &s),
                     0);
    const char *names[] = {"eth0", "x;reboot", "$(touch p)", "ib0\n", "eth\x1b[31m",
                           "a,b",  "^lo",      "vlan.100",   "ib0",   "sixteen-chars-xy",
                           "..",   "eth0"};
    struct topo t;
    topo_with_interfaces(&t, names, (int)(sizeof(names) / sizeof(names[0])));
    json_decref(sweep_space_prune(&s, &t, 1));
    json_t *list = json_object_get(s.vars, "NCCL_SOCKET_IFNAME");
    char *text = json_dumps(list, JSON_COMPACT);
    /* valid names once each (eth0 is listed by the space and twice by the topology) */
    assert_string_equal(text, "[null,\"=eth0\",\"=vlan.100\",\"=ib0\"]");
    free(text);
    json_t *configs = sweep_space_configs(&s);
    assert_int_equal(json_array_size(configs), 4);
    assert_int_equal(sweep_configs_check(&s, configs), 0);
    json_decref(configs);
    topo_release(&t);
    sweep_space_release(&s);
}

/* A variable the NCCL that runs does not read yet is never swept; unknown NCCL: nothing dropped. */
static void test_space_nccl_versions(void **state)
{
    (void)state;
    util_log_init("test", UTIL_LOG_QUIET);
    assert_int_equal(util_env_nccl_version("2.28.9"), 22809);
    assert_int_equal(util_env_nccl_version("2.28.7+cuda13.0"), 22807);
    assert_int_equal(util_env_nccl_version("2.x"), 0);
    assert_int_equal(util_env_nccl_version("2.28.9 "), 0);
    assert_int_equal(util_env_nccl_version(NULL), 0);
    assert_int_equal(util_env_nccl_since("NCCL_PAT_ENABLE"), 22304);
    assert_int_equal(util_env_nccl_since("NCCL_ALGO"), 0);
    /* read since NVIDIA/nccl v2.12.7-1 (src/transport/net.cc), not first in 2.14 */
    assert_int_equal(util_env_nccl_since("NCCL_NET_DISABLE_INTRA"), 0);
    assert_int_equal(util_env_nccl_gone("NCCL_SHM_MEMCPY_MODE"), 23007);
    assert_int_equal(util_env_nccl_gone("NCCL_ALGO"), 0);
    static const char *space = SPACE_HEAD "\"vars\": {\"NCCL_PAT_ENABLE\": [null, \"0\"], "
                                          "\"NCCL_NVLS_CHUNKSIZE\": [null, \"524288\"], "
                                          "\"NCCL_PROTO\": [null, \"LL\"]}}";
    const char *versions[] = {"2.22.3", "2.23.4", NULL};
    const size_t kept[] = {2, 3, 3};
    for (int i = 0; i < 3; i++) {
        struct sweep_space s;
        struct topo t;
        topo_init(&t);
        t.software.nccl = versions[i] ? strdup(versions[i]) : NULL;
        assert_int_equal(space_from(space, &s), 0);
        json_t *pruned = sweep_space_prune(&s, &t, 1);
        assert_int_equal(json_object_size(s.vars), kept[i]);
        if (i == 0) {
            assert_null(json_object_get(s.vars, "NCCL_PAT_ENABLE"));
            assert_string_equal(
                json_string_value(json_object_get(json_array_get(pruned, 0), "reason")),
                "NCCL 2.22.3 does not read it (NCCL 2.23.4 on does)");
        }
        json_decref(pruned);
        topo_release(&t);
        sweep_space_release(&s);
    }
    /* one NCCL stopped reading: kept up to 2.30.6, dropped from 2.30.7 */
    static const char *gone = SPACE_HEAD "\"vars\": {\"NCCL_SHM_USE_CUDA_MEMCPY\": [null, \"1\"]}}";
    const char *around[] = {"2.30.6", "2.30.7"};
    for (int i = 0; i < 2; i++) {
        struct sweep_space s;
        struct topo t;
        topo_init(&t);
        t.software.nccl = strdup(around[i]);
        assert_int_equal(space_from(gone, &s), 0);
        json_decref(sweep_space_prune(&s, &t, 1));
        assert_int_equal(json_object_size(s.vars), (size_t)(i == 0));
        topo_release(&t);
        sweep_space_release(&s);
    }
}

static void test_space_size(void **state)
{
    (void)state;
    util_log_init("test", UTIL_LOG_QUIET);
    /* 10^12 combinations: refused before anything is built, at once */
    struct util_buf text = UTIL_BUF_INIT;
    static const char *const names[] = {"NCCL_ALGO",          "NCCL_PROTO",    "NCCL_MIN_NCHANNELS",
                                        "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_CTAS",
                                        "NCCL_BUFFSIZE",      "NCCL_NTHREADS", "NCCL_P2P_LEVEL",
                                        "NCCL_IB_TC",         "NCCL_IB_SL",    "NCCL_IB_TIMEOUT"};
    util_buf_adds(&text, SPACE_HEAD "\"vars\": {");
    for (int v = 0; v < 12; v++) {
        util_buf_addf(&text, "%s\"%s\": [", v ? ", " : "", names[v]);
        for (int k = 0; k < 10; k++)
            util_buf_addf(&text, "%s\"%d\"", k ? ", " : "", k);
        util_buf_adds(&text, "]");
    }
    util_buf_adds(&text, "}}");
    struct sweep_space s;
    assert_int_equal(space_from(text.data, &s), 0);
    struct topo t;
    topo_init(&t);
    json_decref(sweep_space_prune(&s, &t, 1));
    assert_true(sweep_space_count(&s) == 1e12);
    clock_t start = clock();
    assert_null(sweep_space_configs(&s));
    s.max_configs = 1000;
    assert_null(sweep_space_configs(&s));
    assert_true((double)(clock() - start) / CLOCKS_PER_SEC < 1);
    sweep_space_release(&s);
    util_buf_release(&text);

    /* 100 x 10 x 10 = 10^4: under the default, above a lower limit */
    assert_int_equal(space_from(SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [0,1,2,3,4,5,6,7,8,9], "
                                           "\"NCCL_PROTO\": [0,1,2,3,4,5,6,7,8,9], "
                                           "\"NCCL_BUFFSIZE\": [0,1,2,3,4,5,6,7,8,9]}}",
                                &s),
                     0);
    json_decref(sweep_space_prune(&s, &t, 1));
    json_t *configs = sweep_space_configs(&s);
    assert_int_equal(json_array_size(configs), 1001); /* and the baseline */
    json_decref(configs);
    s.max_configs = 999;
    assert_null(sweep_space_configs(&s));
    sweep_space_release(&s);

    /* 40000 values, one listed twice at the end: the check is n log n (it took 40 s) */
    util_buf_reset(&text);
    util_buf_adds(&text, SPACE_HEAD "\"vars\": {\"NCCL_ALGO\": [null");
    for (int k = 0; k < 40000; k++)
        util_buf_addf(&text, ", \"v%d\"", k);
    util_buf_adds(&text, ", \"v17\"]}}");
    start = clock();
    assert_int_equal(space_from(text.data, &s), UTIL_EINVAL);
    assert_true((double)(clock() - start) / CLOCKS_PER_SEC < 2);
    sweep_space_release(&s);
    util_buf_release(&text);
    topo_release(&t);
}

/* The last gate: a space built without the loader (as a bug could) never reaches a child. */
static void test_run_env_gate(void **state)
{
    (void)state;
    util_log_init("test", UTIL_LOG_QUIET);
    char dir[] = "/tmp/test-bench-gate-XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct sweep sw;
    memset(&sw, 0, sizeof(sw));
    sw.space.doc = json_loads("{\"vars\": {\"NCCL_ALGO\": [null, \"Ring\"]}, "
                              "\"fixed\": {\"LD_PRELOAD\": \"/tmp/x.so\"}}",
                              0, NULL);
    sw.space.vars = json_deep_copy(json_object_get(sw.space.doc, "vars"));
    sw.configs = sweep_space_configs(&sw.space);
    assert_int_equal(json_array_size(sw.configs), 2);
    sw.dir = dir;
    sw.backend = "mpi";
    sw.launcher = "direct";
    sw.strategy = "grid";
    sw.bench = "/bin/true";
    sw.repeat = 1;
    assert_int_equal(sweep_run(&sw), UTIL_EINVAL);
    char path[128];
    snprintf(path, sizeof(path), "%s/results.jsonl", dir);
    assert_int_equal(access(path, F_OK), -1); /* nothing ran */
    json_decref(sw.configs);
    json_decref(sw.results);
    sweep_space_release(&sw.space);
    rmdir(dir);
}

/* Cleans text; returns the result (static buffer) and the count of replacements in *n. */
static const char *cleaned(const char *text, size_t len, int lines, size_t *n)
{
    static char out[512];
    struct util_buf b = UTIL_BUF_INIT;
    *n = util_text_clean(&b, text, len, lines);
    snprintf(out, sizeof(out), "%s", util_buf_str(&b));
    assert_int_equal(strlen(util_buf_str(&b)), b.len); /* no NUL inside */
    json_t *j = json_stringn(util_buf_str(&b), b.len);
    assert_non_null(j); /* valid UTF-8 */
    json_decref(j);
    util_buf_release(&b);
    return out;
}

#define FFFD                     "\xef\xbf\xbd"
#define CLEAN(literal, lines, n) cleaned(literal, sizeof(literal) - 1, lines, n)

static void test_text_clean(void **state)
{
    (void)state;
    size_t n;
    assert_string_equal(CLEAN("plain \xc3\xa9t\xc3\xa9\n\tok", 1, &n),
                        "plain \xc3\xa9t\xc3\xa9\n\tok");
    assert_int_equal(n, 0);
    assert_string_equal(CLEAN("a\0b", 1, &n), "a" FFFD "b");
    assert_string_equal(CLEAN("\x1b[31mred\x1b[0m", 1, &n), "red");
    assert_int_equal(n, 2);
    assert_string_equal(CLEAN("\x1b]0;title\x07x", 1, &n), "x");
    assert_string_equal(CLEAN("\x1b]52;c;ZXZpbA==\x1b\\x", 1, &n), "x");
    assert_string_equal(CLEAN("\x1b"
                              "c"
                              "x",
                              1, &n),
                        "x");
    assert_string_equal(CLEAN("\x1b(Bx", 1, &n), "x");
    /* unfinished: only ESC and its introducer go, the rest stays text */
    assert_string_equal(CLEAN("\x1b]0;no end\nnext", 1, &n), "0;no end\nnext");
    assert_string_equal(CLEAN("\x1b", 1, &n), "");
    assert_string_equal(CLEAN("\x1b\0x", 1, &n), FFFD "x");
    /* not UTF-8: lone continuation, overlong, surrogate, past U+10FFFF, truncated */
    assert_string_equal(CLEAN("\x80\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82", 1, &n),
                        FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD);
    /* C1 CSI, bidi override, DEL */
    assert_string_equal(CLEAN("\xc2\x9b"
                              "2J\xe2\x80\xae"
                              "a\x7f",
                              1, &n),
                        FFFD "2J" FFFD "a" FFFD);
    assert_int_equal(n, 3);
    /* lines: CR LF is one newline, a lone CR a newline; one line: both replaced */
    assert_string_equal(CLEAN("a\r\nb\rc", 1, &n), "a\nb\nc");
    assert_string_equal(CLEAN("a\nb\tc", 0, &n), "a" FFFD "b" FFFD "c");
}

/* NCCL_DEBUG_FILE as NCCL's debug.cc expands it: the host name cut at its first dot (a dotted
 * node's log was looked for under its whole name, and never found), %% one %. */
static void test_nccl_log_path(void **state)
{
    (void)state;
    static const struct {
        const char *pattern, *host, *want;
    } cases[] = {
        {"/tmp/nccl.%h.%p.log", "gpu01.cluster.example", "/tmp/nccl.gpu01.42.log"},
        {"/tmp/n-%h", "plain", "/tmp/n-plain"},
        {"/tmp/100%%-%h", "a%b/c.d", "/tmp/100%-a-b-c"},
        {"/tmp/x%q%", "h", "/tmp/x%q%"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = bench_nccl_log_path(cases[i].pattern, cases[i].host, 42);
        assert_string_equal(got, cases[i].want);
        free(got);
    }
}

static void test_nccl_log(void **state)
{
    (void)state;
    const char *log = "node1:123:123 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
                      "node1:123:123 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
                      "node1:123:123 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1.\n"
                      "node1:123:123 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to PHB\n"
                      "node1:123:130 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo TREE proto LL "
                      "channel{Lo..Hi}={0..1}\n"
                      "node1:123:130 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto "
                      "SIMPLE channel{Lo..Hi}={0..3}\n"
                      "node1:123:130 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL "
                      "channel{Lo..Hi}={0..0}\n";
    json_t *env = bench_nccl_log_env(log);
    assert_int_equal(json_object_size(env), 3);
    assert_string_equal(json_string_value(json_object_get(env, "NCCL_ALGO")), "Ring");
    assert_string_equal(json_string_value(json_object_get(env, "NCCL_P2P_DISABLE")), "1");
    assert_string_equal(json_string_value(json_object_get(env, "NCCL_P2P_LEVEL")), "PHB");
    json_decref(env);
    char algo[16] = "", proto[16] = "";
    assert_int_equal(bench_nccl_log_choice(log, MODEL_ALL_REDUCE, 1048576, algo, proto), 1);
    assert_string_equal(algo, "RING");
    assert_string_equal(proto, "SIMPLE");
    assert_int_equal(bench_nccl_log_choice(log, MODEL_ALL_REDUCE, 8, algo, proto), 1);
    assert_string_equal(proto, "LL");
    assert_int_equal(bench_nccl_log_choice(log, MODEL_ALL_REDUCE, 4096, algo, proto), 0);
    /* every function by its name, "Reduce" not inside "AllReduce" (NCCL 2.24's enqueue.cc) */
    const char *more = "n:1:2 [0] NCCL INFO AllGather: 131072 Bytes -> Algo NVLS proto SIMPLE "
                       "channel{Lo..Hi}={0..15}\n"
                       "n:1:2 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo TREE proto LL "
                       "channel{Lo..Hi}={0..0}\n"
                       "n:1:2 [0] NCCL INFO Reduce: 4096 Bytes -> Algo RING proto LL128 "
                       "channel{Lo..Hi}={0..1}\n";
    assert_int_equal(bench_nccl_log_choice(more, MODEL_ALL_GATHER, 131072, algo, proto), 1);
    assert_string_equal(algo, "NVLS");
    assert_int_equal(bench_nccl_log_choice(more, MODEL_REDUCE, 4096, algo, proto), 1);
    assert_string_equal(proto, "LL128");
    assert_int_equal(bench_nccl_log_choice(more, MODEL_BROADCAST, 4096, algo, proto), 0);
}

/* ---- the model ---- */

static const char *spec_h100 =
    "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H100-SXM5-80GB\", \"count\": 8, "
    "\"nics\": [{\"model\": \"CX7-400G-IB\", \"count\": 8, \"per\": \"gpu\"}]}";
static const char *spec_l40s =
    "{\"schema\": \"topotune/spec/1\", \"gpu\": \"L40S\", \"count\": 4, "
    "\"nics\": [{\"model\": \"ROCE-200G\", \"count\": 2, \"per\": \"node\"}]}";

static const char *env_list(const char *name, void *ctx)
{
    for (const char **e = ctx; e && *e; e++) {
        size_t len = strlen(name);
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
            return *e + len + 1;
    }
    return NULL;
}

static void model_for(const char *spec, int nodes, const char **env, struct model *m)
{
    struct topo t;
    topo_init(&t);
    assert_int_equal(topo_load_buffer(&t, "spec", spec, strlen(spec)), 0);
    assert_int_equal(model_init(m, &t, nodes, env_list, env), 0);
    topo_release(&t);
}

static double busbw_at(const struct model *m, size_t bytes, const char **algo, const char **proto)
{
    struct model_prediction p;
    assert_int_equal(model_predict(m, bytes, &p), 0);
    assert_true(fabs(p.busbw - p.algbw * 2.0 * (m->nranks - 1) / m->nranks) < 1e-9 * (1 + p.busbw));
    assert_true(fabs(p.algbw - bytes / (p.time_us * 1e-6) / 1e9) < 1e-9 * (1 + p.algbw));
    if (algo)
        *algo = p.algo;
    if (proto)
        *proto = p.proto;
    return p.busbw;
}

static void test_model_rules(void **state)
{
    (void)state;
    struct model m;
    const char *algo, *proto;
    model_for(spec_h100, 1, NULL, &m);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
    assert_true(m.enabled[MODEL_ALGO_NVLS][MODEL_PROTO_SIMPLE]);      /* NVSwitch and SM90 */
    assert_false(m.enabled[MODEL_ALGO_NVLS][MODEL_PROTO_LL]);         /* NVLS is Simple only */
    assert_false(m.enabled[MODEL_ALGO_NVLSTREE][MODEL_PROTO_SIMPLE]); /* off on one node */
    assert_true(m.enabled[MODEL_ALGO_RING][MODEL_PROTO_LL128]);       /* NVLink: LL128 on */
    double nvls = busbw_at(&m, 1u << 30, &algo, NULL);
    assert_string_equal(algo, "NVLS");
    busbw_at(&m, 8, &algo, &proto);
    assert_string_equal(proto, "LL"); /* small messages: latency wins */

    const char *no_nvls[] = {"NCCL_NVLS_ENABLE=0", NULL};
    model_for(spec_h100, 1, no_nvls, &m);
    double ring = busbw_at(&m, 1u << 30, &algo, &proto);
    assert_string_equal(algo, "RING");
    assert_string_equal(proto, "SIMPLE");
    assert_true(ring < nvls);
    /* Ring Simple at 1 GiB: 18 links x 20.6 GB/s = 370.8, less the 14 latency steps. */
    assert_true(ring > 330 && ring < 371);

    model_for(spec_l40s, 1, NULL, &m); /* PCIe only: no LL128, no NVLS */
    assert_false(m.enabled[MODEL_ALGO_RING][MODEL_PROTO_LL128]);
    assert_false(m.enabled[MODEL_ALGO_NVLS][MODEL_PROTO_SIMPLE]);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
    const char *forced[] = {"NCCL_PROTO=LL128", NULL};
    model_for(spec_l40s, 1, forced, &m);
    assert_true(m.ll128_unsafe);
    struct model_prediction p;
    assert_int_equal(model_predict(&m, 1u << 20, &p), 0);
    assert_true(p.wrong);
}

/* Between nodes: a tree on two nodes crosses the network once where a ring crosses twice; hops
 * cost NCCL's network latency times net_lat_scale, and efa_lat_us more each over EFA. */
static void test_model_network(void **state)
{
    (void)state;
    static const char *p4de = /* AWS p4de: 8 A100, 4 x 100G EFA = 50 GB/s per node */
        "{\"schema\": \"topotune/spec/1\", \"gpu\": \"A100-SXM4-80GB\", \"count\": 8, "
        "\"nics\": [{\"model\": \"EFA-100G\", \"count\": 4, \"per\": \"gpu\"}]}";
    static const char *h100_efa = /* the same 3.2 Tb/s per node as spec_h100's 8 x 400G IB */
        "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H100-SXM5-80GB\", \"count\": 8, "
        "\"nics\": [{\"model\": \"EFA-100G\", \"count\": 32, \"per\": \"gpu\"}]}";
    struct model m;
    const char *algo;
    model_for(p4de, 2, NULL, &m);
    assert_true(m.efa);
    /* A ring's busbw cannot pass the NICs' 50 GB/s; the tree's can (published: 78 GB/s). */
    double tree = busbw_at(&m, 2u << 30, &algo, NULL);
    assert_string_equal(algo, "TREE");
    assert_true(tree > 60 && tree < 94);

    struct model ib, efa;
    model_for(spec_h100, 2, NULL, &ib);
    model_for(h100_efa, 2, NULL, &efa);
    assert_false(ib.efa);
    struct model_prediction pi, pe;
    ib.params.efa_lat_us = efa.params.efa_lat_us = 0;
    assert_int_equal(model_predict(&ib, 1u << 20, &pi), 0);
    assert_int_equal(model_predict(&efa, 1u << 20, &pe), 0);
    assert_true(fabs(pi.time_us - pe.time_us) < 1e-9); /* same bandwidth, same hops */
    ib.params.efa_lat_us = efa.params.efa_lat_us = 50;
    assert_int_equal(model_predict(&ib, 1u << 20, &pi), 0);
    assert_int_equal(model_predict(&efa, 1u << 20, &pe), 0);
    assert_true(pe.time_us >= pi.time_us + 50 - 1e-9); /* at least one hop between nodes */

    /* P2P and SHM off: local peers cross the NICs too, no tree gets more than their share. */
    const char *net_only[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", "NCCL_ALGO=Tree", NULL};
    model_for(spec_h100, 2, net_only, &m);
    assert_true(m.intra_net);
    m.params.net_scale = 0.5; /* 8 x 400G at half: 200 GB/s */
    assert_true(busbw_at(&m, 1u << 30, &algo, NULL) < 200);
    /* on one node each GPU sends through its own 400G NIC: 50 GB/s, not the 8 NICs' 400 */
    const char *net_one[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
    model_for(spec_h100, 1, net_one, &m);
    assert_true(m.intra_net);
    assert_true(busbw_at(&m, 1u << 30, &algo, NULL) <= 50 * 1.0001);
    struct model_prediction pn;
    assert_int_equal(model_predict_coll(&m, MODEL_ALLTOALL, 1u << 30, &pn), 0);
    assert_true(pn.busbw <= 50 * 1.0001);
    /* across nodes the local and remote parts share those NICs: no faster than one node */
    model_for(spec_h100, 2, net_one, &m);
    assert_int_equal(model_predict_coll(&m, MODEL_ALLTOALL, 1u << 30, &pn), 0);
    assert_true(pn.busbw <= 50 * 1.0001);

    /* net_lat_scale: hops between nodes only; one node does not move. */
    struct model one;
    model_for(spec_h100, 1, NULL, &one);
    assert_int_equal(model_predict(&one, 1u << 20, &pi), 0);
    one.params.net_lat_scale *= 3;
    assert_int_equal(model_predict(&one, 1u << 20, &pe), 0);
    assert_true(fabs(pi.time_us - pe.time_us) < 1e-9);
    assert_int_equal(model_predict(&ib, 1u << 20, &pi), 0);
    ib.params.net_lat_scale *= 3;
    assert_int_equal(model_predict(&ib, 1u << 20, &pe), 0);
    assert_true(pe.time_us > pi.time_us + 5);
}

/* Per collective, NCCL's rules: broadcast and reduce are Ring only; all_gather and
 * reduce_scatter take Ring, NVLS on one node, PAT with one GPU per node; alltoall and sendrecv
 * are point to point, bounded by the NICs between nodes; NCCL_ALGO per function. */
static void test_model_collectives(void **state)
{
    (void)state;
    struct model m;
    struct model_prediction p;
    model_for(spec_h100, 1, NULL, &m);
    for (int c = 0; c < MODEL_NCOLLS; c++)
        for (size_t b = 1024; b <= (1u << 30); b *= 32) {
            assert_int_equal(model_predict_coll(&m, c, b, &p), 0);
            assert_true(p.time_us > 0);
            assert_true(fabs(p.algbw - b / (p.time_us * 1e-6) / 1e9) < 1e-9 * (1 + p.algbw));
            assert_true(fabs(p.busbw - p.algbw * model_coll_bus_factor(c, 8)) <
                        1e-9 * (1 + p.busbw));
            if (c == MODEL_BROADCAST || c == MODEL_REDUCE)
                assert_string_equal(p.algo, "RING");
            if (c == MODEL_ALLTOALL || c == MODEL_SENDRECV)
                assert_string_equal(p.algo, "P2P");
        }
    assert_true(m.enabled_coll[MODEL_ALL_GATHER][MODEL_ALGO_NVLS][MODEL_PROTO_SIMPLE]);
    assert_false(m.enabled_coll[MODEL_ALL_GATHER][MODEL_ALGO_TREE][MODEL_PROTO_SIMPLE]);
    assert_false(m.enabled_coll[MODEL_ALL_GATHER][MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE]); /* 8/node */
    /* A ring all_gather moves what a ring all_reduce does per step: the same busbw, less
     * latency (n - 1 steps, not 2(n - 1)). */
    const char *ring[] = {"NCCL_ALGO=Ring", NULL};
    model_for(spec_h100, 1, ring, &m);
    struct model_prediction ar, ag;
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_REDUCE, 1u << 30, &ar), 0);
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_GATHER, 1u << 30, &ag), 0);
    assert_true(fabs(ag.busbw - ar.busbw) < 0.02 * ar.busbw);
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_REDUCE, 4096, &ar), 0);
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_GATHER, 4096, &ag), 0);
    assert_true(ag.time_us < ar.time_us);
    /* NCCL_ALGO per function: Tree for all_reduce leaves all_gather its Ring; Tree for all
     * leaves all_gather nothing (NCCL: no algorithm), all_reduce its Tree. */
    const char *per_func[] = {"NCCL_ALGO=allreduce:tree", NULL};
    model_for(spec_h100, 2, per_func, &m);
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_GATHER, 1u << 20, &p), 0);
    assert_string_equal(p.algo, "RING");
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_REDUCE, 1u << 20, &p), 0);
    assert_string_equal(p.algo, "TREE");
    const char *tree[] = {"NCCL_ALGO=Tree", NULL};
    model_for(spec_h100, 2, tree, &m);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
    assert_int_equal(model_predict_coll(&m, MODEL_ALL_GATHER, 1u << 20, &p), -1);
    assert_int_equal(model_predict_coll(&m, MODEL_BROADCAST, 1u << 20, &p), -1);
    assert_int_equal(model_predict_coll(&m, MODEL_ALLTOALL, 1u << 20, &p), 0); /* no algorithm */
    /* PAT: one GPU per node, off with NCCL_PAT_ENABLE=0 */
    static const char *one_gpu = "{\"schema\": \"topotune/spec/1\", \"gpu\": \"H100-SXM5-80GB\", "
                                 "\"count\": 1, \"nics\": [{\"model\": \"CX7-400G-IB\", "
                                 "\"count\": 1, \"per\": \"gpu\"}]}";
    model_for(one_gpu, 8, NULL, &m);
    assert_true(m.enabled_coll[MODEL_ALL_GATHER][MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE]);
    assert_false(m.enabled_coll[MODEL_ALL_REDUCE][MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE]);
    const char *no_pat[] = {"NCCL_PAT_ENABLE=0", NULL};
    model_for(one_gpu, 8, no_pat, &m);
    assert_false(m.enabled_coll[MODEL_ALL_GATHER][MODEL_ALGO_PAT][MODEL_PROTO_SIMPLE]);
    /* Between nodes, alltoall's parts for other nodes share the NICs; sendrecv's crossing pair
     * has one NIC (400G: 50 GB/s). */
    struct model one, two;
    model_for(spec_h100, 1, NULL, &one);
    model_for(spec_h100, 2, NULL, &two);
    struct model_prediction a1, a2;
    assert_int_equal(model_predict_coll(&one, MODEL_ALLTOALL, 1u << 30, &a1), 0);
    assert_int_equal(model_predict_coll(&two, MODEL_ALLTOALL, 1u << 30, &a2), 0);
    assert_true(a2.busbw < a1.busbw / 2);
    assert_int_equal(model_predict_coll(&two, MODEL_SENDRECV, 1u << 30, &a2), 0);
    assert_true(a2.busbw <= 50.0 * two.params.net_scale + 1e-9);
    assert_int_equal(model_predict_coll(&two, MODEL_NCOLLS, 1024, &a2), -1);
    /* A protocol list for another function forces nothing here: on PCIe, LL128 stays off
     * (NCCL keeps its own rule where the string is silent); named here, it is forced. */
    const char *other[] = {"NCCL_PROTO=allgather:Simple", NULL};
    model_for(spec_l40s, 1, other, &m);
    assert_false(m.ll128_unsafe);
    assert_false(m.enabled_coll[MODEL_ALL_REDUCE][MODEL_ALGO_RING][MODEL_PROTO_LL128]);
    const char *named[] = {"NCCL_PROTO=allreduce:LL128", NULL};
    model_for(spec_l40s, 1, named, &m);
    assert_true(m.ll128_unsafe);
    assert_false(m.enabled_coll[MODEL_ALL_GATHER][MODEL_ALGO_RING][MODEL_PROTO_LL128]);
}

static void test_model_env(void **state)
{
    (void)state;
    struct model m;
    const char *algo, *proto;
    model_for(spec_h100, 1, NULL, &m);
    double base = busbw_at(&m, 1u << 30, NULL, NULL);
    const char *unknown[] = {"NCCL_FOO=1", "SOMETHING=else", NULL};
    model_for(spec_h100, 1, unknown, &m);
    assert_true(busbw_at(&m, 1u << 30, NULL, NULL) == base); /* unknown variables change nothing */

    const char *per_func[] = {"NCCL_ALGO=allreduce:tree;broadcast:ring", NULL};
    model_for(spec_h100, 1, per_func, &m);
    busbw_at(&m, 1u << 30, &algo, NULL);
    assert_string_equal(algo, "TREE");
    const char *exclude[] = {"NCCL_ALGO=^nvls,tree", NULL};
    model_for(spec_h100, 1, exclude, &m);
    busbw_at(&m, 1u << 30, &algo, NULL);
    assert_string_equal(algo, "RING");
    const char *ll[] = {"NCCL_PROTO=LL", NULL};
    model_for(spec_h100, 1, ll, &m);
    busbw_at(&m, 1u << 30, NULL, &proto);
    assert_string_equal(proto, "LL");

    const char *no_nvls[] = {"NCCL_NVLS_ENABLE=0", NULL};
    const char *few_ctas[] = {"NCCL_NVLS_ENABLE=0", "NCCL_MAX_CTAS=4", NULL};
    const char *small_buf[] = {"NCCL_NVLS_ENABLE=0", "NCCL_BUFFSIZE=65536", NULL};
    const char *no_p2p[] = {"NCCL_NVLS_ENABLE=0", "NCCL_P2P_DISABLE=1", NULL};
    model_for(spec_h100, 1, no_nvls, &m);
    double ring = busbw_at(&m, 1u << 30, NULL, NULL);
    model_for(spec_h100, 1, few_ctas, &m);
    assert_true(busbw_at(&m, 1u << 30, NULL, NULL) < ring * 0.5);
    model_for(spec_h100, 1, small_buf, &m);
    assert_true(busbw_at(&m, 1u << 30, NULL, NULL) < ring);
    model_for(spec_h100, 1, no_p2p, &m);
    assert_false(m.intra_nvlink); /* through host memory instead */
    assert_true(busbw_at(&m, 1u << 30, NULL, NULL) < ring * 0.2);
    const char *no_p2p_shm[] = {"NCCL_P2P_DISABLE=1", "NCCL_SHM_DISABLE=1", NULL};
    model_for(spec_h100, 1, no_p2p_shm, &m);
    assert_true(m.intra_net);

    /* Two nodes: the network matters; IB off or GDR off costs bandwidth. */
    model_for(spec_h100, 2, no_nvls, &m);
    assert_int_equal(m.nranks, 16);
    double two = busbw_at(&m, 1u << 30, NULL, NULL);
    const char *no_ib[] = {"NCCL_NVLS_ENABLE=0", "NCCL_IB_DISABLE=1", NULL};
    model_for(spec_h100, 2, no_ib, &m);
    assert_true(busbw_at(&m, 1u << 30, NULL, NULL) < two * 0.5);
    const char *no_gdr[] = {"NCCL_NVLS_ENABLE=0", "NCCL_NET_GDR_LEVEL=LOC", NULL};
    model_for(spec_h100, 2, no_gdr, &m);
    assert_true(m.inter_bw < 400);
}

static void test_model_faults(void **state)
{
    (void)state;
    struct model m;
    const char *ifname[] = {"NCCL_SOCKET_IFNAME=^ib,eth,lo", NULL};
    model_for(spec_h100, 1, ifname, &m);
    assert_int_equal(m.fault, MODEL_FAULT_FAIL_INIT);
    const char *ifname_ok[] = {"NCCL_SOCKET_IFNAME==ib3", NULL};
    model_for(spec_h100, 1, ifname_ok, &m);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
    const char *hca[] = {"NCCL_IB_HCA=^mlx5", NULL};
    model_for(spec_h100, 1, hca, &m);
    assert_int_equal(m.fault, MODEL_FAULT_FAIL_INIT);
    const char *bad_algo[] = {"NCCL_ALGO=Rinng", NULL};
    model_for(spec_h100, 1, bad_algo, &m);
    assert_int_equal(m.fault, MODEL_FAULT_FAIL_INIT);
    const char *nothing[] = {"NCCL_ALGO=NVLS", "NCCL_PROTO=LL", NULL};
    model_for(spec_h100, 1, nothing, &m);
    assert_int_equal(m.fault, MODEL_FAULT_FAIL_COLL);
    /* the stock driver offers no P2P on these GPUs: NCCL goes through host memory, no hang */
    const char *stock = "{\"schema\": \"topotune/spec/1\", \"gpu\": \"RTX-4090\", \"count\": 4}";
    model_for(stock, 1, NULL, &m);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
    assert_false(m.intra_nvlink);
    assert_true(m.intra_bw > 0 && m.intra_bw <= 0.8 * 24 + 1e-9);
    /* a driver that offers P2P whose transfers hang: NCCL hangs at init */
    const char *rtx = "{\"schema\": \"topotune/spec/1\", \"gpu\": \"RTX-4090\", \"count\": 4, "
                      "\"p2p\": \"broken\"}";
    model_for(rtx, 1, NULL, &m);
    assert_int_equal(m.fault, MODEL_FAULT_HANG_INIT);
    const char *p2p_off[] = {"NCCL_P2P_DISABLE=1", NULL};
    model_for(rtx, 1, p2p_off, &m);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
    const char *p2p_phb[] = {"NCCL_P2P_LEVEL=LOC", NULL};
    model_for(rtx, 1, p2p_phb, &m);
    assert_int_equal(m.fault, MODEL_FAULT_NONE);
}

static void test_noise(void **state)
{
    (void)state;
    uint64_t a = 42, b = 42, c = 43;
    double sum = 0, sq = 0;
    for (int i = 0; i < 10000; i++) {
        double x = model_noise(&a, 0.05);
        assert_true(x == model_noise(&b, 0.05)); /* same seed, same sequence */
        sum += log(x);
        sq += log(x) * log(x);
    }
    double mean = sum / 10000, sd = sqrt(sq / 10000 - mean * mean);
    assert_true(fabs(mean) < 0.005 && fabs(sd - 0.05) < 0.005);
    assert_true(model_noise(&a, 0.05) != model_noise(&c, 0.05));
    assert_true(model_noise(&c, 0) == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_exact),
        cmocka_unit_test(test_avg_premultiplied),
        cmocka_unit_test(test_pattern_fits),
        cmocka_unit_test(test_coll_counts),
        cmocka_unit_test(test_coll_pattern),
        cmocka_unit_test(test_coll_misplaced),
        cmocka_unit_test(test_model_collectives),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_nccl_log_path),
        cmocka_unit_test(test_nccl_log),
        cmocka_unit_test(test_model_rules),
        cmocka_unit_test(test_model_network),
        cmocka_unit_test(test_model_env),
        cmocka_unit_test(test_model_faults),
        cmocka_unit_test(test_noise),
        cmocka_unit_test(test_space_policy),
        cmocka_unit_test(test_space_interfaces),
        cmocka_unit_test(test_space_nccl_versions),
        cmocka_unit_test(test_space_size),
        cmocka_unit_test(test_run_env_gate),
        cmocka_unit_test(test_text_clean),
    };
    return cmocka_run_group_tests_name("unit.bench", tests, NULL, NULL);
}
