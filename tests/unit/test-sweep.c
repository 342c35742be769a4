/* SPDX-License-Identifier: MIT */
/* Unit tests for sweep/ without a process: what a space may say (each refusal one change from a
 * good space), the configurations it expands to and their ids, pruning by the topology, the
 * checks gen and compare rely on, and the plans of the grid and halving strategies replayed from
 * results on file (as --resume does: nothing runs). */
#include "sweep/internal.h"
#include "topo/topo.h"
#include "util/error.h"
#include "util/file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct topo h100; /* one HGX H100 node: NVSwitch, InfiniBand, no EFA */
static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    topo_init(&h100);
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/topotune-unit-sweep-XXXXXX");
    return topo_load(&h100, TOPOTUNE_FIXTURES "/../../profiles/specs/hgx-h100.json") ||
                   !mkdtemp(tmpdir)
               ? -1
               : 0;
}

static int teardown(void **state)
{
    (void)state;
    topo_release(&h100);
    return util_remove_tree_at(AT_FDCWD, tmpdir, 4);
}

#define GOOD                                                                                       \
    "{\"schema\": \"topotune/space/1\", \"backend\": \"nccl\", \"sizes\": {\"min\": \"1M\", "      \
    "\"max\": \"1M\"}, \"vars\": {\"NCCL_ALGO\": [null, \"Ring\", \"Tree\"], \"NCCL_PROTO\": "     \
    "[null, \"LL128\"]}, \"iters\": 16, \"repeat\": 2}"

/* The good space with key set to value (JSON text; NULL: the key removed); 0 when it loads. */
static int load_with(const char *key, const char *value)
{
    json_t *doc = json_loads(GOOD, 0, NULL);
    assert_non_null(doc);
    if (value)
        json_object_set_new(doc, key, json_loads(value, JSON_DECODE_ANY, NULL));
    else
        json_object_del(doc, key);
    char *text = json_dumps(doc, 0);
    struct sweep_space s;
    int rc = sweep_space_load_buffer(&s, "test.json", text, strlen(text));
    sweep_space_release(&s);
    free(text);
    json_decref(doc);
    return rc;
}

static void refused(const char *key, const char *value)
{
    if (load_with(key, value) != UTIL_EINVAL)
        fail_msg("a space with %s: %s was not refused", key, value ? value : "(removed)");
}

/* What a space leaves out takes the documented defaults. */
static void space_good_takes_defaults(void **state)
{
    (void)state;
    struct sweep_space s;
    const char *min = "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_ALGO\": [\"Ring\"]}}";
    assert_int_equal(sweep_space_load_buffer(&s, "min.json", min, strlen(min)), 0);
    assert_int_equal(s.repeat, 3);
    assert_int_equal(s.iters, 20);
    assert_int_equal(s.warmup, 5);
    assert_true(s.timeout_s == 120 && s.cv_max == 0.05 && s.factor == 2);
    assert_true(s.min_bytes == 8 && s.max_bytes == 1u << 30);
    assert_true(s.obj_min == s.min_bytes && s.obj_max == s.max_bytes);
    assert_int_equal(s.nsizes, 28); /* 2^3 .. 2^30 */
    sweep_space_release(&s);
    assert_int_equal(load_with("note", "\"fine\""), 0);
}

/* A variable must be a valid name, one a space may set, and swept or fixed, not both. */
static void space_refuses_unknown_variables(void **state)
{
    (void)state;
    refused("vars", "{\"nccl_algo\": [\"Ring\"]}");     /* not [A-Z_]... */
    refused("vars", "{\"LD_PRELOAD\": [\"/x.so\"]}");   /* util_env_refused */
    refused("vars", "{\"NCCL-ALGO\": [\"Ring\"]}");     /* a dash */
    refused("vars", "{\"NCCL_MADE_UP\": [\"1\"]}");     /* on no allow-list */
    refused("vars", "{\"NCCL_NET\": [\"Socket\"]}");    /* picks a plugin by name */
    refused("vars", "{}");                              /* nothing to sweep */
    refused("vars", "{\"NCCL_ALGO\": []}");             /* an empty list */
    refused("fixed", "{\"NCCL_ALGO\": \"Ring\"}");      /* swept and fixed */
    refused("fixed", "{\"PATH\": \"/tmp\"}");           /* refused fixed too */
    refused("exclude", "[{\"NCCL_ALGOS\": \"Ring\"}]"); /* not among vars */
    refused("requires", "{\"NCCL_ALGO\": \"quantum\"}");
    refused("varz", "{}"); /* an unknown key is a misspelling */
    refused("schema", "\"topotune/space/2\"");
    refused("collective", "\"all_gather\"");
    refused("backend", "\"cuda\"");
    refused("dtype", "\"float7\"");
}

