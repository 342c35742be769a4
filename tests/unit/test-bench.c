/* SPDX-License-Identifier: MIT */
/* Unit tests for bench/: the correctness pattern, flag validation, NCCL log parsing. */
#include "bench/internal.h"
#include "sweep/sweep.h"
#include "model/model.h"
#include "topo/topo.h"
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
                         "-w",    "--bogus",   "stray",   "-f inf",        "-f 2000"};
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
    const char *rtx = "{\"schema\": \"topotune/spec/1\", \"gpu\": \"RTX-4090\", \"count\": 4}";
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
        cmocka_unit_test(test_pattern_exact), cmocka_unit_test(test_names),
        cmocka_unit_test(test_options),       cmocka_unit_test(test_nccl_log),
        cmocka_unit_test(test_model_rules),   cmocka_unit_test(test_model_env),
        cmocka_unit_test(test_model_faults),  cmocka_unit_test(test_noise),
    };
    return cmocka_run_group_tests_name("unit.bench", tests, NULL, NULL);
}
