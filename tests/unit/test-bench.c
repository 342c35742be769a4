/* SPDX-License-Identifier: MIT */
/* Unit tests for bench/: the correctness pattern, flag validation, NCCL log parsing. */
#include "bench/internal.h"
#include "util/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Reduces nranks filled buffers on the host as a collective would, then checks the result. */
static long long reduce_and_check(int dtype, int op, int nranks, size_t count, int corrupt)
{
    size_t sz = bench_dtype_size(dtype);
    unsigned char *acc = calloc(count, sz), *buf = calloc(count, sz);
    double *sum = calloc(count, sizeof(double));
    assert_non_null(acc);
    for (int r = 0; r < nranks; r++) {
        bench_fill(buf, count, dtype, op, r, nranks, 7);
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
    long long wrong = bench_check(acc, count, dtype, op, nranks, 7);
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
                if (d == BENCH_INT8 && op == BENCH_OP_AVG && ranks[k] > 40)
                    continue; /* rank 0 holds ranks + 2: int8 stops at 127 */
                assert_int_equal(reduce_and_check(d, op, ranks[k], 257, 0), 0);
                assert_int_equal(reduce_and_check(d, op, ranks[k], 257, 1), 1);
            }
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
    const char *bad[] = {"-b 1X", "-b 8 -e 4", "-d quad", "-o mulsum",     "-n 0",
                         "-g 0",  "-a 7",      "-T -1",   "--backend tcp", "-i 0 -b 8 -e 16",
                         "-w",    "--bogus",   "stray"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(parse(bad[i], &o), BENCH_EXIT_USAGE);
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
    assert_int_equal(bench_nccl_log_choice(log, 1048576, algo, proto), 1);
    assert_string_equal(algo, "RING");
    assert_string_equal(proto, "SIMPLE");
    assert_int_equal(bench_nccl_log_choice(log, 8, algo, proto), 1);
    assert_string_equal(proto, "LL");
    assert_int_equal(bench_nccl_log_choice(log, 4096, algo, proto), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_exact),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_nccl_log),
    };
    return cmocka_run_group_tests_name("unit.bench", tests, NULL, NULL);
}