/* Values of the set a launcher passes through unchanged, each once; a variable given twice is
 * ambiguous (refused, not last-one-wins); fixed values are set, never null. */
static void space_refuses_bad_values(void **state)
{
    (void)state;
    struct sweep_space s;
    const char *dup = "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_ALGO\": [\"Ring\"], "
                      "\"NCCL_ALGO\": [\"Tree\"]}}";
    assert_int_equal(sweep_space_load_buffer(&s, "dup.json", dup, strlen(dup)), UTIL_EINVAL);
    sweep_space_release(&s);
    refused("fixed", "{\"NCCL_DEBUG\": null}");
    refused("vars", "{\"NCCL_ALGO\": [\"Ring Tree\"]}");
    refused("vars", "{\"NCCL_ALGO\": [\"$(reboot)\"]}");
    refused("vars", "{\"NCCL_ALGO\": [\"Ring\", \"Ring\"]}");
    refused("vars", "{\"NCCL_ALGO\": [\"@hosts\"]}"); /* only @interfaces */
    refused("vars", "{\"NCCL_ALGO\": [1.5]}");
    refused("fixed", "{\"NCCL_DEBUG\": \"@interfaces\"}");
    assert_int_equal(load_with("vars", "{\"NCCL_SOCKET_IFNAME\": [null, \"@interfaces\", "
                                       "\"^docker0,lo\", \"=eth0\"], \"NCCL_NTHREADS\": [256]}"),
                     0);
}

/* Numbers within their documented ranges. */
static void space_refuses_numbers_out_of_range(void **state)
{
    (void)state;
    refused("repeat", "0");
    refused("repeat", "101");
    refused("repeat", "2.5");
    refused("iters", "\"20\"");
    refused("warmup", "-1");
    refused("timeout_s", "0.5");
    refused("cv_max", "1.5");
    refused("sizes", "{\"min\": \"0\"}");
    refused("sizes", "{\"max\": \"65G\"}"); /* two buffers of the largest per rank */
    refused("sizes", "{\"min\": \"1M\", \"max\": \"1K\"}");
    refused("sizes", "{\"factor\": 1}");
    refused("sizes", "{\"min\": \"1\", \"max\": \"1G\", \"factor\": 1.001}"); /* too many sizes */
    refused("sizes", "{\"min\": \"1\", \"max\": \"3\"}");                     /* no float fits */
    refused("objective", "{\"min\": \"1G\", \"max\": \"1M\"}");
    assert_int_equal(load_with("repeat", "100"), 0);
    assert_int_equal(load_with("cv_max", "0"), 0);
    assert_int_equal(load_with("sizes", "{\"max\": \"64G\", \"factor\": 1024}"), 0);
}

/* A loaded, pruned space from text (the caller releases it). */
static void space_of(struct sweep_space *s, const char *text, int nodes)
{
    assert_int_equal(sweep_space_load_buffer(s, "t.json", text, strlen(text)), 0);
    json_decref(sweep_space_prune(s, &h100, nodes));
}

static const char *env_of(json_t *configs, size_t i, const char *name)
{
    return json_string_value(
        json_object_get(json_object_get(json_array_get(configs, i), "env"), name));
}

/* Every combination once (null: unset), the all-unset baseline first, ids distinct. */
static void configs_product_baseline_first(void **state)
{
    (void)state;
    struct sweep_space s;
    space_of(&s, GOOD, 1);
    assert_true(sweep_space_count(&s) == 6);
    json_t *c = sweep_space_configs(&s);
    assert_int_equal(json_array_size(c), 6);
    assert_int_equal(json_object_size(json_object_get(json_array_get(c, 0), "env")), 0);
    for (size_t i = 0; i < 6; i++)
        for (size_t k = i + 1; k < 6; k++)
            assert_string_not_equal(json_string_value(json_object_get(json_array_get(c, i), "id")),
                                    json_string_value(json_object_get(json_array_get(c, k), "id")));
    assert_string_equal(env_of(c, 1, "NCCL_ALGO"), "Ring");
    assert_null(env_of(c, 1, "NCCL_PROTO"));
    json_decref(c);
    sweep_space_release(&s);
}

/* Lists without null still measure the defaults: the baseline is added, first. */
static void configs_baseline_added_without_null(void **state)
{
    (void)state;
    struct sweep_space s;
    space_of(&s,
             "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_ALGO\": [\"Ring\", \"Tree\"]}}",
             1);
    json_t *c = sweep_space_configs(&s);
    assert_int_equal(json_array_size(c), 3);
    assert_int_equal(json_object_size(json_object_get(json_array_get(c, 0), "env")), 0);
    json_decref(c);
    sweep_space_release(&s);
}

/* An exclude entry drops the configurations matching all of it (null: unset); never the baseline.
 */
static void configs_excludes_applied(void **state)
{
    (void)state;
    struct sweep_space s;
    space_of(
        &s,
        "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_ALGO\": [null, \"Ring\", "
        "\"Tree\"], \"NCCL_PROTO\": [null, \"LL128\"]}, \"exclude\": [{\"NCCL_ALGO\": \"Tree\", "
        "\"NCCL_PROTO\": \"LL128\"}, {\"NCCL_PROTO\": null}]}",
        1);
    json_t *c = sweep_space_configs(&s);
    /* left: the baseline, Ring+LL128, LL128 alone */
    assert_int_equal(json_array_size(c), 3);
    assert_int_equal(json_object_size(json_object_get(json_array_get(c, 0), "env")), 0);
    for (size_t i = 1; i < 3; i++) {
        assert_string_equal(env_of(c, i, "NCCL_PROTO"), "LL128");
        assert_true(!env_of(c, i, "NCCL_ALGO") || strcmp(env_of(c, i, "NCCL_ALGO"), "Tree"));
    }
    json_decref(c);
    sweep_space_release(&s);
}

/* A space larger than max_configs is refused before one configuration is built. */
static void configs_over_the_limit_refused(void **state)
{
    (void)state;
    struct sweep_space s;
    space_of(&s, GOOD, 1);
    s.max_configs = 5;
    assert_null(sweep_space_configs(&s));
    s.max_configs = 6;
    json_t *c = sweep_space_configs(&s);
    assert_int_equal(json_array_size(c), 6);
    json_decref(c);
    sweep_space_release(&s);
}

/* Ids are what --resume and gen match runs by: a hash of the sorted environment, 12 hex digits,
 * the same whatever the order of the variables, and the same across versions. */
static void config_id_stable(void **state)
{
    (void)state;
    char a[16], b[16], c[16], empty[16];
    json_t *x = json_pack("{s:s,s:s}", "NCCL_ALGO", "Ring", "NCCL_PROTO", "LL128");
    json_t *y = json_pack("{s:s,s:s}", "NCCL_PROTO", "LL128", "NCCL_ALGO", "Ring");
    json_t *z = json_pack("{s:s,s:s}", "NCCL_PROTO", "LL128", "NCCL_ALGO", "Tree");
    json_t *e = json_object();
    sweep_config_id(x, a), sweep_config_id(y, b), sweep_config_id(z, c), sweep_config_id(e, empty);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_int_equal(strlen(a), 12);
    assert_int_equal(strspn(a, "0123456789abcdef"), 12);
    /* pinned: a sweep made before a change must still resume, and gen still match its runs */
    assert_string_equal(a, "2c77f0dfe330");
    assert_string_equal(empty, "14650fb0739d"); /* the hash's starting value: nothing hashed */
    json_decref(x), json_decref(y), json_decref(z), json_decref(e);
}

/* A variable whose `requires` feature the node lacks is dropped, with the reason. */
static void prune_drops_what_the_node_lacks(void **state)
{
    (void)state;
    struct sweep_space s;
    const char *text = "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_NVLS_ENABLE\": [null, "
                       "\"0\"], \"FI_EFA_USE_DEVICE_RDMA\": [null, \"1\"], \"NCCL_CROSS_NIC\": "
                       "[null, \"1\"]}, \"requires\": {\"NCCL_NVLS_ENABLE\": \"nvswitch\", "
                       "\"FI_EFA_USE_DEVICE_RDMA\": \"efa\", \"NCCL_CROSS_NIC\": \"multinode\"}}";
    assert_int_equal(sweep_space_load_buffer(&s, "t.json", text, strlen(text)), 0);
    json_t *p = sweep_space_prune(&s, &h100, 1);
    assert_int_equal(json_array_size(p), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "var")),
                        "FI_EFA_USE_DEVICE_RDMA");
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "reason")),
                        "this node has no efa");
    assert_non_null(json_object_get(s.vars, "NCCL_NVLS_ENABLE"));
    assert_null(json_object_get(s.vars, "NCCL_CROSS_NIC"));
    json_decref(p);
    p = sweep_space_prune(&s, &h100, 2); /* two nodes: multinode applies */
    assert_int_equal(json_array_size(p), 1);
    assert_non_null(json_object_get(s.vars, "NCCL_CROSS_NIC"));
    json_decref(p);
    sweep_space_release(&s);
}

/* NCCL_IB_* tune NCCL's own IB transport: a Slingshot node (aws-ofi-nccl) drops them, keeps what
 * any RDMA network takes and what needs Slingshot; an InfiniBand node the reverse of the last. */
static void prune_verbs_and_cxi(void **state)
{
    (void)state;
    struct topo ss;
    topo_init(&ss);
    assert_int_equal(
        topo_load(&ss, TOPOTUNE_FIXTURES "/../../profiles/specs/gh200-4x-slingshot.json"), 0);
    const char *text =
        "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_IB_QPS_PER_CONNECTION\": [null, "
        "\"2\"], \"NCCL_NET_GDR_LEVEL\": [null, \"PHB\"], \"NCCL_PROTO\": [null, "
        "\"Simple\"]}, \"requires\": {\"NCCL_IB_QPS_PER_CONNECTION\": \"verbs\", "
        "\"NCCL_NET_GDR_LEVEL\": \"rdma\", \"NCCL_PROTO\": \"cxi\"}}";
    struct sweep_space s;
    assert_int_equal(sweep_space_load_buffer(&s, "t.json", text, strlen(text)), 0);
    json_t *p = sweep_space_prune(&s, &ss, 2);
    assert_int_equal(json_array_size(p), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "reason")),
                        "this node has no verbs");
    assert_null(json_object_get(s.vars, "NCCL_IB_QPS_PER_CONNECTION"));
    assert_non_null(json_object_get(s.vars, "NCCL_NET_GDR_LEVEL"));
    assert_non_null(json_object_get(s.vars, "NCCL_PROTO"));
    json_decref(p);
    sweep_space_release(&s);
    assert_int_equal(sweep_space_load_buffer(&s, "t.json", text, strlen(text)), 0);
    p = sweep_space_prune(&s, &h100, 2);
    assert_int_equal(json_array_size(p), 1);
    assert_non_null(json_object_get(s.vars, "NCCL_IB_QPS_PER_CONNECTION"));
    assert_null(json_object_get(s.vars, "NCCL_PROTO"));
    json_decref(p);
    sweep_space_release(&s);
    topo_release(&ss);
    /* an AWS p6-b200: two ConnectX-7 beside its EFA manage the NVSwitches; NCCL runs on the
     * plugin and never reads NCCL_IB_*, which were swept there */
    static const char p6[] =
        "{\"schema\": \"topotune/spec/1\", \"gpu\": \"B200-SXM-180GB\", \"count\": 8, \"fabric\": "
        "\"nvswitch\", \"nics\": [{\"model\": \"EFA-400G\", \"count\": 8, \"per\": \"gpu\"}, "
        "{\"model\": \"CX7-400G-IB\", \"count\": 2}]}";
    topo_init(&ss);
    assert_int_equal(topo_load_buffer(&ss, "p6.json", p6, strlen(p6)), 0);
    assert_int_equal(sweep_space_load_buffer(&s, "t.json", text, strlen(text)), 0);
    p = sweep_space_prune(&s, &ss, 2);
    assert_null(json_object_get(s.vars, "NCCL_IB_QPS_PER_CONNECTION"));
    assert_non_null(json_object_get(s.vars, "NCCL_NET_GDR_LEVEL"));
    json_decref(p);
    sweep_space_release(&s);
    topo_release(&ss);
}

/* A run's environment: the fixed variables (numbers in decimal) and the configuration's; the last
 * gate refuses what no space could have said. */
static void env_fixed_then_config_and_checked(void **state)
{
    (void)state;
    struct sweep_space s;
    space_of(&s,
             "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_ALGO\": [null, \"Ring\"]}, "
             "\"fixed\": {\"NCCL_BUFFSIZE\": 4194304, \"NCCL_DEBUG\": \"WARN\"}}",
             1);
    json_t *configs = sweep_space_configs(&s);
    json_t *env = sweep_space_env(&s, json_array_get(configs, 1));
    assert_string_equal(json_string_value(json_object_get(env, "NCCL_BUFFSIZE")), "4194304");
    assert_string_equal(json_string_value(json_object_get(env, "NCCL_DEBUG")), "WARN");
    assert_string_equal(json_string_value(json_object_get(env, "NCCL_ALGO")), "Ring");
    json_decref(env);
    assert_int_equal(sweep_configs_check(&s, configs), 0);
    json_t *bad = json_pack("[{s:s,s:{}},{s:s,s:{s:s}}]", "id", "b", "env", "id", "x", "env",
                            "NCCL_ALGO", "Ring;reboot");
    assert_int_equal(sweep_configs_check(&s, bad), UTIL_EINVAL);
    json_decref(bad);
    bad = json_pack("[{s:s,s:{s:s}}]", "id", "x", "env", "LD_PRELOAD", "x.so");
    assert_int_equal(sweep_configs_check(&s, bad), UTIL_EINVAL);
    json_decref(bad);
    json_decref(configs);
    sweep_space_release(&s);
}

/* The objective: the mean busbw of the sizes within [min, max], 0 when none is. */
static void objective_mean_within_range(void **state)
{
    (void)state;
    json_t *r = json_pack("{s:[{s:i,s:f},{s:i,s:f},{s:i,s:f}]}", "sizes", "size", 1024, "busbw",
                          1.0, "size", 1 << 20, "busbw", 100.0, "size", 1 << 30, "busbw", 300.0);
    assert_true(sweep_objective(r, 1 << 20, 1 << 30) == 200);
    assert_true(sweep_objective(r, 0, (size_t)-1) > 133.66 &&
                sweep_objective(r, 0, (size_t)-1) < 133.67);
    assert_true(sweep_objective(r, 2048, 4096) == 0);
    json_decref(r);
}

/* What gen and compare read from a sweep directory is checked field by field. */
static void result_check_refuses_what_no_sweep_writes(void **state)
{
    (void)state;
    const char *text = "{\"outcome\": \"ok\", \"class\": \"c\", \"final\": "
                       "true, \"env\": {\"NCCL_ALGO\": \"Ring\"}, \"hosts\": [\"h\"], "
                       "\"nodes\": 1, \"ranks\": 8, \"sizes\": [{\"size\": 8, \"busbw\": "
                       "1.5, \"algo\": \"RING\"}, {\"size\": 16, \"busbw\": 3, \"wrong\": 0}]}";
    /* its config_id is its env's: a line whose id names other variables is refused too */
    json_t *doc = json_loads(text, 0, NULL);
    char id[16];
    sweep_config_id(json_object_get(doc, "env"), id);
    json_object_set_new(doc, "config_id", json_string(id));
    char *good = json_dumps(doc, 0);
    json_decref(doc);
    const char *bad[][2] = {
        {"outcome", "\"fine\""},
        {"config_id", "\"../x\""},
        {"config_id", "\"a1\""},
        {"class", "\"..\""},
        {"final", "1"},
        {"env", "{\"LD_PRELOAD\": \"x\"}"},
        {"env", "{\"NCCL_ALGO\": \"a b\"}"},
        {"rung", "65"},
        {"stage", "\"init\\nnext\""},
        {"sizes", "[{\"size\": 8, \"busbw\": 2e9}]"},
        {"sizes", "[{\"size\": 8, \"busbw\": -1}]"},
        {"sizes", "[{\"size\": 8, \"busbw\": 1, \"algo\": \"a;b\"}]"},
        /* an ok run ran somewhere, its sizes in order (one twice is the bench's rounding), none
           wrong */
        {"nodes", "0"},
        {"hosts", "\"h\""},
        {"sizes", "[{\"size\": 16, \"busbw\": 1}, {\"size\": 8, \"busbw\": 9}]"},
        {"sizes", "[{\"size\": 8, \"busbw\": 1, \"wrong\": 3}]"},
        {"sizes", "[{\"size\": 0, \"busbw\": 500}]"}};
    json_t *r = json_loads(good, 0, NULL);
    assert_int_equal(sweep_result_check(r, "r.jsonl", 1), 0);
    /* two requested sizes that round to one part size: the bench gives it twice */
    json_object_set_new(r, "sizes",
                        json_loads("[{\"size\": 4, \"busbw\": 1}, {\"size\": 4, "
                                   "\"busbw\": 1}]",
                                   0, NULL));
    assert_int_equal(sweep_result_check(r, "r.jsonl", 1), 0);
    json_decref(r);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = json_loads(good, 0, NULL);
        json_object_set_new(r, bad[i][0], json_loads(bad[i][1], JSON_DECODE_ANY, NULL));
        if (sweep_result_check(r, "r.jsonl", 1) != UTIL_EINVAL)
            fail_msg("a result with %s: %s was not refused", bad[i][0], bad[i][1]);
        json_decref(r);
    }
    /* ok needs its start event's shape */
    const char *shape[] = {"hosts", "nodes", "ranks"};
    for (int i = 0; i < 3; i++) {
        r = json_loads(good, 0, NULL);
        json_object_del(r, shape[i]);
        if (sweep_result_check(r, "r.jsonl", 1) != UTIL_EINVAL)
            fail_msg("an ok result without %s was not refused", shape[i]);
        json_decref(r);
    }
    free(good);
}

/* A sweep of space text whose every run is on file: a plan that asks for a run not there would
 * start the (missing) benchmark, and sw.ran counts it. */
static void sweep_of(struct sweep *sw, const char *text)
{
    *sw = (struct sweep){.dir = tmpdir,
                         .backend = "mpi",
                         .launcher = "direct",
                         .np = 1,
                         .bench = "/nonexistent/topotune-bench",
                         .class_id = "c",
                         .timeout_s = 1};
    space_of(&sw->space, text, 1);
    sw->configs = sweep_space_configs(&sw->space);
    sw->repeat = sw->space.repeat;
    sw->results = json_array();
}

/* A run of configuration i on file: ok at busbw (1 MiB), or failed when busbw < 0. */
static void on_file(struct sweep *sw, size_t i, int rep, int rung, double busbw)
{
    json_t *c = json_array_get(sw->configs, i);
    json_array_append_new(sw->results,
                          json_pack("{s:O,s:i,s:i,s:b,s:s,s:[{s:i,s:f}]}", "config_id",
                                    json_object_get(c, "id"), "rep", rep, "rung", rung, "final",
                                    rung == 0, "outcome", busbw < 0 ? "timeout" : "ok", "sizes",
                                    "size", 1 << 20, "busbw", busbw));
}

static void sweep_done(struct sweep *sw)
{
    json_decref(sw->configs);
    json_decref(sw->results);
    sweep_space_release(&sw->space);
}

#define FIVE                                                                                       \
    "{\"schema\": \"topotune/space/1\", \"sizes\": {\"min\": \"1M\", \"max\": \"1M\"}, \"vars\": " \
    "{\"NCCL_ALGO\": [null, \"A1\", \"A2\", \"A3\", \"A4\"]}, \"iters\": 16, \"repeat\": 2}"

/* grid: every configuration `repeat` times at full effort, nothing else. */
static void grid_measures_each_config_repeat_times(void **state)
{
    (void)state;
    struct sweep sw;
    sweep_of(&sw, GOOD);
    for (size_t i = 0; i < 6; i++)
        for (int rep = 0; rep < 2; rep++)
            on_file(&sw, i, rep, 0, 100);
    assert_int_equal(sweep_run_grid(&sw), 0);
    assert_int_equal(sw.ran, 0);
    assert_int_equal(sw.total, 12);
    assert_int_equal(sw.done, 12);
    sweep_done(&sw);
}

/* halving, 5 configurations (3 rungs): the better half goes on, the baseline always with it;
 * rung 2 drops A2 (150), rung 3 keeps A1 and A3, and the survivors are measured twice. */
static void halving_keeps_the_better_half_and_the_baseline(void **state)
{
    (void)state;
    struct sweep sw;
    sweep_of(&sw, FIVE); /* 0: baseline, 1..4: A1..A4 */
    double rung1[] = {100, 400, 300, 200, 50}, rung2[] = {100, 400, 150, 350};
    for (size_t i = 0; i < 5; i++)
        on_file(&sw, i, 0, 1, rung1[i]);
    for (size_t i = 0; i < 4; i++) /* A4 dropped */
        on_file(&sw, i, 0, 2, rung2[i]);
    size_t last[] = {0, 1, 3}; /* A2 dropped */
    double rung3[] = {100, 400, 350};
    for (size_t k = 0; k < 3; k++) {
        on_file(&sw, last[k], 0, 3, rung3[k]);
        for (int rep = 0; rep < 2; rep++)
            on_file(&sw, last[k], rep, 0, 100);
    }
    assert_int_equal(sweep_run_halving(&sw), 0);
    assert_int_equal(sw.ran, 0);
    assert_int_equal(sw.done, 5 + 4 + 3 + 6);
    assert_int_equal(sw.total, sw.done);
    sweep_done(&sw);
}

/* A configuration that failed a rung drops out, even with room left in the better half. */
static void halving_drops_failed_runs(void **state)
{
    (void)state;
    struct sweep sw;
    sweep_of(&sw, FIVE);
    double rung1[] = {100, 400, -1, -1, -1};
    for (size_t i = 0; i < 5; i++)
        on_file(&sw, i, 0, 1, rung1[i]);
    for (size_t i = 0; i < 2; i++) /* the baseline and A1: two left, the rungs end */
        for (int rep = 0; rep < 2; rep++)
            on_file(&sw, i, rep, 0, 100);
    assert_int_equal(sweep_run_halving(&sw), 0);
    assert_int_equal(sw.ran, 0);
    assert_int_equal(sw.done, 5 + 4);
    sweep_done(&sw);
}

/* A workload's grid reaches its largest size as the run rounds it: whole floats, or every
 * rank's 16-byte part (2200 B of all_gather on 72 ranks runs 1152 B: one doubling more). */
static void workload_grid_reaches_the_size_as_run(void **state)
{
    (void)state;
    size_t max = 2200;
    sweep_workload_grid(2200, &max, 16 * 72);
    assert_int_equal(max, 4400); /* 4400 runs 3456 >= 2200 */
    max = 4194304;
    sweep_workload_grid(4194304, &max, 4);
    assert_int_equal(max, 4194304); /* whole floats: the size itself */
    max = 3000000;
    sweep_workload_grid(1048576, &max, 4);
    assert_int_equal(max, 4194304);
}

/* The time of line alone at size: the mean over one ok run holding it. */
static double time_at(json_t *line, size_t size)
{
    json_t *views = json_pack("[{s:s,s:{s:O}}]", "outcome", "ok", "parts", "all_reduce", line);
    struct sweep_times *t = sweep_times_of(views);
    double x = sweep_times_mean(t, "all_reduce", size);
    sweep_times_free(t);
    json_decref(views);
    return x;
}

/* A line's time at any size: the first measurement of a size, the smallest's below every size,
 * growing with the bytes above the largest, log-log between; the mean over ok runs only. */
static void time_at_sizes(void **state)
{
    (void)state;
    json_t *line = json_loads("{\"sizes\": [{\"size\": 4096, \"time_us\": 40}, "
                              "{\"size\": 1024, \"time_us\": 10}, {\"size\": 2048, \"time_us\": "
                              "20}, {\"size\": 2048, \"time_us\": 99}, {\"size\": 8192, "
                              "\"time_us\": 0}]}",
                              0, NULL);
    assert_float_equal(time_at(line, 512), 10, 1e-9);
    assert_float_equal(time_at(line, 1024), 10, 1e-9);
    assert_float_equal(time_at(line, 2048), 20, 1e-9);
    assert_float_equal(time_at(line, 2896), 20 * pow(2, log(2896.0 / 2048) / log(2)), 1e-6);
    assert_float_equal(time_at(line, 16384), 160, 1e-9);
    json_t *views =
        json_pack("[{s:s,s:{s:O}},{s:s,s:{s:{s:[{s:i,s:f}]}}},{s:s,s:{}}]", "outcome", "ok",
                  "parts", "all_reduce", line, "outcome", "ok", "parts", "all_reduce", "sizes",
                  "size", 1024, "time_us", 30.0, "outcome", "error", "parts");
    struct sweep_times *t = sweep_times_of(views);
    assert_float_equal(sweep_times_mean(t, "all_reduce", 1024), 20, 1e-9);
    assert_float_equal(sweep_times_mean(t, "all_gather", 1024), -1, 1e-9);
    sweep_times_free(t);
    json_decref(views);
    json_decref(line);
}

/* The NCCL variables every run inherits: the environment's, and where NCCL runs here (the nccl
 * backend) its configuration files' too; not the fixed, debug or device ones. */
static void inherited_variables_named(void **state)
{
    (void)state;
    struct sweep_space s;
    const char *text = "{\"schema\": \"topotune/space/1\", \"vars\": {\"NCCL_ALGO\": [null, "
                       "\"Ring\"]}, \"fixed\": {\"NCCL_MAX_NCHANNELS\": \"8\"}}";
    assert_int_equal(sweep_space_load_buffer(&s, "t.json", text, strlen(text)), 0);
    char conf[128];
    snprintf(conf, sizeof(conf), "%s/site.conf", tmpdir);
    const char *lines = "NCCL_PROTO=Simple\nNCCL_MAX_NCHANNELS=4\nNCCL_IB_HCA=mlx5_0\n";
    assert_int_equal(util_file_write_atomic(conf, lines, strlen(lines)), 0);
    setenv("NCCL_CONF_FILE", conf, 1);
    setenv("NCCL_ALGO", "Tree", 1);
    setenv("NCCL_DEBUG", "INFO", 1);
    json_t *nccl = sweep_space_inherited(&s, "nccl"), *sim = sweep_space_inherited(&s, "sim"),
           *mpi = sweep_space_inherited(&s, "mpi");
    char *nccl_text = sweep_inherited_text(nccl), *sim_text = sweep_inherited_text(sim), want[256];
    snprintf(want, sizeof(want), "NCCL_ALGO=Tree, NCCL_PROTO=Simple (%s)", conf);
    assert_non_null(nccl_text);
    assert_string_equal(nccl_text, want);
    /* as sweep.json records it */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(nccl, "NCCL_PROTO"), "from")), conf);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(nccl, "NCCL_ALGO"), "from")),
        "environment");
    assert_string_equal(sim_text, "NCCL_ALGO=Tree"); /* another machine's NCCL: not this host's */
    assert_int_equal(json_object_size(mpi), 0);
    assert_null(sweep_inherited_text(mpi));
    free(nccl_text);
    free(sim_text);
    json_decref(nccl);
    json_decref(sim);
    json_decref(mpi);
    unsetenv("NCCL_ALGO");
    unsetenv("NCCL_DEBUG");
    unsetenv("NCCL_CONF_FILE");
    sweep_space_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(space_good_takes_defaults),
        cmocka_unit_test(inherited_variables_named),
        cmocka_unit_test(space_refuses_unknown_variables),
        cmocka_unit_test(space_refuses_bad_values),
        cmocka_unit_test(space_refuses_numbers_out_of_range),
        cmocka_unit_test(configs_product_baseline_first),
        cmocka_unit_test(configs_baseline_added_without_null),
        cmocka_unit_test(configs_excludes_applied),
        cmocka_unit_test(configs_over_the_limit_refused),
        cmocka_unit_test(config_id_stable),
        cmocka_unit_test(workload_grid_reaches_the_size_as_run),
        cmocka_unit_test(time_at_sizes),
        cmocka_unit_test(prune_drops_what_the_node_lacks),
        cmocka_unit_test(prune_verbs_and_cxi),
        cmocka_unit_test(env_fixed_then_config_and_checked),
        cmocka_unit_test(objective_mean_within_range),
        cmocka_unit_test(result_check_refuses_what_no_sweep_writes),
        cmocka_unit_test(grid_measures_each_config_repeat_times),
        cmocka_unit_test(halving_keeps_the_better_half_and_the_baseline),
        cmocka_unit_test(halving_drops_failed_runs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
